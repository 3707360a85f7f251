// Bounds on what one upstream message may cost the actor. An actor worker has
// a 256 MB heap: a message is held as text, as parsed JSON and once more while
// it is cloned to the router, so a message far past this would kill the worker.
// 64 MB matches the largest body coffer accepts from a client on /mcp.

/** The largest single message (one stdio line, one SSE event, one JSON body) an actor accepts, in UTF-16 code units. */
export const MAX_MESSAGE_CHARS = 64 * 1024 * 1024;

export class MessageTooLargeError extends Error {
  constructor(where: string) {
    super(`an upstream message over ${MAX_MESSAGE_CHARS / (1024 * 1024)} MB (${where}) was dropped`);
    this.name = 'MessageTooLargeError';
  }
}
