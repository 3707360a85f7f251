// What the actor and the main thread exchange about an upstream's OAuth
// sign-in. The record holds secrets (tokens, a client secret): it crosses
// threads in memory and reaches disk only sealed (workers/db-writer/oauth-tokens.ts);
// it never goes into a log, an event for clients, an audit entry or a REST answer.
import type { ErrorBody } from './errors.js';
import type { HttpTransportConfig, SseTransportConfig, TransportConfig } from './server-config.js';

/** One upstream's OAuth state, bound to the resource it was obtained for. */
export interface OAuthRecord {
  /** The upstream URL the tokens were issued for: another URL never gets them. */
  resource: string;
  /** The client registration (the SDK stamps it with its authorization server's `issuer`). */
  client?: Record<string, unknown> & { client_id: string };
  /** The authorization server that first accepted the configured client: its secret or key goes to no other. */
  configuredClient?: { client_id: string; issuer: string };
  /** The token response (stamped with `issuer`). */
  tokens?: Record<string, unknown> & { access_token: string; refresh_token?: string };
  /** When the access token was obtained and when it expires (epoch ms), if the server said. */
  obtainedAt?: number;
  expiresAt?: number;
  /** The scopes the last sign-in asked for (a step-up's wider ones too), kept so a restart asks for them again. */
  scope?: string;
  /** The SDK's discovery state (protected resource and authorization server metadata). */
  discovery?: Record<string, unknown>;
}

/** What the main thread asks the actor. `redirectUrl`: the daemon's /oauth/callback. */
export type OAuthAction =
  | { type: 'begin'; redirectUrl: string }
  | { type: 'complete'; state: string; code: string; iss: string | null }
  | { type: 'logout' };

export type OAuthOutcome =
  /** Signed in (or no person needed: a refresh or a machine grant did it). */
  | { ok: true; authorized: true }
  /** A person must open `url`; the attempt answers to `state` until `expiresAt`. */
  | { ok: true; authorized: false; url: string; state: string; expiresAt: number }
  | { ok: false; error: ErrorBody };

/** The command that signs a server in, for messages. */
export function signInCommand(server: string): string {
  return `coffer mcp auth ${server}`;
}

/**
 * HTTP and SSE upstreams sign in with OAuth when they ask for it, unless the
 * config already sends an Authorization header of its own (that one wins).
 */
export function signsInWithOAuth(transport: TransportConfig): transport is HttpTransportConfig | SseTransportConfig {
  return transport.type !== 'stdio' && !Object.keys(transport.headers).some((name) => name.toLowerCase() === 'authorization');
}

/** The stored access token, if it was issued for `url` and has not expired (a test connection cannot refresh it). */
export function usableAccessToken(record: OAuthRecord | null, url: string, now: number): string | null {
  if (!record || record.resource !== url || !record.tokens?.access_token) return null;
  return record.expiresAt !== undefined && record.expiresAt <= now ? null : record.tokens.access_token;
}
