// The one log format of the daemon, the actors and the shim: one JSON object per line,
// {time, level, component, upstream?, request_id?, trace_id?, msg, ...fields}. Text (the message and every string
// field) often quotes an upstream or a client: each is clipped and its controls escaped,
// so no line grows unbounded or drives the terminal that shows it. A field never takes
// the place of the frame (a field named "level" cannot make a line read as another level).
import { sanitiseText } from './protocol/untrusted-text.js';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export type LogComponent = 'daemon' | 'actor' | 'shim';

export interface LogRecord {
  level: LogLevel;
  component: LogComponent;
  msg: string;
  /** The upstream server the record is about. */
  upstream?: string;
  /** The JSON-RPC id of the client request the record is about. */
  requestId?: string;
  /** Its W3C trace id (the client's, continued by coffer), to find the record from a trace. */
  traceId?: string;
  fields?: Record<string, unknown>;
}

const FRAME = new Set(['time', 'level', 'component', 'upstream', 'request_id', 'trace_id', 'msg']);

/** One record as one line of JSON, ending in "\n". */
export function formatRecord(record: LogRecord, now = new Date()): string {
  const line: Record<string, unknown> = { time: now.toISOString(), level: record.level, component: record.component };
  if (record.upstream !== undefined) line.upstream = sanitiseText(record.upstream);
  if (record.requestId !== undefined) line.request_id = sanitiseText(record.requestId);
  if (record.traceId !== undefined) line.trace_id = sanitiseText(record.traceId);
  line.msg = sanitiseText(record.msg);
  for (const [key, value] of Object.entries(record.fields ?? {})) {
    if (!FRAME.has(key)) line[key] = typeof value === 'string' ? sanitiseText(value) : value;
  }
  return `${JSON.stringify(line)}\n`;
}

/** The record a log file writes first once it can again: how many lines the disk refused, and why (RotatingFile's lossNote). */
export function linesLostNote(component: LogComponent, upstream?: string): (lost: number, cause: string) => string {
  return (lost, cause) => formatRecord({ level: 'warn', component, upstream, msg: 'log lines lost: the file could not be written', fields: { lost, error: cause } });
}
