// The person's part of an upstream's OAuth sign-in, on the main thread: start
// one (the actor makes the link), take the browser's return at /oauth/callback
// and hand the code to the actor that started it, and tell a waiting CLI or UI
// how it ended. The state parameter names one attempt of one server: it works
// once, and only until it expires. Nothing here holds a token.
import type { AuditActor } from '../protocol/db.js';
import { CofferError, type ErrorBody } from '../protocol/errors.js';
import type { OAuthAction, OAuthOutcome } from '../protocol/oauth.js';

export type SignInStatus =
  | { status: 'none' }
  | { status: 'pending'; url: string; expires_at: string }
  | { status: 'signed_in'; at: string }
  | { status: 'failed'; error: ErrorBody };

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

interface Attempt {
  server: string;
  expiresAt: number;
}

export class SignIns {
  private readonly attempts = new Map<string, Attempt>();
  private readonly outcomes = new Map<string, SignInStatus>();

  constructor(
    private readonly actors: SignInActors,
    /** The daemon's callback URL (known once it listens). */
    private readonly redirectUrl: () => string,
    /** Audited without anything secret. */
    private readonly audit: (actor: AuditActor, event: 'oauth_signed_in' | 'oauth_signed_out', server: string) => void,
    /** When the tokens stored for the server were obtained (null: none held), for a server no sign-in of this run concerns. */
    private readonly storedAt: (server: string) => Promise<string | null> = async () => null,
  ) {}

  async start(server: string): Promise<SignInStatus> {
    const outcome = await this.ask(server, { type: 'begin', redirectUrl: this.redirectUrl() });
    if (!outcome.ok) throw new CofferError(outcome.error.code, outcome.error.message);
    this.prune();
    if (outcome.authorized) return this.settle(server, { status: 'signed_in', at: new Date().toISOString() });
    this.attempts.set(outcome.state, { server, expiresAt: outcome.expiresAt });
    const pending: SignInStatus = { status: 'pending', url: outcome.url, expires_at: new Date(outcome.expiresAt).toISOString() };
    this.outcomes.set(server, pending);
    return pending;
  }

  async status(server: string): Promise<SignInStatus> {
    const known = this.outcomes.get(server);
    if (known?.status === 'pending' && Date.parse(known.expires_at) < Date.now()) {
      return { status: 'failed', error: { code: 'UPSTREAM_AUTH_REQUIRED', message: `the sign-in link expired: run 'coffer mcp auth ${server}' again` } };
    }
    if (known) return known;
    // Signed in before this run (the tokens are sealed in the DB): the UI offers Sign out on that.
    const at = await this.storedAt(server);
    return at === null ? { status: 'none' } : { status: 'signed_in', at };
  }

  async logout(server: string, actor: AuditActor): Promise<void> {
    const outcome = await this.ask(server, { type: 'logout' });
    if (!outcome.ok) throw new CofferError(outcome.error.code, outcome.error.message);
    for (const [state, attempt] of this.attempts) if (attempt.server === server) this.attempts.delete(state);
    this.outcomes.delete(server);
    this.audit(actor, 'oauth_signed_out', server);
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
      const reason = refusal === null ? 'the answer carried no code' : `the authorization server answered ${refusal}`;
      this.settle(server, { status: 'failed', error: { code: 'UPSTREAM_AUTH_REQUIRED', message: `sign-in to ${server} failed: ${reason}` } });
      return { status: 400, ok: false, message: `Sign-in to ${server} failed: ${reason}.` };
    }
    const outcome = await this.ask(server, { type: 'complete', state, code, iss: query.get('iss') });
    if (!outcome.ok) {
      this.settle(server, { status: 'failed', error: outcome.error });
      return { status: 400, ok: false, message: outcome.error.message };
    }
    this.settle(server, { status: 'signed_in', at: new Date().toISOString() });
    return { status: 200, ok: true, message: `Signed in to ${server}. You can close this tab.` };
  }

  private settle(server: string, status: SignInStatus): SignInStatus {
    this.outcomes.set(server, status);
    if (status.status === 'signed_in') this.audit('system', 'oauth_signed_in', server);
    return status;
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
