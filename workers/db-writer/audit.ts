// audit_log: who changed what. Callers hand in payloads already free of secret values.
import type { Database, Statement } from 'better-sqlite3';
import type { AuditActor, AuditEntry, DbWriterApi } from '../../src/protocol/db.js';
import { now } from './clock.js';

type AuditFilter = Parameters<DbWriterApi['listAudit']>[0];

const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 10_000;

interface AuditRow {
  id: number;
  at: string;
  actor: AuditActor;
  event_type: string;
  server: string | null;
  payload: string;
}

const FILTERS: { [K in Exclude<keyof AuditFilter, 'limit'>]: string } = {
  server: 'server = @server',
  event_type: 'event_type = @event_type',
  since: 'at >= @since',
};

export class AuditLog {
  private readonly insert: Statement<[string, AuditActor, string, string | null, string], { id: number }>;
  /** Recorded but not yet published: the calling writer method may still roll back. */
  private pending: AuditEntry[] = [];
  /** One prepared statement per combination of filters, made on first use (no `? IS NULL OR`, which defeats the indexes). */
  private readonly selects = new Map<string, Statement<[Record<string, unknown>], AuditRow>>();

  constructor(private readonly db: Database) {
    this.insert = db.prepare('INSERT INTO audit_log (at, actor, event_type, server, payload) VALUES (?, ?, ?, ?, ?) RETURNING id');
  }

  record(actor: AuditActor, eventType: string, server: string | null, payload: Record<string, unknown>): void {
    const at = now();
    const text = JSON.stringify(payload);
    const { id } = this.insert.get(at, actor, eventType, server, text) as { id: number };
    // Parsed back, so a listener sees exactly what listAudit will answer.
    this.pending.push({ id, at, actor, event_type: eventType, server, payload: JSON.parse(text) as Record<string, unknown> });
  }

  /** The entries recorded since the last call, once the writer method that made them returned (committed). */
  takePending(): AuditEntry[] {
    const entries = this.pending;
    this.pending = [];
    return entries;
  }

  /** The writer method threw: its transaction rolled back, so its entries never existed. */
  discardPending(): void {
    this.pending = [];
  }

  /** Newest first. */
  list(filter: AuditFilter): AuditEntry[] {
    const limit = Number.isInteger(filter.limit) ? Math.min(Math.max(filter.limit as number, 1), MAX_LIMIT) : DEFAULT_LIMIT;
    const used = (Object.keys(FILTERS) as (keyof typeof FILTERS)[]).filter((name) => filter[name] !== undefined);
    const where = used.length === 0 ? '' : `WHERE ${used.map((name) => FILTERS[name]).join(' AND ')}`;
    const sql = `SELECT id, at, actor, event_type, server, payload FROM audit_log ${where} ORDER BY id DESC LIMIT @limit`;
    let select = this.selects.get(sql);
    if (!select) {
      select = this.db.prepare(sql);
      this.selects.set(sql, select);
    }
    const params: Record<string, unknown> = { limit };
    for (const name of used) params[name] = filter[name];
    return select.all(params).map((row) => ({ ...row, payload: JSON.parse(row.payload) as Record<string, unknown> }));
  }
}
