// mcp_clients: the named credentials of MCP clients, each kept as the SHA-256
// of its token only. The token itself never reaches this worker.
import type { Database, Statement } from 'better-sqlite3';
import type { AuditActor, ClientCredential } from '../../src/protocol/db.js';
import type { Result } from '../../src/protocol/errors.js';
import type { AuditLog } from './audit.js';
import { now } from './clock.js';

const COLUMNS = 'name, token_hash, created_at, toolset';

interface Statements {
  selectAll: Statement<[], ClientCredential>;
  insert: Statement<[string, string, string, string | null], ClientCredential>;
  remove: Statement<[string]>;
}

export class ClientStore {
  private prepared: Statements | null = null;

  constructor(
    private readonly db: Database,
    private readonly audit: AuditLog,
  ) {}

  /** Prepared on first use: a writer may open a database older than this table (tests of old builds). */
  private get statements(): Statements {
    return (this.prepared ??= {
      selectAll: this.db.prepare(`SELECT ${COLUMNS} FROM mcp_clients ORDER BY name`),
      insert: this.db.prepare(`INSERT INTO mcp_clients (name, token_hash, created_at, toolset) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING ${COLUMNS}`),
      remove: this.db.prepare('DELETE FROM mcp_clients WHERE name = ?'),
    });
  }

  list(): ClientCredential[] {
    return this.statements.selectAll.all();
  }

  /** RESOURCE_ALREADY_EXISTS when the name (or, never in practice, the hash) is taken. Audited without the hash. The toolset must exist. */
  add(name: string, tokenHash: string, actor: AuditActor, toolset: string | null): Result<ClientCredential> {
    // One transaction with its audit entry: a change that fails is not stored half.
    return this.db.transaction((): Result<ClientCredential> => {
      const row = this.statements.insert.get(name, tokenHash, now(), toolset);
      if (!row) return { ok: false, error: { code: 'RESOURCE_ALREADY_EXISTS', message: `a client named "${name}" exists: revoke it first or pick another name`, details: { client: name } } };
      this.audit.record(actor, 'client_added', null, toolset === null ? { client: name } : { client: name, toolset });
      return { ok: true, value: row };
    })();
  }

  revoke(name: string, actor: AuditActor): Result<null> {
    return this.db.transaction((): Result<null> => {
      if (this.statements.remove.run(name).changes === 0) return { ok: false, error: { code: 'RESOURCE_NOT_FOUND', message: `no client named "${name}": see 'coffer client list'`, details: { client: name } } };
      this.audit.record(actor, 'client_revoked', null, { client: name });
      return { ok: true, value: null };
    })();
  }
}
