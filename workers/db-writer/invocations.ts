// invocations: one row per tools/call, resources/read, prompts/get through the
// gateway. The columns are the whole record: there is no place for arguments or results.
import type { Database, Statement } from 'better-sqlite3';
import type { DbWriterApi, InvocationRow } from '../../src/protocol/db.js';
import type { InvocationKind, InvocationRecord, InvocationStatus } from '../../src/protocol/events.js';
import { clipText } from '../../src/protocol/untrusted-text.js';
import { CAPABILITY_TYPES } from '../../src/protocol/capabilities.js';
import { now } from './clock.js';

type InvocationFilter = Parameters<DbWriterApi['listInvocations']>[0];

export const DEFAULT_INVOCATION_LIMIT = 100;
export const MAX_INVOCATION_LIMIT = 10_000;

const KINDS: ReadonlySet<string> = new Set<InvocationKind>(CAPABILITY_TYPES);
export const INVOCATION_STATUSES: ReadonlySet<string> = new Set<InvocationStatus>(['ok', 'error', 'timeout', 'denied']);

type Stored = [string, string, InvocationKind, string, number, InvocationStatus, string | null, number | null];

const FILTERS: { [K in Exclude<keyof InvocationFilter, 'limit'>]: string } = {
  server: 'server = @server',
  status: 'status = @status',
  since: 'at >= @since',
};

/** What Date#toISOString writes for the years 0000–9999, the form the router sends: a day past its month's end still goes through Date. */
const STORED_FORM = /^\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])T(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d\.\d{3}Z$/;
const MONTH_DAYS = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function inStoredForm(value: string): boolean {
  if (!STORED_FORM.test(value)) return false;
  const year = Number(value.slice(0, 4));
  const month = Number(value.slice(5, 7));
  const day = Number(value.slice(8, 10));
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return day <= (month === 2 && !leap ? 28 : MONTH_DAYS[month - 1]!);
}

/**
 * A stored timestamp: ISO-8601 UTC with milliseconds, so text order is time
 * order. One already in that form is kept as it is: parsing and formatting
 * every record's time again is work per call for nothing.
 */
function timestamp(value: unknown): string | null {
  if (typeof value === 'string' && inStoredForm(value)) return value;
  if (typeof value !== 'string' && typeof value !== 'number') return null;
  const time = new Date(value).getTime();
  return Number.isFinite(time) ? new Date(time).toISOString() : null;
}

/**
 * A record as it is stored, or null if it cannot be (unknown kind or status, no
 * server or key): a bad record is left out rather than failing its whole batch,
 * which the caller would only retry. Only the declared fields are read. The key
 * is a client's words: clipped, so no client can make one row (or a page of
 * /invocations) arbitrarily large.
 */
function toStored(record: InvocationRecord): Stored | null {
  if (typeof record !== 'object' || record === null) return null;
  const { server, kind, key, status } = record;
  if (typeof server !== 'string' || server === '' || typeof key !== 'string') return null;
  if (!KINDS.has(kind) || !INVOCATION_STATUSES.has(status)) return null;
  const duration = Number.isFinite(record.duration_ms) ? Math.max(0, Math.round(record.duration_ms)) : 0;
  const session = typeof record.session === 'string' ? record.session : null;
  const errorCode = Number.isSafeInteger(record.error_code) ? record.error_code : null;
  return [timestamp(record.at) ?? now(), server, kind, clipText(key), duration, status, session, errorCode];
}

export class InvocationLog {
  private insertStatement: Statement<Stored> | null = null;
  private readonly selects = new Map<string, Statement<[Record<string, unknown>], InvocationRow>>();

  constructor(private readonly db: Database) {}

  /** Prepared on first use: a writer may open a database older than this table (tests of old builds). */
  private get insert(): Statement<Stored> {
    return (this.insertStatement ??= this.db.prepare(
      'INSERT INTO invocations (at, server, kind, key, duration_ms, status, session, error_code) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    ));
  }

  /** One transaction; answers how many records were stored (the rest were malformed). */
  record(records: readonly InvocationRecord[]): number {
    if (!Array.isArray(records) || records.length === 0) return 0;
    return this.db.transaction(() => {
      let stored = 0;
      for (const record of records) {
        const row = toStored(record);
        if (!row) continue;
        this.insert.run(...row);
        stored++;
      }
      return stored;
    })();
  }

  /** Newest first (by the call's time, then by arrival). */
  list(filter: InvocationFilter): InvocationRow[] {
    const limit = Number.isInteger(filter.limit) ? Math.min(Math.max(filter.limit as number, 1), MAX_INVOCATION_LIMIT) : DEFAULT_INVOCATION_LIMIT;
    const params: Record<string, unknown> = { limit };
    const used: (keyof typeof FILTERS)[] = [];
    for (const name of Object.keys(FILTERS) as (keyof typeof FILTERS)[]) {
      const value = filter[name];
      if (value === undefined) continue;
      used.push(name);
      // A since in any parseable form compares as stored text; an unparseable one is taken as is.
      params[name] = name === 'since' ? (timestamp(value) ?? value) : value;
    }
    const where = used.length === 0 ? '' : `WHERE ${used.map((name) => FILTERS[name]).join(' AND ')}`;
    const sql = `SELECT id, at, server, kind, key, duration_ms, status, session, error_code FROM invocations ${where} ORDER BY at DESC, id DESC LIMIT @limit`;
    let select = this.selects.get(sql);
    if (!select) {
      select = this.db.prepare(sql);
      this.selects.set(sql, select);
    }
    return select.all(params);
  }
}
