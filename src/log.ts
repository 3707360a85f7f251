// The daemon's log: one JSON object per line, appended through a stream so the
// main thread never blocks on the disk, to a file rotated by size. Callers pass
// structured fields; no caller passes config values (env, headers), so no
// secret reaches it. Text fields often carry an upstream's words (an error
// body): each is clipped and its controls escaped, so no line grows unbounded.
import { sanitiseText } from './protocol/untrusted-text.js';
import { RotatingFile, type RotationPolicy } from './rotating-file.js';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export class Logger {
  private readonly stream: RotatingFile | null;

  /** `file` null: stderr. */
  constructor(
    file: string | null,
    private readonly level: LogLevel = 'info',
    rotation?: RotationPolicy,
  ) {
    this.stream = file === null ? null : new RotatingFile(file, rotation);
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
    const line = JSON.stringify({ at: new Date().toISOString(), level, message: sanitiseText(message), ...sanitiseFields(fields) }) + '\n';
    if (this.stream === null) process.stderr.write(line);
    else if (!this.stream.writableEnded) this.stream.write(line);
  }
}

function sanitiseFields(fields: Record<string, unknown>): Record<string, unknown> {
  const clean: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) clean[key] = typeof value === 'string' ? sanitiseText(value) : value;
  return clean;
}
