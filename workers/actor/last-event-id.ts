// Where a stream can be resumed from: the last event id its server gave goes
// back as the Last-Event-ID header, and only an id that arrives there
// unchanged can find the server's place in the stream. Pure.

/** The longest id sent back: well inside the 8 KB that common servers allow for a request's headers. */
const MAX_EVENT_ID_CHARS = 1_024;

/**
 * Printable ASCII without a space at either end: a server trims those, reads
 * each byte as Latin-1 (coffer writes UTF-8, as browsers do), and refuses controls.
 */
const HEADER_SAFE = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;

/** The id to send, or why the stream cannot be resumed. An empty id clears the last one (WHATWG). */
export function resumePoint(lastId: string | undefined): { id: string } | { why: string } {
  if (lastId === undefined || lastId === '') return { why: 'it gave no event id to resume the stream from' };
  const fault =
    lastId.length > MAX_EVENT_ID_CHARS
      ? `it is ${lastId.length} characters long, past the ${MAX_EVENT_ID_CHARS} coffer sends`
      : !HEADER_SAFE.test(lastId)
        ? 'it holds characters a header cannot carry unchanged (controls, non-ASCII, or a space at either end)'
        : undefined;
  if (fault === undefined) return { id: lastId };
  return { why: `its last event id cannot be sent back as Last-Event-ID: ${fault}; the upstream should give event ids of printable ASCII` };
}
