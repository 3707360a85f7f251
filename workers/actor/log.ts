// The actor's log file, in the format of src/log-record.ts: the actor's own notes and,
// line by line, what a stdio child writes to its stderr (`stream: "stderr"`), each a
// record naming the upstream, appended to a file rotated by size. A child's line
// becomes the text of a record, so it can never pass for one of coffer's notes.
import { Writable } from 'node:stream';
import { formatRecord, linesLostNote, type LogLevel } from '../../src/log-record.js';
import { MAX_ERROR_TEXT_CHARS } from '../../src/protocol/untrusted-text.js';
import { RotatingFile } from '../../src/rotating-file.js';

/** How long a child's unended stderr line waits for the rest of it. */
const UNENDED_LINE_MS = 200;

export interface ActorLog {
  /** A sink for one child's stderr text (see StdioTransport): each child gets its own, so their lines do not mix. */
  childStderr(): Writable;
  /** coffer's own words about the upstream: `warn` for what went wrong, `info` (default) for the rest. */
  note(message: string, level?: LogLevel): void;
  close(): Promise<void>;
}

/**
 * A child's stderr as records, one per line. A line is kept up to the length a record's
 * text may have; the rest of it is counted (`more_chars`), not held, however long it runs.
 * Backpressure passes through: a write completes once the file has taken its records.
 * The child never ends this stream, so a line left without its line end (a child's last
 * words) is written once the child has been quiet for a moment, or at once when the log closes.
 */
class StderrLines extends Writable {
  private head = '';
  private more = 0;
  private quiet: NodeJS.Timeout | undefined;

  constructor(
    private readonly file: RotatingFile,
    private readonly upstream: string,
    /** The sinks holding an unended line: the log writes them before it closes. */
    private readonly unended: Set<StderrLines>,
  ) {
    super({ decodeStrings: false });
  }

  override _write(chunk: string, _encoding: BufferEncoding, callback: () => void): void {
    clearTimeout(this.quiet);
    this.unended.delete(this);
    // One write per record: the file rotates between writes, so a generation stays within its size.
    let last = '';
    let start = 0;
    for (let end = chunk.indexOf('\n'); end !== -1; end = chunk.indexOf('\n', start)) {
      this.take(chunk.slice(start, end));
      this.put(last);
      last = this.record();
      start = end + 1;
    }
    this.take(chunk.slice(start));
    if (this.head !== '' || this.more > 0) {
      this.quiet = setTimeout(() => this.endLine(), UNENDED_LINE_MS).unref();
      this.unended.add(this);
    }
    this.append(last, callback);
  }

  /** The unended line as it is: the child went quiet, or the log closes. */
  endLine(): void {
    clearTimeout(this.quiet);
    this.unended.delete(this);
    this.put(this.record());
  }

  private take(piece: string): void {
    const room = MAX_ERROR_TEXT_CHARS - this.head.length;
    this.head += piece.length <= room ? piece : piece.slice(0, room);
    this.more += Math.max(0, piece.length - room);
  }

  /** The line read so far as a record ("" for a blank line: nothing to say). */
  private record(): string {
    const { head, more } = this;
    this.head = '';
    this.more = 0;
    if (head === '' && more === 0) return '';
    return formatRecord({ level: 'info', component: 'actor', upstream: this.upstream, msg: head, fields: { stream: 'stderr', ...(more > 0 && { more_chars: more }) } });
  }

  /** Writes a record (if any); false when the file is full and will drain. */
  private put(text: string): boolean {
    return text === '' || this.file.writableEnded || this.file.write(text) || this.file.destroyed;
  }

  /** The last record of a chunk: the chunk is done once the file can take more. */
  private append(text: string, callback: () => void): void {
    if (this.put(text)) return callback();
    // A file that fails or closes never drains: the child must not stay blocked on its stderr for that.
    const done = (): void => {
      this.file.off('drain', done).off('close', done);
      callback();
    };
    this.file.once('drain', done).once('close', done);
  }
}

/**
 * Notes of one kind at most once per `intervalMs`: those in between are
 * counted in the next one, so an upstream repeating itself cannot flood the log.
 */
export function throttledNote(log: ActorLog, level: LogLevel, intervalMs: number): (message: string) => void {
  let lastAt = Number.NEGATIVE_INFINITY;
  let suppressed = 0;
  return (message) => {
    const now = Date.now();
    if (now - lastAt < intervalMs) {
      suppressed += 1;
      return;
    }
    log.note(suppressed > 0 ? `${message} (${suppressed} more since the last note)` : message, level);
    lastAt = now;
    suppressed = 0;
  };
}

export function openLog(path: string, upstream: string): ActorLog {
  const file = new RotatingFile(path, undefined, linesLostNote('actor', upstream));
  // A log that cannot be written must not take the actor down.
  file.on('error', () => {});
  const unended = new Set<StderrLines>();
  return {
    childStderr: () => new StderrLines(file, upstream, unended),
    note(message, level = 'info') {
      if (!file.writableEnded) file.write(formatRecord({ level, component: 'actor', upstream, msg: message }));
    },
    close: () => {
      // A stopped child's last words, written before they could wait for the rest of their line.
      for (const lines of unended) lines.endLine();
      return new Promise((resolve) => file.end(resolve));
    },
  };
}
