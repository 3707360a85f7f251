// The OAuth hook of a test connection (R9) to a server that signs in with
// OAuth: the live actor's stored access token as it is. Nothing is refreshed or
// signed in here (a refresh would spend the refresh token the actor holds); an
// upstream that refuses with a Bearer challenge makes the test report that a
// person must sign in, and how.
import { signInCommand } from '../../src/protocol/oauth.js';
import { isBearerChallenge, type HttpAuth, type Refusal } from '../actor/http-auth.js';

export class StoredTokenAuth implements HttpAuth {
  private need: string | null = null;

  constructor(
    private readonly server: string,
    private readonly accessToken: string | null,
  ) {}

  async headers(): Promise<Record<string, string>> {
    return this.accessToken ? { authorization: `Bearer ${this.accessToken}` } : {};
  }

  async refused(status: number, challenge: string | undefined): Promise<Refusal> {
    if (!isBearerChallenge(challenge) || (status === 403 && !/\berror="?insufficient_scope\b/.test(challenge))) return null;
    const command = signInCommand(this.server);
    this.need =
      status === 403
        ? `upstream ${this.server} needs a wider permission than its token holds: sign in again with '${command}'`
        : this.accessToken
          ? `upstream ${this.server} refused the stored token (expired or revoked): run '${command}'`
          : `upstream ${this.server} needs a sign-in: run '${command}'`;
    return { signIn: this.need };
  }

  signInNeeded(): string | null {
    return this.need;
  }
}
