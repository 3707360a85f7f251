// OAuth for one HTTP/SSE upstream, in the actor that owns its connections: the
// HttpAuth hook of its transports (a bearer token on each request, refreshed
// before it expires and once on a 401), and the sign-in steps the main thread
// asks for (begin: the link for a person; complete: the code the daemon's
// callback received; logout). The protocol itself — discovery (RFC 9728, RFC
// 8414 and OpenID with the spec's fallbacks), registration, PKCE, resource
// indicators, scope selection, token requests and their client authentication —
// is the official SDK's auth(); this module decides when to run it and keeps
// its results bound to one upstream URL.
import { messageOf } from '../../../src/protocol/errors.js';
import { signInCommand, type OAuthAction, type OAuthOutcome, type OAuthRecord } from '../../../src/protocol/oauth.js';
import { sanitiseText } from '../../../src/protocol/untrusted-text.js';
import { REDACTED } from '../../../src/registry/secret-args.js';
import { isBearerChallenge, type HttpAuth, type Refusal } from '../http-auth.js';
import type { ActorLog } from '../log.js';
import { answerError, AUTH_FETCH_LIMITS, boundedFetch, type AuthFetchLimits } from './bounded-fetch.js';
import { RecordProvider, type OAuthClientConfig } from './provider.js';
import { authSdk } from './sdk.js';

/** How long a sign-in link (its state and PKCE verifier) stays usable. */
export const SIGN_IN_TTL_MS = 10 * 60_000;
/** A token is refreshed when this share of its lifetime is left (at most REFRESH_EARLY_MAX_MS before it expires). */
const REFRESH_AT_LIFETIME_LEFT = 1 / 3;
const REFRESH_EARLY_MAX_MS = 60_000;
/** The most scope, in characters, the challenges of one upstream may ask for in all. */
const MAX_SCOPE_CHARS = 4_096;
/** How much of a challenge's scope a call's error shows. */
const MAX_SCOPE_SHOWN = 256;
/** After a refresh that failed, a refresh the timer or a request (not a refusal) would start waits this long. */
const REFRESH_RETRY_MS = 30_000;
/** setTimeout's longest delay: Node fires a longer one at once, so a far refresh is waited for in steps. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Scopes asked for so far, and the ones just challenged: a sign-in again never loses what a step-up added. */
function unionScope(held: string | undefined, asked: string | undefined): string | undefined {
  const scopes = new Set([...(held?.split(' ') ?? []), ...(asked?.split(' ') ?? [])].filter(Boolean));
  return scopes.size > 0 ? [...scopes].join(' ') : undefined;
}

/** `text` with each of `secrets` in it replaced. */
function redacted(text: string, secrets: string[]): string {
  return secrets.reduce((message, secret) => (secret === '' ? message : message.replaceAll(secret, REDACTED)), text);
}

interface Attempt {
  verifier: string;
  redirect: string;
  expiresAt: number;
  /** The authorization server's issuer, and whether it promised `iss` in its answer (RFC 9207). */
  issuer: string | undefined;
  issRequired: boolean;
}

export interface UpstreamAuthHooks {
  /** The record changed (null: forgotten): store it sealed. */
  save(record: OAuthRecord | null): void;
  /** Signed in: a connection waiting for it may connect now. */
  signedIn(): void;
  /** Signed out: the connections holding the old token end. */
  signedOut(): void;
}

