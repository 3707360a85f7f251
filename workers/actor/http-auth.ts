// The hook an HTTP transport offers for upstream authorization: headers to add
// to each request, and what to do when the upstream refuses one. The OAuth
// logic behind it lives in oauth/; the transport only asks.

export interface HttpAuth {
  /** Headers for the next request (Authorization), after a refresh if the token is about to expire. */
  headers(): Promise<Record<string, string>>;
  /**
   * The upstream answered 401 or 403 with `challenge` (its WWW-Authenticate) to
   * a request that carried `sent` (its Authorization, if any), `retried` if it
   * was already the retry (which is never answered 'retry').
   */
  refused(status: number, challenge: string | undefined, sent: string | undefined, retried: boolean): Promise<Refusal>;
  /** Why the upstream cannot be connected until a person signs in (null: nothing in the way). */
  signInNeeded(): string | null;
}

/** Only a Bearer challenge (RFC 6750, RFC 9728) is about OAuth; any other 401/403 stays a plain HTTP error. */
export function isBearerChallenge(challenge: string | undefined): challenge is string {
  return challenge !== undefined && /^\s*bearer\b/i.test(challenge);
}

/** retry: send the request again, with fresh headers · signIn: fail it, a person must sign in (or widen the scope) · null: not an OAuth refusal. */
export type Refusal = 'retry' | { signIn: string } | null;

/** A request the upstream refused for want of a sign-in (or of a scope). */
export class UpstreamAuthError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UpstreamAuthError';
  }
}
