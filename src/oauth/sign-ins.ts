// The person's part of an upstream's OAuth sign-in, on the main thread: start
// one (the actor makes the link), take the browser's return at /oauth/callback
// and hand the code to the actor that started it, and tell a waiting CLI or UI
// how it ended. The state parameter names one attempt of one server: it works
// once, and only until it expires. Nothing here holds a token.
import type { AuditActor } from '../protocol/db.js';
import { CofferError, type ErrorBody } from '../protocol/errors.js';
import type { OAuthAction, OAuthOutcome } from '../protocol/oauth.js';
import { sanitiseText } from '../protocol/untrusted-text.js';

export type SignInStatus =
  | { status: 'none' }
  | { status: 'pending'; url: string; expires_at: string }
  | { status: 'signed_in'; at: string }
  | { status: 'failed'; error: ErrorBody };

/** An OAuth error code is a short ASCII word (RFC 6749 §4.1.2.1): more of what a link brings is not shown. */
const MAX_REFUSAL_CHARS = 256;

export interface SignInActors {
  /** null: no running actor by that name. */
  oauth(server: string, action: OAuthAction): Promise<OAuthOutcome> | null;
}

/** What the callback page says; `ok` picks its wording only. */
export interface CallbackPage {
  status: number;
  ok: boolean;
  message: string;
}

/** What the sign-ins ask of the registered servers. */
export interface SignInServers {
  /** The URL the server signs in for now (null: no such server, or none over HTTP): an outcome for another URL is stale. */
  urlOf(server: string): string | null;
  /** When the tokens stored for the server were obtained (null: none held), for a server no sign-in of this run concerns. */
  storedAt(server: string): Promise<string | null>;
}

interface Attempt {
  server: string;
  expiresAt: number;
}

/** How a sign-in of this run ended or stands, and the URL it was for. */
interface Outcome {
  status: SignInStatus;
  url: string | null;
}

export class SignIns {
  private readonly attempts = new Map<string, Attempt>();
  private readonly outcomes = new Map<string, Outcome>();

  constructor(
    private readonly actors: SignInActors,
    /** The daemon's callback URL (known once it listens). */
    private readonly redirectUrl: () => string,
    /** Audited without anything secret. */
    private readonly audit: (actor: AuditActor, event: 'oauth_signed_in' | 'oauth_signed_out', server: string) => void,
    private readonly servers: SignInServers,
  ) {}

  async start(server: string): Promise<SignInStatus> {
    const outcome = await this.ask(server, { type: 'begin', redirectUrl: this.redirectUrl() });
    if (!outcome.ok) throw new CofferError(outcome.error.code, outcome.error.message);
    this.prune();
    if (outcome.authorized) return this.settle(server, { status: 'signed_in', at: new Date().toISOString() });
    this.attempts.set(outcome.state, { server, expiresAt: outcome.expiresAt });
    return this.remember(server, { status: 'pending', url: outcome.url, expires_at: new Date(outcome.expiresAt).toISOString() });
  }

  async status(server: string): Promise<SignInStatus> {
    const known = this.known(server);
    if (known?.status === 'pending' && Date.parse(known.expires_at) < Date.now()) {
      return { status: 'failed', error: { code: 'UPSTREAM_AUTH_REQUIRED', message: `the sign-in link expired: run 'coffer mcp auth ${server}' again` } };
    }
    if (known) return known;
    // Signed in before this run (the tokens are sealed in the DB): the UI offers Sign out on that.
    const at = await this.servers.storedAt(server);
    return at === null ? { status: 'none' } : { status: 'signed_in', at };
  }

  async logout(server: string, actor: AuditActor): Promise<void> {
    const outcome = await this.ask(server, { type: 'logout' });
    if (!outcome.ok) throw new CofferError(outcome.error.code, outcome.error.message);
    this.forget(server);
    this.audit(actor, 'oauth_signed_out', server);
  }

  /** Drops what this run knew of the server's sign-ins: signed out, or removed with its tokens (one added again under the name starts afresh). */
  forget(server: string): void {
    for (const [state, attempt] of this.attempts) if (attempt.server === server) this.attempts.delete(state);
    this.outcomes.delete(server);
  }

  /** The browser's return from the authorization server. */
  async callback(query: URLSearchParams): Promise<CallbackPage> {
    const state = query.get('state') ?? '';
    const attempt = this.attempts.get(state);
    this.attempts.delete(state);
    if (!attempt || attempt.expiresAt < Date.now()) {
      return { status: 400, ok: false, message: 'This sign-in link is unknown, already used or expired. Start again with coffer mcp auth NAME.' };
    }
    const { server } = attempt;
    const refusal = query.get('error');
    const code = query.get('code');
    if (refusal !== null || code === null) {
      // The browser brings the error code back in the link: anyone's text, so bounded and its controls made visible.
      const reason = refusal === null ? 'the answer carried no code' : `the authorization server answered ${sanitiseText(refusal, MAX_REFUSAL_CHARS)}`;
      this.settle(server, { status: 'failed', error: { code: 'UPSTREAM_AUTH_REQUIRED', message: `sign-in to ${server} failed: ${reason}` } });
      return { status: 400, ok: false, message: `Sign-in to ${server} failed: ${reason}.` };
    }
    const outcome = await this.ask(server, { type: 'complete', state, code, iss: query.get('iss') }).catch((error: unknown): OAuthOutcome => {
      // Disabled or removed since the link was made: the person and the waiting CLI or UI hear that, not an internal error.
      if (error instanceof CofferError) return { ok: false, error: error.toBody() };
      throw error;
    });
    if (!outcome.ok) {
      this.settle(server, { status: 'failed', error: outcome.error });
      return { status: 400, ok: false, message: outcome.error.message };
    }
    this.settle(server, { status: 'signed_in', at: new Date().toISOString() });
    return { status: 200, ok: true, message: `Signed in to ${server}. You can close this tab.` };
  }

  private settle(server: string, status: SignInStatus): SignInStatus {
    if (status.status === 'signed_in') this.audit('system', 'oauth_signed_in', server);
    return this.remember(server, status);
  }

  private remember(server: string, status: SignInStatus): SignInStatus {
    this.outcomes.set(server, { status, url: this.servers.urlOf(server) });
    return status;
  }

  /** This run's outcome for the server, unless its URL changed since (the tokens and links of the old one are gone). */
  private known(server: string): SignInStatus | undefined {
    const known = this.outcomes.get(server);
    if (known?.url === this.servers.urlOf(server)) return known.status;
    this.outcomes.delete(server);
    return undefined;
  }

  private async ask(server: string, action: OAuthAction): Promise<OAuthOutcome> {
    const answer = this.actors.oauth(server, action);
    if (answer === null) throw new CofferError('RESOURCE_NOT_FOUND', `no running server named "${server}" (unknown or disabled): see 'coffer mcp list'`, { server });
    return answer;
  }

  private prune(): void {
    const now = Date.now();
    for (const [state, attempt] of this.attempts) if (attempt.expiresAt < now) this.attempts.delete(state);
  }
}
