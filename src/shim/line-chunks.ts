// The client's stdin as the SDK's stdio transport gets it: in chunks that end
// a line. That transport copies its whole buffer into a new one for every
// chunk it is given and searches all of it for a line end, so a message that
// arrives in n pipe reads costs n² (a 32 MB tool argument in 64 KB reads held
// the shim's one thread for over a minute, every other message waiting). The
// pieces of a line are held here and joined once, when a chunk with a line
// end comes; only that chunk is searched.
import { Transform } from 'node:stream';

const LF = 0x0a;

/** `limit`: bytes held at most; past it they go on, for the transport to refuse the line as too large. */
export function lineChunks(limit: number): Transform {
  let held: Buffer[] = [];
  let bytes = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      held.push(chunk);
      bytes += chunk.length;
      if (!chunk.includes(LF) && bytes <= limit) return callback();
      const joined = held.length === 1 ? chunk : Buffer.concat(held, bytes);
      held = [];
      bytes = 0;
      callback(null, joined);
    },
  });
}
