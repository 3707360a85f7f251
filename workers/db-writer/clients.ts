// mcp_clients: the named credentials of MCP clients, each kept as the SHA-256
// of its token only. The token itself never reaches this worker.
import type { Database, Statement } from 'better-sqlite3';
import type { AuditActor, ClientCredential } from '../../src/protocol/db.js';
import type { Result } from '../../src/protocol/errors.js';
import type { AuditLog } from './audit.js';
import { now } from './clock.js';

const COLUMNS = 'name, token_hash, created_at';

export class ClientStore {
  private readonly selectAll: Statement<[], ClientCredential>;
  private readonly insert: Statement<[string, string, string], ClientCredential>;
  private readonly remove: Statement<[string]>;

  constructor(
    db: Database,
    private readonly audit: AuditLog,
  ) {
    this.selectAll = db.prepare(`SELECT ${COLUMNS} FROM mcp_clients ORDER BY name`);
    this.insert = db.prepare(`INSERT INTO mcp_clients (name, token_hash, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING RETURNING ${COLUMNS}`);
    this.remove = db.prepare('DELETE FROM mcp_clients WHERE name = ?');
  }

  list(): ClientCredential[] {
    return this.selectAll.all();
  }

  /** RESOURCE_ALREADY_EXISTS when the name (or, never in practice, the hash) is taken. Audited without the hash. */
  add(name: string, tokenHash: string, actor: AuditActor): Result<ClientCredential> {
    const row = this.insert.get(name, tokenHash, now());
    if (!row) return { ok: false, error: { code: 'RESOURCE_ALREADY_EXISTS', message: `a client named "${name}" exists: revoke it first or pick another name`, details: { client: name } } };
    this.audit.record(actor, 'client_added', null, { client: name });
    return { ok: true, value: row };
  }

  revoke(name: string, actor: AuditActor): Result<null> {
    if (this.remove.run(name).changes === 0) return { ok: false, error: { code: 'RESOURCE_NOT_FOUND', message: `no client named "${name}": see 'coffer client list'`, details: { client: name } } };
    this.audit.record(actor, 'client_revoked', null, { client: name });
    return { ok: true, value: null };
  }
}
