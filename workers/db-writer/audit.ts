// audit_log: who changed what. Callers hand in payloads already free of secret values.
import type { Database, Statement } from 'better-sqlite3';
import type { AuditActor, AuditEntry } from '../../src/protocol/db.js';
import { now } from './clock.js';

export interface AuditFilter {
  server?: string;
  event_type?: string;
  since?: string;
  limit?: number;
}

const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 1000;

interface AuditRow {
  id: number;
  at: string;
  actor: AuditActor;
  event_type: string;
  server: string | null;
  payload: string;
}

export class AuditLog {
  private readonly insert: Statement<[string, AuditActor, string, string | null, string]>;
  private readonly select: Statement<[Required<Record<keyof AuditFilter, unknown>>], AuditRow>;

  constructor(db: Database) {
    this.insert = db.prepare('INSERT INTO audit_log (at, actor, event_type, server, payload) VALUES (?, ?, ?, ?, ?)');
    // One statement for every filter combination: an absent filter is NULL.
    this.select = db.prepare(
      `SELECT id, at, actor, event_type, server, payload FROM audit_log
       WHERE (@server IS NULL OR server = @server)
         AND (@event_type IS NULL OR event_type = @event_type)
         AND (@since IS NULL OR at >= @since)
       ORDER BY id DESC LIMIT @limit`,
    );
  }

  record(actor: AuditActor, eventType: string, server: string | null, payload: Record<string, unknown>): void {
    this.insert.run(now(), actor, eventType, server, JSON.stringify(payload));
  }

  /** Newest first. */
  list(filter: AuditFilter): AuditEntry[] {
    const limit = Number.isInteger(filter.limit) ? Math.min(Math.max(filter.limit as number, 1), MAX_LIMIT) : DEFAULT_LIMIT;
    const rows = this.select.all({
      server: filter.server ?? null,
      event_type: filter.event_type ?? null,
      since: filter.since ?? null,
      limit,
    });
    return rows.map((row) => ({ ...row, payload: JSON.parse(row.payload) as Record<string, unknown> }));
  }
}
