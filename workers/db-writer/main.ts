// The DB writer worker: the only SQLite writer. Spawned by src/db/writer-handle.ts
// with a DbInit (plus an optional events port) as workerData; serves DbWriterApi
// over comlink on parentPort, posts each committed audit entry on the events port,
// and prunes the history tables by itself every pruneIntervalMs.
import { closeSync, openSync } from 'node:fs';
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import Database from 'better-sqlite3';
import type { DbInit, DbWriterApi } from '../../src/protocol/db.js';
import type { Result } from '../../src/protocol/errors.js';
import { Comlink, endpoint } from '../../src/protocol/comlink.js';
import { AuditLog } from './audit.js';
import { ClientStore } from './clients.js';
import { InvocationLog } from './invocations.js';
import { applyMigrations, checkNotNewer, readMigrations } from './migrate.js';
import { PreferenceStore } from './preferences.js';
import { RetentionStore, yieldToEventLoop } from './retention.js';
import { loadOrCreateKey } from './secrets.js';
import { OAuthStore } from './oauth-tokens.js';
import { serverNotFound, ServerStore } from './servers.js';
import type { WriterEvent } from './events.js';
import { toolsetNotFound, ToolsetStore } from './toolsets.js';

const BUSY_TIMEOUT_MS = 5_000;
const DEFAULT_PRUNE_INTERVAL_MS = 60 * 60_000;
const FIRST_PRUNE_MAX_DELAY_MS = 10_000;
/** Rows per DELETE: a few milliseconds each, so a queued call waits at most that long. */
const PRUNE_BATCH_ROWS = 500;

interface Stores {
  servers: ServerStore;
  preferences: PreferenceStore;
  audit: AuditLog;
  invocations: InvocationLog;
  retention: RetentionStore;
  clients: ClientStore;
  oauth: OAuthStore;
  toolsets: ToolsetStore;
}

/** What writer-handle passes: the DbInit and, when someone listens, the port for events. */
const init = workerData as DbInit & { events?: MessagePort };
const events = init.events ?? null;

function post(event: WriterEvent): void {
  events?.postMessage(event);
}
let db: Database.Database | null = null;
let stores: Stores | null = null;

function ready(): Stores {
  if (!stores) throw new Error('the database is not open: migrate() first');
  return stores;
}

function open(): Result<{ version: number }> {
  const migrations = readMigrations(init.migrationsDir);
  db ??= openDatabase(init.dbPath);
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
  const migrated = applyMigrations(db, migrations, init.dbPath);
  if (!migrated.ok) return migrated;
  if (!stores) {
    const audit = new AuditLog(db);
    stores = {
      audit,
      servers: new ServerStore(db, key, audit),
      preferences: new PreferenceStore(db, audit),
      invocations: new InvocationLog(db),
      retention: new RetentionStore(db, audit),
      clients: new ClientStore(db, audit),
      oauth: new OAuthStore(db, key),
      toolsets: new ToolsetStore(db, audit),
    };
    stores.servers.sealClearArgs();
    schedulePrune(true);
  }
  return migrated;
}

/** The file is made 0600 before SQLite opens it: SQLite gives -wal and -shm the database file's mode (its own default is 0644). */
function openDatabase(path: string): Database.Database {
  closeSync(openSync(path, 'a', 0o600));
  return new Database(path, { timeout: BUSY_TIMEOUT_MS });
}

let pruneTimer: NodeJS.Timeout | null = null;

/** The periodic prune: one run at a time, the next one scheduled when this one ends. */
function schedulePrune(first: boolean): void {
  const interval = init.pruneIntervalMs ?? DEFAULT_PRUNE_INTERVAL_MS;
  if (!(interval > 0) || !stores) return;
  const delay = first ? Math.min(interval, FIRST_PRUNE_MAX_DELAY_MS) : interval;
  pruneTimer = setTimeout(() => {
    pruneTimer = null;
    void prune()
      .then((pruned) => post({ type: 'pruned', pruned, periodic: true }))
      .catch((error: Error) => {
        if (stores) post({ type: 'prune_failed', message: error.message });
      })
      .finally(() => schedulePrune(false));
  }, delay);
  pruneTimer.unref();
}

function prune() {
  return ready().retention.prune({
    batchSize: PRUNE_BATCH_ROWS,
    yieldBetween: async () => {
      await yieldToEventLoop();
      if (!stores) throw new Error('the database was closed during the prune');
    },
  });
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
  async setOwnWords(server, type, key, words, actor) {
    const { servers, preferences } = ready();
    const id = servers.idOf(server);
    if (id === null) return serverNotFound(server);
    return preferences.setOwnWords(id, server, type, key, words, actor);
  },

  async audit(actor, eventType, server, payload) {
    ready().audit.record(actor, eventType, server, payload);
  },
  async listAudit(filter) {
    return ready().audit.list(filter);
  },

  async recordInvocations(records) {
    ready().invocations.record(records);
  },
  async listInvocations(filter) {
    return ready().invocations.list(filter ?? {});
  },
  async listRetention() {
    return ready().retention.list();
  },
  async setRetention(table, days, actor) {
    return ready().retention.set(table, days, actor);
  },
  async prune() {
    return prune();
  },

  async listClients() {
    return ready().clients.list();
  },
  async addClient(name, tokenHash, actor, toolset = null) {
    const { clients, toolsets } = ready();
    if (toolset !== null && !toolsets.exists(toolset)) return toolsetNotFound(toolset);
    return clients.add(name, tokenHash, actor, toolset);
  },
  async bindClient(name, toolset, actor) {
    return ready().toolsets.bind(name, toolset, actor);
  },

  async listToolsets() {
    return ready().toolsets.list();
  },
  async createToolset(spec, actor) {
    return ready().toolsets.create(spec, actor);
  },
  async updateToolset(spec, actor) {
    return ready().toolsets.update(spec, actor);
  },
  async deleteToolset(name, actor) {
    return ready().toolsets.remove(name, actor);
  },
  async revokeClient(name, actor) {
    return ready().clients.revoke(name, actor);
  },

  async getOAuth(server) {
    return ready().oauth.get(server);
  },
  async saveOAuth(server, record) {
    ready().oauth.save(server, record);
  },

  async close() {
    // Folds the WAL back into coffer.db, so the file alone is the whole database.
    if (stores) db?.pragma('wal_checkpoint(TRUNCATE)');
    closeDb();
  },
};

function closeDb(): void {
  if (pruneTimer) clearTimeout(pruneTimer);
  pruneTimer = null;
  db?.close();
  db = null;
  stores = null;
}

/**
 * Every method publishes the audit entries it recorded once it returned (its
 * transaction committed), and drops them if it threw (rolled back). Methods that
 * audit are synchronous inside, so entries of two calls never mix.
 */
function publishingAudit(target: DbWriterApi): DbWriterApi {
  const wrapped: Record<string, unknown> = {};
  for (const [name, method] of Object.entries(target) as [string, (...args: unknown[]) => Promise<unknown>][]) {
    wrapped[name] = async (...args: unknown[]) => {
      try {
        const result = await method(...args);
        for (const entry of stores?.audit.takePending() ?? []) post({ type: 'audit', entry });
        return result;
      } catch (error) {
        stores?.audit.discardPending();
        throw error;
      }
    };
  }
  return wrapped as unknown as DbWriterApi;
}

Comlink.expose(publishingAudit(api), endpoint(parentPort!));
