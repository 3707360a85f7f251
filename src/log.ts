// The daemon's log: one JSON object per line. Callers pass structured fields;
// no caller passes config values (env, headers), so no secret reaches it.
import { appendFileSync } from 'node:fs';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export class Logger {
  constructor(
    private readonly file: string | null,
    private readonly level: LogLevel = 'info',
  ) {}

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

  private write(level: LogLevel, message: string, fields: Record<string, unknown>): void {
    if (RANK[level] < RANK[this.level]) return;
    const line = JSON.stringify({ at: new Date().toISOString(), level, message, ...fields }) + '\n';
    if (this.file === null) process.stderr.write(line);
    else appendFileSync(this.file, line);
  }
}
