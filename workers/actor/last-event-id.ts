// Where a stream can be resumed from: the last event id its server gave goes
// back as the Last-Event-ID header, and only an id that arrives there
// unchanged can find the server's place in the stream. Pure.
import type { EventId } from '../../src/protocol/sse-parser.js';

/**
 * The longest id sent back: well inside the 8 KB that common servers allow for
 * a request's headers. The SSE reader keeps a longer one as its length only.
 */
export const MAX_EVENT_ID_CHARS = 1_024;

/**
 * Printable ASCII without a space at either end: a server trims those, reads
 * each byte as Latin-1 (coffer writes UTF-8, as browsers do), and refuses controls.
 */
const HEADER_SAFE = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;

/** The id to send, or why the stream cannot be resumed. An empty id clears the last one (WHATWG). */
export function resumePoint(lastId: EventId | undefined): { id: string } | { why: string } {
  if (lastId === undefined || lastId === '') return { why: 'it gave no event id to resume the stream from' };
  if (typeof lastId === 'string' && HEADER_SAFE.test(lastId)) return { id: lastId };
  const fault =
    typeof lastId === 'string'
      ? 'it holds characters a header cannot carry unchanged (controls, non-ASCII, or a space at either end)'
      : `it is ${lastId.chars} characters long, past the ${MAX_EVENT_ID_CHARS} coffer sends`;
  return { why: `its last event id cannot be sent back as Last-Event-ID: ${fault}; the upstream should give event ids of printable ASCII` };
}
