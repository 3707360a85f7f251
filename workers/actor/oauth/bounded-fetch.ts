// The fetch behind one run of the SDK's auth() (a sign-in step or a refresh).
// The resource and its authorization server are hostile ground: the run ends
// by a deadline however slowly they answer. Without one, a server that never
// answers would hold the sign-in, the refresh, and every request waiting for
// that refresh, forever.

export interface AuthFetchLimits {
  /** For the whole run: discovery, registration and the token request together. */
  deadlineMs: number;
}

export const AUTH_FETCH_LIMITS: AuthFetchLimits = { deadlineMs: 30_000 };

/** Statuses whose Response may not carry a body. */
const NULL_BODY = new Set([101, 204, 205, 304]);

/** A request's URL for a message: without its query, which may carry a code. */
function named(input: string | URL | Request): string {
  const url = new URL(input instanceof Request ? input.url : input);
  return `${url.origin}${url.pathname}`;
}

/** A fetch whose requests, answers read whole, all end by one deadline from now. */
export function boundedFetch(limits: AuthFetchLimits): typeof fetch {
  const signal = AbortSignal.timeout(limits.deadlineMs);
  return async (input, init) => {
    try {
      const response = await fetch(input, { ...init, signal });
      const body = NULL_BODY.has(response.status) ? null : await response.arrayBuffer();
      const read = new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
      // The SDK names a redirect it did not follow relative to the answer's URL.
      return Object.defineProperty(read, 'url', { value: response.url });
    } catch (error) {
      if (signal.aborted) throw new Error(`${named(input)} did not answer within ${limits.deadlineMs / 1000} s: try again later, or ask its operator`);
      throw error;
    }
  };
}