export class UpstreamAuth implements HttpAuth {
  private readonly provider: RecordProvider;
  private need: string | null = null;
  /** The scopes the upstream's challenges asked for (step-up adds to them), from the record's at first. */
  private scope: string | undefined;
  private resourceMetadataUrl: URL | undefined;
  private refreshing: Promise<boolean> | null = null;
  /**
   * The SDK's auth() of a sign-in step while it runs. It and a refresh's auth() share the
   * provider (a sign-in hides the tokens, holds its verifier), so one waits for the other.
   */
  private signingIn: Promise<unknown> | null = null;
  private refreshTimer: NodeJS.Timeout | undefined;
  /** Before this (epoch ms), after a failed refresh, only a refusal starts another: a failing server is not asked in a loop. */
  private retryAt = 0;
  private readonly attempts = new Map<string, Attempt>();
  /** The last sign-in step asked for: the next one starts after it (see act). */
  private steps: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly server: string,
    private readonly url: string,
    configured: OAuthClientConfig,
    stored: OAuthRecord | null,
    private readonly log: ActorLog,
    private readonly hooks: UpstreamAuthHooks,
    private readonly limits: AuthFetchLimits = AUTH_FETCH_LIMITS,
  ) {
    // A record for another URL is dropped: a token is never sent to a host it was not issued for.
    const kept = stored?.resource === url ? stored : null;
    if (stored && !kept) hooks.save(null);
    this.provider = new RecordProvider(kept ?? { resource: url }, () => this.hooks.save(this.provider.record), configured, (message) => log.note(message));
    this.scope = kept?.scope;
    this.scheduleRefresh();
  }

  signInNeeded(): string | null {
    return this.need;
  }

  async headers(): Promise<Record<string, string>> {
    const record = this.provider.record;
    const due = Date.now() >= this.retryAt && (record.tokens ? record.expiresAt !== undefined && Date.now() >= this.refreshAt(record) : this.provider.machine && this.need === null);
    if (due) await this.refresh();
    const token = this.provider.record.tokens?.access_token;
    return token ? { authorization: `Bearer ${token}` } : {};
  }

  async refused(status: number, challenge: string | undefined, sent: string | undefined, retried: boolean): Promise<Refusal> {
    if (!isBearerChallenge(challenge)) return null;
    const { extractWWWAuthenticateParams } = await authSdk(this.log);
    const params = extractWWWAuthenticateParams(new Response(null, { headers: { 'www-authenticate': challenge } }));
    if (params.resourceMetadataUrl) this.resourceMetadataUrl = params.resourceMetadataUrl;
    if (status === 403 && params.error !== 'insufficient_scope') return null;
    // Held for the actor's life, kept in the record and put in every link: challenges do not grow it without end.
    const widened = unionScope(this.scope, params.scope);
    const fits = (widened?.length ?? 0) <= MAX_SCOPE_CHARS;
    if (fits) this.scope = widened;
    if (status === 403) {
      // This call fails; the connection, and the calls the token allows, go on.
      if (!fits) return { signIn: `upstream ${this.server} asks for scopes past ${MAX_SCOPE_CHARS} characters in all: they are not asked for; ask the server's operator` };
      // The upstream's words in a call's error: bounded, controls visible.
      const asked = params.scope ? ` (scope "${sanitiseText(params.scope, MAX_SCOPE_SHOWN)}")` : '';
      return { signIn: `upstream ${this.server} needs a wider permission${asked}: sign in again with '${signInCommand(this.server)}'` };
    }
    // A request is retried once: refused again, a person must sign in.
    if (!retried) {
      const current = this.bearer();
      // Another request already got a new token since this one was sent: just retry with it.
      if (current !== null && sent !== current) return 'retry';
      // Discovered afresh: a resource that moved to another authorization server is signed in there
      // (the SDK drops a refresh token issued by the old one) instead of refreshing where it was.
      this.provider.invalidateCredentials('discovery');
      if (this.renewable() && (await this.refresh())) return 'retry';
    }
    this.need = `upstream ${this.server} needs a sign-in: run '${signInCommand(this.server)}'`;
    return { signIn: this.need };
  }

  /**
   * One sign-in step asked for by the main thread. Steps run one at a time: a step keeps its
   * link's state, redirect and PKCE verifier on the shared provider across its awaits, so two
   * sign-ins begun at once would each leave the other a link that cannot complete.
   */
  act(action: OAuthAction): Promise<OAuthOutcome> {
    const step = this.steps.then(() => this.step(action));
    this.steps = step;
    return step;
  }

  private async step(action: OAuthAction): Promise<OAuthOutcome> {
    try {
      switch (action.type) {
        case 'begin':
          return await this.begin(action.redirectUrl);
        case 'complete':
          return await this.complete(action.state, action.code, action.iss);
        case 'logout':
          this.logout();
          return { ok: true, authorized: true };
      }
    } catch (error) {
      return { ok: false, error: { code: 'UPSTREAM_AUTH_REQUIRED', message: `sign-in to ${this.server} failed: ${this.described(error)}` } };
    }
  }

  close(): void {
    clearTimeout(this.refreshTimer);
  }

  /**
   * A failure in words for an answer or a log. The SDK's message quotes the authorization
   * server (its error_description, or a body it could not read): bounded, controls visible,
   * and without a secret of this upstream's that the server may have quoted back.
   */
  private described(error: unknown): string {
    return sanitiseText(redacted(messageOf(error), this.provider.secrets()));
  }

  private bearer(): string | null {
    const token = this.provider.record.tokens?.access_token;
    return token ? `Bearer ${token}` : null;
  }

  private async begin(redirect: string): Promise<OAuthOutcome> {
    const provider = this.provider;
    if (provider.machine) {
      if (!(await this.refresh())) throw new Error(`the token endpoint gave no token for the client credentials (see the server's log)`);
      return this.authorized();
    }
    const client = provider.record.client;
    // A registration for another callback (the daemon moved ports) cannot receive this sign-in: register again.
    if (client && Array.isArray(client.redirect_uris) && !client.redirect_uris.includes(redirect)) provider.invalidateCredentials('client');
    // A fresh discovery: the upstream may have moved to another authorization server.
    provider.invalidateCredentials('discovery');
    // node:crypto is loaded here: an actor that never signs in does without it.
    const state = (await import('node:crypto')).randomBytes(24).toString('base64url');
    const result = await this.withProvider(async () => {
      Object.assign(provider, { redirect, nextState: state, hideTokens: true, authorizationUrl: undefined, verifier: undefined });
      try {
        return await this.runAuth();
      } finally {
        provider.hideTokens = false;
      }
    });
    if (result === 'AUTHORIZED') return this.authorized();
    if (!provider.authorizationUrl || !provider.verifier) throw new Error('the SDK asked for a redirect without a link');
    const metadata = (provider.record.discovery?.authorizationServerMetadata ?? {}) as { issuer?: string; authorization_response_iss_parameter_supported?: boolean };
    const now = Date.now();
    // A link never followed is forgotten once it expires: they do not pile up for the actor's life.
    for (const [held, attempt] of this.attempts) if (attempt.expiresAt < now) this.attempts.delete(held);
    const expiresAt = now + SIGN_IN_TTL_MS;
    this.attempts.set(state, { verifier: provider.verifier, redirect, expiresAt, issuer: metadata.issuer, issRequired: metadata.authorization_response_iss_parameter_supported === true });
    provider.verifier = undefined;
    return { ok: true, authorized: false, url: provider.authorizationUrl.href, state, expiresAt };
  }

  private async complete(state: string, code: string, iss: string | null): Promise<OAuthOutcome> {
    const attempt = this.attempts.get(state);
    // Single use: whatever happens next, this link is spent.
    this.attempts.delete(state);
    if (!attempt || attempt.expiresAt < Date.now()) throw new Error(`this sign-in link is unknown, spent or expired: run '${signInCommand(this.server)}' again`);
    // RFC 9207: an answer that names another authorization server (or none, when it promised to) is a
    // mix-up; §2.4 compares by simple string comparison, so a trailing slash is another issuer.
    if (iss !== null ? iss !== attempt.issuer : attempt.issRequired) {
      throw new Error(`the authorization answer came from issuer ${iss ?? '(none)'}, expected ${attempt.issuer ?? '(unknown)'}: refused (RFC 9207)`);
    }
    await this.withProvider(async () => {
      Object.assign(this.provider, { redirect: attempt.redirect, verifier: attempt.verifier });
      try {
        await this.runAuth(code);
      } catch (error) {
        // The token endpoint may quote back the code and the verifier it was sent; they are this link's alone.
        throw new Error(redacted(messageOf(error), [code, attempt.verifier]));
      } finally {
        this.provider.verifier = undefined;
      }
    });
    return this.authorized();
  }

  /** One run of the SDK's auth() for this upstream (with the code a person brought back, if any), bounded by the limits. */
  private async runAuth(authorizationCode?: string, fetchFn = boundedFetch(this.limits)): Promise<'AUTHORIZED' | 'REDIRECT'> {
    const { auth } = await authSdk(this.log);
    try {
      return await auth(this.provider, { serverUrl: this.url, authorizationCode, scope: this.scope, resourceMetadataUrl: this.resourceMetadataUrl, fetchFn });
    } catch (error) {
      throw answerError(error, fetchFn);
    }
  }

  /** Runs a sign-in step's use of the provider once no refresh is using it; refreshes begun meanwhile wait for it. */
  private async withProvider<T>(use: () => Promise<T>): Promise<T> {
    while (this.refreshing) await this.refreshing;
    const running = use();
    this.signingIn = running;
    try {
      return await running;
    } finally {
      this.signingIn = null;
    }
  }

  private authorized(): OAuthOutcome {
    this.need = null;
    // The scopes this grant was asked for stay with the sealed record: a sign-in after a restart asks for them all again.
    if (this.scope !== this.provider.record.scope) {
      this.provider.record.scope = this.scope;
      this.hooks.save(this.provider.record);
    }
    this.log.note('signed in');
    this.scheduleRefresh();
    this.hooks.signedIn();
    return { ok: true, authorized: true };
  }

  private logout(): void {
    clearTimeout(this.refreshTimer);
    // Where the configured client belongs outlives the tokens: a later sign-in never shows it to another server.
    const { configuredClient } = this.provider.record;
    this.provider.record = { resource: this.url, ...(configuredClient ? { configuredClient } : {}) };
    this.scope = undefined;
    this.attempts.clear();
    this.need = `upstream ${this.server} was signed out: run '${signInCommand(this.server)}'`;
    this.hooks.save(configuredClient ? this.provider.record : null);
    this.hooks.signedOut();
  }

  private refreshAt(record: OAuthRecord): number {
    const lifetime = record.expiresAt! - (record.obtainedAt ?? record.expiresAt!);
    return record.expiresAt! - Math.min(REFRESH_EARLY_MAX_MS, lifetime * REFRESH_AT_LIFETIME_LEFT);
  }

  /** Refreshes before the token expires, without a person; a failure leaves it to the next 401. */
  private scheduleRefresh(): void {
    clearTimeout(this.refreshTimer);
    const record = this.provider.record;
    if (!this.renewable() || record.expiresAt === undefined) return;
    const wait = Math.max(this.refreshAt(record), this.retryAt) - Date.now();
    this.refreshTimer = setTimeout(() => void (wait > MAX_TIMER_MS ? this.scheduleRefresh() : this.refresh()), Math.min(MAX_TIMER_MS, Math.max(0, wait)));
    this.refreshTimer.unref();
  }

  /** A refresh token, or client credentials: a new token needs no person. */
  private renewable(): boolean {
    return this.provider.machine || this.provider.record.tokens?.refresh_token !== undefined;
  }

  /** One refresh (or machine grant) at a time; true when a new access token came. */
  private refresh(): Promise<boolean> {
    this.refreshing ??= this.runRefresh().finally(() => (this.refreshing = null));
    return this.refreshing;
  }

  private async runRefresh(): Promise<boolean> {
    while (this.signingIn) await this.signingIn.catch(() => undefined);
    if (!this.renewable()) return false;
    const before = this.provider.record.tokens?.access_token;
    // auth() reads a missing redirect URL as a machine grant: keep the registered one (a sign-in it may
    // start when the refresh token is refused goes nowhere; the next 401 asks a person).
    const registered = this.provider.record.client?.redirect_uris;
    this.provider.redirect ??= Array.isArray(registered) && typeof registered[0] === 'string' ? registered[0] : 'http://127.0.0.1/oauth/callback';
    let failure: string | null = null;
    const fetchFn = boundedFetch(this.limits);
    try {
      const result = await this.runAuth(undefined, fetchFn);
      const renewed = result === 'AUTHORIZED' && this.provider.record.tokens?.access_token !== undefined && this.provider.record.tokens.access_token !== before;
      if (renewed) this.log.note('access token refreshed');
      // The SDK keeps to itself why (a server error, an answer it could not use) and would begin a sign-in: the refusal it got says.
      else failure = fetchFn.lastRefusal === undefined ? 'the authorization server did not renew it' : this.described(fetchFn.lastRefusal);
      return renewed;
    } catch (error) {
      failure = this.described(error);
      return false;
    } finally {
      this.retryAt = failure === null ? 0 : Date.now() + REFRESH_RETRY_MS;
      if (failure !== null) this.log.note(`token refresh failed: ${failure}; tried again in ${REFRESH_RETRY_MS / 1000} s or when the upstream refuses the token`);
      this.scheduleRefresh();
    }
  }
}
