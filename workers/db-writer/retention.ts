// retention_policies and the prune: how long each history table is kept, and the
// deletion of what is older, in small batches so that other writer calls interleave.
import type { Database, Statement } from 'better-sqlite3';
import type { AuditActor, RetentionPolicy, RetentionTable } from '../../src/protocol/db.js';
import type { Result } from '../../src/protocol/errors.js';
import type { AuditLog } from './audit.js';

export const RETENTION_TABLES: readonly RetentionTable[] = ['audit', 'invocations'];
export const MAX_RETENTION_DAYS = 36_500;
const DAY_MS = 86_400_000;

/** The SQL table each policy prunes; both have an index on `at`. */
const SQL_TABLE: Record<RetentionTable, string> = { audit: 'audit_log', invocations: 'invocations' };

export interface PruneOptions {
  /** Rows per DELETE statement (each its own short transaction). */
  batchSize: number;
  /** Between two batches: lets queued writer calls run. */
  yieldBetween: () => Promise<void>;
}

export const yieldToEventLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export function isRetentionTable(table: unknown): table is RetentionTable {
  return typeof table === 'string' && (RETENTION_TABLES as readonly string[]).includes(table);
}

export class RetentionStore {
  private statements: {
    selectAll: Statement<[], { table_name: string; days: number | null }>;
    upsert: Statement<[string, number | null]>;
    deletes: Record<RetentionTable, Statement<[string, number]>>;
  } | null = null;
  /** Prunes run one after another (the periodic one and prune() calls). */
  private running: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly db: Database,
    private readonly audit: AuditLog,
  ) {}

  /** Prepared on first use: a writer may open a database older than these tables (tests of old builds). */
  private get sql() {
    if (this.statements) return this.statements;
    const db = this.db;
    const deleteOld = (table: string) =>
      db.prepare<[string, number]>(`DELETE FROM ${table} WHERE id IN (SELECT id FROM ${table} WHERE at < ? ORDER BY at LIMIT ?)`);
    this.statements = {
      selectAll: db.prepare('SELECT table_name, days FROM retention_policies'),
      upsert: db.prepare('INSERT INTO retention_policies (table_name, days) VALUES (?, ?) ON CONFLICT (table_name) DO UPDATE SET days = excluded.days'),
      deletes: { audit: deleteOld(SQL_TABLE.audit), invocations: deleteOld(SQL_TABLE.invocations) },
    };
    return this.statements;
  }

  /** Every known table, in a fixed order; a table without a row is kept forever. */
  list(): RetentionPolicy[] {
    const stored = new Map(this.sql.selectAll.all().map((row) => [row.table_name, row.days]));
    return RETENTION_TABLES.map((table) => ({ table, days: stored.get(table) ?? null }));
  }

  set(table: string, days: number | null, actor: AuditActor): Result<RetentionPolicy> {
    if (!isRetentionTable(table)) {
      return {
        ok: false,
        error: {
          code: 'RESOURCE_NOT_FOUND',
          message: `no retention policy for "${table}": the tables are ${RETENTION_TABLES.join(', ')}`,
          details: { table, tables: RETENTION_TABLES },
        },
      };
    }
    if (days !== null && !(Number.isInteger(days) && days >= 1 && days <= MAX_RETENTION_DAYS)) {
      const message = `must be a whole number of days from 1 to ${MAX_RETENTION_DAYS}, or null to keep forever`;
      return {
        ok: false,
        error: { code: 'CONFIG_INVALID', message: `days: ${message}`, details: { errors: [{ field: 'days', message }] } },
      };
    }
    return this.db.transaction((): Result<RetentionPolicy> => {
      const from = this.list().find((policy) => policy.table === table)!.days;
      if (from !== days) {
        this.sql.upsert.run(table, days);
        this.audit.record(actor, 'retention_changed', null, { table, from, to: days });
      }
      return { ok: true, value: { table, days } };
    })();
  }

  /** Deletes what is older than each policy. Concurrent calls run one after another. */
  prune(options: PruneOptions): Promise<Record<RetentionTable, number>> {
    const run = this.running.then(() => this.pruneOnce(options));
    this.running = run.catch(() => {});
    return run;
  }

  private async pruneOnce({ batchSize, yieldBetween }: PruneOptions): Promise<Record<RetentionTable, number>> {
    const pruned: Record<RetentionTable, number> = { audit: 0, invocations: 0 };
    // One cutoff per run: rows that age past it meanwhile wait for the next run.
    const startedAt = Date.now();
    for (const { table, days } of this.list()) {
      if (days === null) continue;
      const cutoff = new Date(startedAt - days * DAY_MS).toISOString();
      for (;;) {
        // The policy may have changed while we yielded: to forever, or to a longer time.
        const current = this.list().find((policy) => policy.table === table)!.days;
        if (current === null || current > days) break;
        const { changes } = this.sql.deletes[table].run(cutoff, batchSize);
        pruned[table] += changes;
        if (changes < batchSize) break;
        await yieldBetween();
      }
    }
    return pruned;
  }
}
