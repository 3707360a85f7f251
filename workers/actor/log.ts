// The actor's log file: a stdio child's stderr plus the actor's own notes, appended.
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { dirname } from 'node:path';

export interface ActorLog {
  /** Raw sink for a child's stderr. */
  readonly stream: WriteStream;
  note(message: string): void;
  close(): Promise<void>;
}

export function openLog(path: string): ActorLog {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const stream = createWriteStream(path, { flags: 'a', mode: 0o600 });
  // A log that cannot be written must not take the actor down.
  stream.on('error', () => {});
  return {
    stream,
    note(message) {
      if (!stream.writableEnded) stream.write(`${new Date().toISOString()} [coffer] ${message}\n`);
    },
    close: () => new Promise((resolve) => stream.end(resolve)),
  };
}
