// The daemon's log, in the format of src/log-record.ts, appended through a stream so
// the main thread never blocks on the disk, to a file rotated by size. Callers pass
// structured fields; no caller passes config values (env, headers), so no secret
// reaches it.
import { formatRecord, linesLostNote, type LogLevel } from './log-record.js';
import { RotatingFile, type RotationPolicy } from './rotating-file.js';

export type { LogLevel };
const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export class Logger {
  private readonly stream: RotatingFile | null;

  /** `file` null: stderr. */
  constructor(
    file: string | null,
    private readonly level: LogLevel = 'info',
    rotation?: RotationPolicy,
  ) {
    this.stream = file === null ? null : new RotatingFile(file, rotation, linesLostNote('daemon'));
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
    // Callers name the upstream a record is about `server`; `request_id` and `trace_id` go in the frame too.
    const { server, request_id: requestId, trace_id: traceId, ...rest } = fields;
    const line = formatRecord({
      level,
      component: 'daemon',
      msg: message,
      ...(typeof server === 'string' && { upstream: server }),
      ...(typeof requestId === 'string' && { requestId }),
      ...(typeof traceId === 'string' && { traceId }),
      fields: rest,
    });
    if (this.stream === null) process.stderr.write(line);
    else if (!this.stream.writableEnded) this.stream.write(line);
  }
}
