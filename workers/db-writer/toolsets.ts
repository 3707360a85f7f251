// toolsets: named views over the merged surface (user configuration), and the
// binding of a client credential to one of them (mcp_clients.toolset).
import type { Database, Statement } from 'better-sqlite3';
import type { AuditActor, ClientCredential } from '../../src/protocol/db.js';
import type { Result } from '../../src/protocol/errors.js';
import { toolsetOptions, type ToolsetRecord, type ToolsetSpec } from '../../src/protocol/toolsets.js';
import type { AuditLog } from './audit.js';
import { now } from './clock.js';

interface Row {
  name: string;
  description: string;
  spec: string;
  created_at: string;
  updated_at: string;
}

interface Statements {
  selectAll: Statement<[], Row>;
  insert: Statement<[string, string, string, string, string], Row>;
  update: Statement<[string, string, string, string], Row>;
  remove: Statement<[string]>;
  exists: Statement<[string], { found: number }>;
  boundClients: Statement<[string], { name: string }>;
  bind: Statement<[string | null, string], ClientCredential>;
}

const COLUMNS = 'name, description, spec, created_at, updated_at';

const toRecord = (row: Row): ToolsetRecord => {
  const spec = JSON.parse(row.spec) as Pick<ToolsetSpec, 'servers' | 'mode' | 'pinned'>;
  return { name: row.name, description: row.description, servers: spec.servers, ...toolsetOptions(spec), created_at: row.created_at, updated_at: row.updated_at };
};

/** The rules, mode and pins are kept in `spec`: name and description have columns of their own. */
const specText = (spec: ToolsetSpec): string => JSON.stringify({ servers: spec.servers, ...toolsetOptions(spec) });

export function toolsetNotFound(name: string): Result<never> {
  return { ok: false, error: { code: 'RESOURCE_NOT_FOUND', message: `no toolset named "${name}": see 'coffer toolset list'`, details: { toolset: name } } };
}

export class ToolsetStore {
  private prepared: Statements | null = null;

  constructor(
    private readonly db: Database,
    private readonly audit: AuditLog,
  ) {}

  /** Prepared on first use: a writer may open a database older than this table (tests of old builds). */
  private get statements(): Statements {
    const db = this.db;
    return (this.prepared ??= {
      selectAll: db.prepare(`SELECT ${COLUMNS} FROM toolsets ORDER BY name`),
      insert: db.prepare(`INSERT INTO toolsets (name, description, spec, created_at, updated_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING ${COLUMNS}`),
      update: db.prepare(`UPDATE toolsets SET description = ?, spec = ?, updated_at = ? WHERE name = ? RETURNING ${COLUMNS}`),
      remove: db.prepare('DELETE FROM toolsets WHERE name = ?'),
      exists: db.prepare('SELECT 1 AS found FROM toolsets WHERE name = ?'),
      boundClients: db.prepare('SELECT name FROM mcp_clients WHERE toolset = ? ORDER BY name'),
      bind: db.prepare('UPDATE mcp_clients SET toolset = ? WHERE name = ? RETURNING name, token_hash, created_at, toolset'),
    });
  }

  list(): ToolsetRecord[] {
    return this.statements.selectAll.all().map(toRecord);
  }

  exists(name: string): boolean {
    return this.statements.exists.get(name) !== undefined;
  }

  /** Each change is one transaction with its audit entry: a change that fails is not stored half. */
  create(spec: ToolsetSpec, actor: AuditActor): Result<ToolsetRecord> {
    return this.db.transaction((): Result<ToolsetRecord> => {
      const at = now();
      const row = this.statements.insert.get(spec.name, spec.description, specText(spec), at, at);
      if (!row) return { ok: false, error: { code: 'RESOURCE_ALREADY_EXISTS', message: `a toolset named "${spec.name}" exists: update it or pick another name`, details: { toolset: spec.name } } };
      this.audit.record(actor, 'toolset_added', null, { toolset: spec.name, spec: { description: spec.description, servers: spec.servers, mode: spec.mode ?? 'full', pinned: spec.pinned ?? [] } });
      return { ok: true, value: toRecord(row) };
    })();
  }

  update(spec: ToolsetSpec, actor: AuditActor): Result<ToolsetRecord> {
    return this.db.transaction((): Result<ToolsetRecord> => {
      const row = this.statements.update.get(spec.description, specText(spec), now(), spec.name);
      if (!row) return toolsetNotFound(spec.name);
      this.audit.record(actor, 'toolset_updated', null, { toolset: spec.name, spec: { description: spec.description, servers: spec.servers, mode: spec.mode ?? 'full', pinned: spec.pinned ?? [] } });
      return { ok: true, value: toRecord(row) };
    })();
  }

  remove(name: string, actor: AuditActor): Result<null> {
    return this.db.transaction((): Result<null> => {
      const clients = this.statements.boundClients.all(name).map((client) => client.name);
      if (clients.length > 0) {
        return { ok: false, error: { code: 'RESOURCE_IN_USE', message: `toolset "${name}" is bound to client(s) ${clients.join(', ')}: bind them elsewhere first ('coffer client bind NAME --toolset OTHER' or '--none')`, details: { toolset: name, clients } } };
      }
      if (this.statements.remove.run(name).changes === 0) return toolsetNotFound(name);
      this.audit.record(actor, 'toolset_removed', null, { toolset: name });
      return { ok: true, value: null };
    })();
  }

  /** The client must exist; so must the toolset, unless null. */
  bind(client: string, toolset: string | null, actor: AuditActor): Result<ClientCredential> {
    return this.db.transaction((): Result<ClientCredential> => {
      if (toolset !== null && !this.exists(toolset)) return toolsetNotFound(toolset);
      const row = this.statements.bind.get(toolset, client);
      if (!row) return { ok: false, error: { code: 'RESOURCE_NOT_FOUND', message: `no client named "${client}": see 'coffer client list'`, details: { client } } };
      this.audit.record(actor, 'client_bound', null, { client, toolset });
      return { ok: true, value: row };
    })();
  }
}
