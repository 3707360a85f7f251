// The actor's log file: a stdio child's stderr plus the actor's own notes,
// appended to a file rotated by size. A note often quotes the upstream (an
// error body): it is clipped and its controls escaped, one line each.
import { sanitiseText } from '../../src/protocol/untrusted-text.js';
import { RotatingFile } from '../../src/rotating-file.js';

export interface ActorLog {
  /** Sink for a child's stderr (text: see StdioTransport). */
  readonly stream: RotatingFile;
  note(message: string): void;
  close(): Promise<void>;
}

export function openLog(path: string): ActorLog {
  const stream = new RotatingFile(path);
  // A log that cannot be written must not take the actor down.
  stream.on('error', () => {});
  return {
    stream,
    note(message) {
      if (!stream.writableEnded) stream.write(`${new Date().toISOString()} [coffer] ${sanitiseText(message)}\n`);
    },
    close: () => new Promise((resolve) => stream.end(resolve)),
  };
}
