// The DB writer worker: the only SQLite writer. Spawned by src/db/writer-handle.ts
// with a DbInit as workerData; serves DbWriterApi over comlink on parentPort.
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import type { DbInit, DbWriterApi } from '../../src/protocol/db.js';
import type { Result } from '../../src/protocol/errors.js';
import { Comlink, endpoint } from '../../src/protocol/comlink.js';
import { AuditLog } from './audit.js';
import { applyMigrations, checkNotNewer, readMigrations } from './migrate.js';
import { PreferenceStore } from './preferences.js';
import { loadOrCreateKey } from './secrets.js';
import { serverNotFound, ServerStore } from './servers.js';

const BUSY_TIMEOUT_MS = 5_000;

interface Stores {
  servers: ServerStore;
  preferences: PreferenceStore;
  audit: AuditLog;
}

const init = workerData as DbInit;
let db: Database.Database | null = null;
let stores: Stores | null = null;

function ready(): Stores {
  if (!stores) throw new Error('the database is not open: migrate() first');
  return stores;
}

function open(): Result<{ version: number }> {
  const migrations = readMigrations(init.migrationsDir);
  db ??= new Database(init.dbPath, { timeout: BUSY_TIMEOUT_MS });
  // Only reads so far: a refused database stays byte for byte as it was.
  const notNewer = checkNotNewer(db, migrations, init.dbPath);
  if (!notNewer.ok) return notNewer;
  const key = loadOrCreateKey(init.keyPath);
  // WAL + synchronous=NORMAL: a commit is in the OS before the API answers, so it
  // survives a killed process (not an OS crash, which we accept).
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  const migrated = applyMigrations(db, migrations);
  if (!migrated.ok) return migrated;
  if (!stores) {
    const audit = new AuditLog(db);
    stores = { audit, servers: new ServerStore(db, key, audit), preferences: new PreferenceStore(db, audit) };
  }
  return migrated;
}

const api: DbWriterApi = {
  async migrate() {
    try {
      const result = open();
      if (!result.ok && !stores) closeDb();
      return result;
    } catch (error) {
      closeDb();
      return { ok: false, error: { code: 'INTERNAL', message: `database ${init.dbPath} not opened: ${(error as Error).message}` } };
    }
  },

  async listServers() {
    return ready().servers.list();
  },
  async getServer(name) {
    return ready().servers.get(name);
  },
  async createServer(config, actor) {
    return ready().servers.create(config, actor);
  },
  async updateServer(config, actor) {
    return ready().servers.replace(config, actor);
  },
  async deleteServer(name, actor) {
    return ready().servers.delete(name, actor);
  },

  async reconcile(server, type, keys, autoEnable) {
    const { servers, preferences } = ready();
    const id = servers.idOf(server);
    if (id === null) return serverNotFound(server);
    return { ok: true, value: preferences.reconcile(id, server, type, keys, autoEnable) };
  },
  async getPreferences(server) {
    const { servers, preferences } = ready();
    if (server === undefined) return preferences.list();
    const id = servers.idOf(server);
    return id === null ? [] : preferences.list(id);
  },
  async setPreferences(server, changes, actor) {
    const { servers, preferences } = ready();
    const id = servers.idOf(server);
    if (id === null) return serverNotFound(server);
    return preferences.set(id, server, changes, actor);
  },

  async audit(actor, eventType, server, payload) {
    ready().audit.record(actor, eventType, server, payload);
  },
  async listAudit(filter) {
    return ready().audit.list(filter);
  },

  async close() {
    // Folds the WAL back into coffer.db, so the file alone is the whole database.
    if (stores) db?.pragma('wal_checkpoint(TRUNCATE)');
    closeDb();
  },
};

function closeDb(): void {
  db?.close();
  db = null;
  stores = null;
}

Comlink.expose(api, endpoint(parentPort!));
