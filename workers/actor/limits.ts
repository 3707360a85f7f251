// Bounds on what one upstream message may cost the actor. An actor worker has
// a 256 MB heap: a message is held as text, as parsed JSON and once more while
// it is cloned to the router, so a message far past this would kill the worker.
// The message cap (MAX_MESSAGE_CHARS) and the nesting bound (MAX_DEPTH) hold
// beyond the actor too: they are in src/protocol/message-limit.ts.
import { MAX_MESSAGE_CHARS } from '../../src/protocol/message-limit.js';

/**
 * A message nested deeper than this is not parsed at all: JSON.parse builds
 * every level in the actor's heap, so a deep enough message alone would
 * kill the actor. Below it a message is parsed and only its
 * too-deep parts are refused (one list item, one result).
 */
export const MAX_PARSE_DEPTH = 200_000;

/**
 * The most items one list may hold in all its pages. Each becomes a switch
 * the DB writer reconciles on every new list, and keys are never deleted
 * (R4): a list of a million tiny names held the writer for most of a minute
 * and grew the database by half a gigabyte.
 */
export const MAX_LIST_ITEMS = 50_000;

/**
 * The characters a parsed value holds — its strings and keys, one for any other
 * value — counted until `limit` is passed (then some number over it). A list
 * gathered over many pages is bounded by this, as one message is by its text:
 * each page may be small while the whole outgrows the actor's heap.
 */
export function charsOf(value: unknown, limit: number): number {
  let chars = 0;
  const pending: unknown[] = [value];
  while (pending.length > 0 && chars <= limit) {
    const next = pending.pop();
    if (typeof next === 'string') chars += next.length;
    else if (Array.isArray(next)) for (const item of next) pending.push(item);
    else if (typeof next === 'object' && next !== null) {
      for (const [key, item] of Object.entries(next)) {
        chars += key.length;
        pending.push(item);
      }
    } else chars += 1;
  }
  return chars;
}

export class MessageTooLargeError extends Error {
  constructor(where: string) {
    super(`an upstream message over ${MAX_MESSAGE_CHARS / (1024 * 1024)} MB (${where}) was dropped`);
    this.name = 'MessageTooLargeError';
  }
}

/**
 * The pieces of a line not yet ended, shared by the stdio and SSE splitters:
 * only new chunks are searched and a partial line is kept in pieces, so a 50 MB
 * line costs one join, not one copy per chunk. A line that outgrows its limit
 * is dropped, and so is the rest of it as it arrives.
 */
export class PartialLine {
  private parts: string[] = [];
  private chars = 0;
  private dropping = false;

  /** Keeps a piece with no line end in it; true when it took the line past `limit` (the line is then dropped). */
  add(piece: string, limit: number): boolean {
    if (this.dropping) return false;
    this.parts.push(piece);
    this.chars += piece.length;
    if (this.chars <= limit) return false;
    this.clear();
    this.dropping = true;
    return true;
  }

  /** The whole line that `tail` ends, or null when that line was dropped. */
  end(tail: string): string | null {
    if (this.dropping) {
      this.dropping = false;
      return null;
    }
    if (this.parts.length === 0) return tail;
    this.parts.push(tail);
    const line = this.parts.join('');
    this.clear();
    return line;
  }

  clear(): void {
    this.parts = [];
    this.chars = 0;
    this.dropping = false;
  }
}

/**
 * Sockets an actor opens to its upstream at once. A call being answered holds
 * one for as long as its answer streams, and so does a reply to a server
 * request until the upstream acknowledges it: without a cap, an upstream that
 * floods requests on its stream makes the actor open a socket for each. Past
 * it a request waits for a socket.
 */
export const MAX_SOCKETS_PER_UPSTREAM = 64;

/**
 * Of those, the sockets a call or a stream (which may hold its socket for as
 * long as it runs) leaves to brief requests, which the upstream acknowledges
 * at once: replies to its requests, notifications, DELETE. Calls waiting on
 * the answers to their upstream's questions must never keep those answers
 * from going out.
 */
export const SOCKETS_KEPT_FOR_BRIEF = 8;

/**
 * Requests that may wait for one of those sockets. Past it a request is not
 * sent: a call fails at once with UPSTREAM_BUSY, a reply to the upstream's
 * request is dropped (and logged); the upstream is then asking faster than it
 * acknowledges.
 */
export const MAX_REQUESTS_WAITING = 256;

/**
 * Answer text an actor holds at once across its concurrent HTTP bodies: one
 * message at the cap fits beside the copies parsing and cloning make; several
 * would not. A body that would take the total past it is cut off and its call
 * fails with UPSTREAM_BUSY; the upstream itself is not at fault.
 */
export const MAX_ANSWER_CHARS_IN_FLIGHT = 96 * 1024 * 1024;

/** The characters of answers being read, counted against MAX_ANSWER_CHARS_IN_FLIGHT. */
export class AnswerBudget {
  private used = 0;

  constructor(private readonly limit = MAX_ANSWER_CHARS_IN_FLIGHT) {}

  /** Takes `chars`; false (nothing taken) when that would pass the limit. */
  take(chars: number): boolean {
    if (this.used + chars > this.limit) return false;
    this.used += chars;
    return true;
  }

  give(chars: number): void {
    this.used -= chars;
  }
}
