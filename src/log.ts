// The daemon's log: one JSON object per line, appended through a stream so the
// main thread never blocks on the disk. Callers pass structured fields; no
// caller passes config values (env, headers), so no secret reaches it.
import { createWriteStream, type WriteStream } from 'node:fs';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export class Logger {
  private readonly stream: WriteStream | null;

  /** `file` null: stderr. */
  constructor(
    file: string | null,
    private readonly level: LogLevel = 'info',
  ) {
    this.stream = file === null ? null : createWriteStream(file, { flags: 'a', mode: 0o600 });
    // A log that cannot be written must not take the daemon down.
    this.stream?.on('error', () => undefined);
  }

  debug(message: string, fields: Record<string, unknown> = {}): void {
    this.write('debug', message, fields);
  }
  info(message: string, fields: Record<string, unknown> = {}): void {
    this.write('info', message, fields);
  }
  warn(message: string, fields: Record<string, unknown> = {}): void {
    this.write('warn', message, fields);
  }
  error(message: string, fields: Record<string, unknown> = {}): void {
    this.write('error', message, fields);
  }

  close(): Promise<void> {
    return new Promise((resolve) => (this.stream ? this.stream.end(resolve) : resolve()));
  }

  private write(level: LogLevel, message: string, fields: Record<string, unknown>): void {
    if (RANK[level] < RANK[this.level]) return;
    const line = JSON.stringify({ at: new Date().toISOString(), level, message, ...fields }) + '\n';
    if (this.stream === null) process.stderr.write(line);
    else if (!this.stream.writableEnded) this.stream.write(line);
  }
}
