// The hook an HTTP transport offers for upstream authorization: headers to add
// to each request, and what to do when the upstream refuses one. The OAuth
// logic behind it lives in oauth/; the transport only asks.

export interface HttpAuth {
  /** Headers for the next request (Authorization), after a refresh if the token is about to expire. */
  headers(): Promise<Record<string, string>>;
  /**
   * The upstream answered 401 or 403 with `challenge` (its WWW-Authenticate) to
   * a request that carried `sent` (its Authorization, if any), `retried` if it
   * was already the retry. true: retry the request, with fresh headers.
   */
  refused(status: number, challenge: string | undefined, sent: string | undefined, retried: boolean): Promise<boolean>;
  /** Why the upstream refused, when a person must sign in (null: not an OAuth refusal). */
  signInNeeded(): string | null;
}

/** A request the upstream refused for want of a sign-in (or of a scope). */
export class UpstreamAuthError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UpstreamAuthError';
  }
}
