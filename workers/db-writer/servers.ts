// mcp_servers: one row per upstream, its config stored with secrets sealed.
import type { Database, Statement } from 'better-sqlite3';
import type { AuditActor, ServerRecord } from '../../src/protocol/db.js';
import type { Result } from '../../src/protocol/errors.js';
import type { ServerConfig } from '../../src/protocol/server-config.js';
import { parseServerConfig, redactConfig } from '../../src/registry/server-config.js';
import type { AuditLog } from './audit.js';
import { now } from './clock.js';
import { openConfig, sealConfig } from './secrets.js';

interface ServerRow {
  id: number;
  name: string;
  config: string;
  created_at: string;
  updated_at: string;
}

export function serverNotFound(name: string): Result<never> {
  return { ok: false, error: { code: 'RESOURCE_NOT_FOUND', message: `no server named "${name}"`, details: { server: name } } };
}

export class ServerStore {
  private readonly selectAll: Statement<[], ServerRow>;
  private readonly selectOne: Statement<[string], ServerRow>;
  private readonly insert: Statement<[string, string, string, string], ServerRow>;
  private readonly update: Statement<[string, string, string], ServerRow>;
  private readonly remove: Statement<[string]>;

  constructor(
    private readonly db: Database,
    private readonly key: Buffer,
    private readonly audit: AuditLog,
  ) {
    const columns = 'id, name, config, created_at, updated_at';
    this.selectAll = db.prepare(`SELECT ${columns} FROM mcp_servers ORDER BY name`);
    this.selectOne = db.prepare(`SELECT ${columns} FROM mcp_servers WHERE name = ?`);
    this.insert = db.prepare(
      `INSERT INTO mcp_servers (name, config, created_at, updated_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (name) DO NOTHING RETURNING ${columns}`,
    );
    this.update = db.prepare(`UPDATE mcp_servers SET config = ?, updated_at = ? WHERE name = ? RETURNING ${columns}`);
    // Preferences go with the row (ON DELETE CASCADE).
    this.remove = db.prepare('DELETE FROM mcp_servers WHERE name = ?');
  }

  /**
   * Rows written before stdio args were sealed get them sealed (config unchanged, so no audit
   * entry), with secure_delete on so the page keeps no copy of the clear text.
   */
  sealClearArgs(): void {
    const clear = this.selectAll.all().filter((row) => {
      const stored = JSON.parse(row.config) as { transport: { type: string; args?: unknown } };
      return stored.transport.type === 'stdio' && Array.isArray(stored.transport.args);
    });
    if (clear.length === 0) return;
    const reseal = this.db.prepare<[string, number]>('UPDATE mcp_servers SET config = ? WHERE id = ?');
    this.db.pragma('secure_delete = ON');
    try {
      this.db.transaction(() => {
        for (const row of clear) reseal.run(sealConfig(this.key, openConfig(this.key, row.name, row.config)), row.id);
      })();
    } finally {
      this.db.pragma('secure_delete = OFF');
    }
  }

  list(): ServerRecord[] {
    return this.selectAll.all().map((row) => this.toRecord(row));
  }

  get(name: string): ServerRecord | null {
    const row = this.selectOne.get(name);
    return row ? this.toRecord(row) : null;
  }

  /** The row id preferences hang off, or null. */
  idOf(name: string): number | null {
    return this.selectOne.get(name)?.id ?? null;
  }

  create(input: ServerConfig, actor: AuditActor): Result<ServerRecord> {
    // Re-validated here: nothing invalid is ever persisted, whoever the caller.
    const parsed = parseServerConfig(input);
    if (!parsed.ok) return parsed;
    const config = parsed.value;
    return this.db.transaction((): Result<ServerRecord> => {
      const at = now();
      const row = this.insert.get(config.name, sealConfig(this.key, config), at, at);
      if (!row) {
        return {
          ok: false,
          error: { code: 'RESOURCE_ALREADY_EXISTS', message: `a server named "${config.name}" already exists`, details: { server: config.name } },
        };
      }
      this.audit.record(actor, 'server_added', config.name, { config: redactConfig(config, { allArgs: true }) });
      return { ok: true, value: this.toRecord(row, config) };
    })();
  }

  replace(input: ServerConfig, actor: AuditActor): Result<ServerRecord> {
    const parsed = parseServerConfig(input);
    if (!parsed.ok) return parsed;
    const config = parsed.value;
    return this.db.transaction((): Result<ServerRecord> => {
      const row = this.update.get(sealConfig(this.key, config), now(), config.name);
      if (!row) return serverNotFound(config.name);
      this.audit.record(actor, 'server_updated', config.name, { config: redactConfig(config, { allArgs: true }) });
      return { ok: true, value: this.toRecord(row, config) };
    })();
  }

  delete(name: string, actor: AuditActor): Result<null> {
    return this.db.transaction((): Result<null> => {
      if (this.remove.run(name).changes === 0) return serverNotFound(name);
      this.audit.record(actor, 'server_removed', name, {});
      return { ok: true, value: null };
    })();
  }

  /** `config` when the caller already holds it in clear (saves a decryption). */
  private toRecord(row: ServerRow, config?: ServerConfig): ServerRecord {
    return {
      config: config ?? openConfig(this.key, row.name, row.config),
      created_at: row.created_at,
      updated_at: row.updated_at,
    };
  }
}
