// What a frame from an admin client must be before it is parsed, and how many
// bad ones a client may send: each bad frame gets an error answer and the
// socket stays usable, but a client that keeps sending them is closed (1008)
// rather than answered forever.
import type { ErrorBody } from '../protocol/errors.js';
import type { AdminClient } from './ws-client.js';
import type { AdminWsOptions } from './ws-options.js';

/** Why a frame is refused before parsing, or null when it may be parsed. */
export function frameProblem(byteLength: number, isBinary: boolean, maxMessageBytes: number): ErrorBody | null {
  if (isBinary) return { code: 'BAD_REQUEST', message: 'binary frames are not accepted: send JSON text frames' };
  if (byteLength > maxMessageBytes) return { code: 'BAD_REQUEST', message: `frame of ${byteLength} bytes is over the ${maxMessageBytes}-byte limit` };
  return null;
}

/**
 * Counts one bad frame in the client's current window; returns the reason to
 * close the socket with when the client is over the limit, else null.
 */
export function countBadFrame(client: AdminClient, limits: Pick<AdminWsOptions, 'badFrameLimit' | 'badFrameWindowMs'>, now = Date.now()): string | null {
  if (now - client.badWindowStart > limits.badFrameWindowMs) {
    client.badWindowStart = now;
    client.badFrames = 0;
  }
  client.badFrames++;
  if (client.badFrames <= limits.badFrameLimit) return null;
  return `too many bad frames (${limits.badFrameLimit} per ${Math.round(limits.badFrameWindowMs / 1000)} s)`;
}
