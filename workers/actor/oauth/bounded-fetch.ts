// The fetch behind one run of the SDK's auth() (a sign-in step or a refresh).
// The resource and its authorization server are hostile ground: the run ends
// by a deadline however slowly they answer, and each answer is read only up to
// a size and a nesting bound before the SDK parses it. Without them, a server
// that never answers would hold the sign-in, the refresh, and every request
// waiting for that refresh, forever; and a huge or deeply nested metadata
// document would be kept in the sealed record, which is then too big to carry
// or too deep to read back. An answer the SDK then finds malformed is named by
// the URL that gave it.
import { textDepth } from '../../../src/protocol/nesting.js';
import { quotedText } from '../../../src/protocol/untrusted-text.js';

export interface AuthFetchLimits {
  /** For the whole run: discovery, registration and the token request together. */
  deadlineMs: number;
}

export const AUTH_FETCH_LIMITS: AuthFetchLimits = { deadlineMs: 30_000 };

/** An OAuth answer (metadata, registration, tokens) is a few KiB. */
const MAX_ANSWER_BYTES = 256 * 1024;
/** An OAuth answer nests a few levels; the record keeping it adds two, and is read back only under MAX_DEPTH. */
const MAX_ANSWER_DEPTH = 32;

/** Statuses whose Response may not carry a body. */
const NULL_BODY = new Set([101, 204, 205, 304]);

/** A request's URL for a message: without its query, which may carry a code. */
function named(input: string | URL | Request): string {
  const url = new URL(input instanceof Request ? input.url : input);
  return `${url.origin}${url.pathname}`;
}

/** The answer's text, refused past the size bound (before reading it, when it says its length) or the nesting bound. */
async function boundedText(response: Response, name: string): Promise<string> {
  const tooBig = new Error(`${name} answered more than ${MAX_ANSWER_BYTES / 1024} KiB: refused (an OAuth answer is a few KiB)`);
  if (Number(response.headers.get('content-length')) > MAX_ANSWER_BYTES) {
    await response.body?.cancel();
    throw tooBig;
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  // Leaving the loop by a throw cancels the rest of the body.
  for await (const chunk of response.body ?? []) {
    size += chunk.byteLength;
    if (size > MAX_ANSWER_BYTES) throw tooBig;
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (textDepth(text, MAX_ANSWER_DEPTH) > MAX_ANSWER_DEPTH) throw new Error(`${name} answered JSON nested deeper than ${MAX_ANSWER_DEPTH} levels: refused`);
  return text;
}

/** How much of a refused answer's body its description quotes. */
const MAX_REFUSAL_QUOTE_CHARS = 200;

/** A refused answer (HTTP 4xx or 5xx) as one line: who refused, the status, and the start of what it said. */
function refusal(url: string, status: number, body: string | null): string {
  const said = body?.trim() ?? '';
  return `${url} answered HTTP ${status}${said === '' ? '' : ` ${quotedText(said, MAX_REFUSAL_QUOTE_CHARS)}`}`;
}

/**
 * A bounded fetch, which knows the URL it asked last (the SDK parses that
 * one's answer next) and, when that answer was a refusal, what it said: the
 * SDK keeps that to itself when a refresh fails, and quotes a body that is not
 * an OAuth error whole and without the URL.
 */
export type BoundedFetch = typeof fetch & { lastUrl?: string; lastRefusal?: string };

/** A fetch whose requests, answers read whole, all end by one deadline from now. */
export function boundedFetch(limits: AuthFetchLimits): BoundedFetch {
  const signal = AbortSignal.timeout(limits.deadlineMs);
  const bounded: BoundedFetch = async (input, init) => {
    const url = named(input);
    bounded.lastUrl = url;
    bounded.lastRefusal = undefined;
    try {
      const response = await fetch(input, { ...init, signal });
      const body = NULL_BODY.has(response.status) ? null : await boundedText(response, url);
      if (response.status >= 400) bounded.lastRefusal = refusal(url, response.status, body);
      const read = new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
      // The SDK names a redirect it did not follow relative to the answer's URL.
      return Object.defineProperty(read, 'url', { value: response.url });
    } catch (error) {
      if (signal.aborted) throw new Error(`${named(input)} did not answer within ${limits.deadlineMs / 1000} s: try again later, or ask its operator`);
      throw error;
    }
  };
  return bounded;
}

/** The most of a schema's complaints one message lists. */
const MAX_ISSUES = 3;

/** How the SDK begins its message for a refusal whose body is not an OAuth error (it then quotes the body whole). */
const NOT_AN_OAUTH_ERROR = /^HTTP \d{3}: Invalid OAuth error response: /;

/**
 * The SDK's schema failure on an answer (a zod error: a multi-line dump naming no server) as one
 * line naming the URL that gave the answer; a refusal whose body is not an OAuth error as the
 * fetch saw it (the URL, the status, the start of the body); any other error as it is.
 */
export function answerError(error: unknown, fetched: Pick<BoundedFetch, 'lastUrl' | 'lastRefusal'>): unknown {
  if (error instanceof Error && fetched.lastRefusal !== undefined && NOT_AN_OAUTH_ERROR.test(error.message)) {
    return new Error(`${fetched.lastRefusal}, which is not an OAuth error answer`);
  }
  const url = fetched.lastUrl;
  const issues = (error as { issues?: unknown }).issues;
  if (!(error instanceof Error) || error.name !== 'ZodError' || !Array.isArray(issues) || url === undefined) return error;
  const said = (issues as Array<{ path: PropertyKey[]; message: string }>)
    .slice(0, MAX_ISSUES)
    .map(({ path, message }) => `${path.length > 0 ? path.map(String).join('.') : '(the answer)'}: ${message}`);
  return new Error(`the answer of ${url} is not what OAuth allows: ${said.join('; ')}`);
}
