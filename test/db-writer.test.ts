// The DB writer through its real worker, on real SQLite files in a temp dir.
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import t, { type Test } from 'tap';
import { openDbWriter, superviseDbWriter } from '../src/db/writer-handle.js';
import { DIST_ROOT, MIGRATIONS_DIR, workerFile } from '../src/paths.js';
import type { DbInit } from '../src/protocol/db.js';
import type { ErrorBody } from '../src/protocol/errors.js';
import type { ServerConfig } from '../src/protocol/server-config.js';
import { parseServerConfig, REDACTED } from '../src/registry/server-config.js';
import { readMigrations } from '../workers/db-writer/migrate.js';
import { openWriter, sleep, tempInit as writerInit } from './helpers/writer.js';

const tempInit = (t: Test, migrationsDir = MIGRATIONS_DIR): DbInit => writerInit(t, 'coffer-db-writer-', { migrationsDir });

/** A migrations folder holding only the first `count` of the real files. */
function firstMigrations(t: Test, count: number): string {
  const dir = mkdtempSync(join(tmpdir(), 'coffer-migrations-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  for (const migration of readMigrations(MIGRATIONS_DIR).slice(0, count)) copyFileSync(join(MIGRATIONS_DIR, migration.file), join(dir, migration.file));
  return dir;
}

/** A direct read-only look at the file, for what the API does not show. */
function inspect<T>(dbPath: string, look: (db: Database.Database) => T): T {
  const db = new Database(dbPath, { readonly: true });
  try {
    return look(db);
  } finally {
    db.close();
  }
}

function config(input: Record<string, unknown>): ServerConfig {
  const parsed = parseServerConfig(input);
  if (!parsed.ok) throw new Error(parsed.error.message);
  return parsed.value;
}

const stdio = (name: string, env: Record<string, string> = {}, extra: Record<string, unknown> = {}): ServerConfig =>
  config({ name, transport: { type: 'stdio', command: 'node', args: ['server.js'], env }, ...extra });

const sha = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

t.test('migrations', async (t) => {
  t.test('a fresh database gets every migration, WAL and the seeded retention', async (t) => {
    const init = tempInit(t);
    const writer = await openWriter(t, init);
    const latest = readMigrations(MIGRATIONS_DIR).length;
    t.same(await writer.api.migrate(), { ok: true, value: { version: latest } }, 'running again is a no-op');
    await writer.close();
    inspect(init.dbPath, (db) => {
      t.equal(db.pragma('user_version', { simple: true }), latest);
      t.equal(db.pragma('journal_mode', { simple: true }), 'wal');
      const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").pluck().all();
      t.same(tables, ['audit_log', 'invocations', 'mcp_capability_preferences', 'mcp_clients', 'mcp_servers', 'oauth_credentials', 'retention_policies', 'toolsets']);
      const preferenceColumns = db.prepare("SELECT name FROM pragma_table_info('mcp_capability_preferences')").pluck().all();
      t.same(preferenceColumns, ['id', 'resource_id', 'capability_type', 'capability_key', 'enabled', 'first_seen_at', 'last_seen_at', 'own_name', 'own_description'], "R1: no upstream names, schemas or descriptions (only the user's own words)");
      t.same(db.prepare('SELECT table_name, days FROM retention_policies ORDER BY table_name').all(), [
        { table_name: 'audit', days: 365 },
        { table_name: 'invocations', days: 30 },
      ]);
    });
    t.equal(statSync(init.keyPath).mode & 0o777, 0o600, 'key file is 0600');
    t.equal(readFileSync(init.keyPath).length, 32);
  });

  t.test('an older database is brought up to date, keeping its data', async (t) => {
    const init = tempInit(t, firstMigrations(t, 1));
    const old = await openWriter(t, init);
    t.same(await old.api.migrate(), { ok: true, value: { version: 1 } });
    t.ok((await old.api.createServer(stdio('kept', { TOKEN: 'abc' }), 'cli')).ok);
    await old.close();

    const writer = await openWriter(t, { ...init, migrationsDir: MIGRATIONS_DIR });
    t.same(await writer.api.migrate(), { ok: true, value: { version: readMigrations(MIGRATIONS_DIR).length } });
    t.same((await writer.api.getServer('kept'))?.config.transport, { type: 'stdio', command: 'node', args: ['server.js'], env: { TOKEN: 'abc' }, cwd: null });
    await writer.close();
    inspect(init.dbPath, (db) => t.equal(db.prepare('SELECT count(*) FROM retention_policies').pluck().get(), 2));
  });

  t.test('003 turns the TEXT error_code of 002 into an INTEGER and indexes every filter', async (t) => {
    const init = tempInit(t, firstMigrations(t, 2));
    const old = await openWriter(t, init);
    await old.close();
    const db = new Database(init.dbPath);
    const insert = db.prepare('INSERT INTO invocations (at, server, kind, key, duration_ms, status, session, error_code) VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
    insert.run('2025-01-01T00:00:00.000Z', 'up', 'tool', 'a', 3, 'error', 's1', '-32000');
    insert.run('2025-01-01T00:00:01.000Z', 'up', 'prompt', 'p', 1, 'ok', 's1', null);
    insert.run('2025-01-01T00:00:02.000Z', 'up', 'tool', 'b', 2, 'error', null, 'not a number');
    db.close();

    const writer = await openWriter(t, { ...init, migrationsDir: MIGRATIONS_DIR });
    t.same(await writer.api.migrate(), { ok: true, value: { version: readMigrations(MIGRATIONS_DIR).length } });
    t.same((await writer.api.listInvocations({})).map((row) => [row.key, row.error_code, row.session]), [['b', null, null], ['p', null, 's1'], ['a', -32000, 's1']]);
    await writer.close();
    inspect(init.dbPath, (db) => {
      t.same(db.prepare("SELECT name, type FROM pragma_table_info('invocations') WHERE name = 'error_code'").get(), { name: 'error_code', type: 'INTEGER' });
      const plan = (sql: string) => (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as { detail: string }[]).map((row) => row.detail).join(' | ');
      const order = 'ORDER BY at DESC, id DESC LIMIT 10';
      for (const [where, index] of [
        ['', 'invocations_at'],
        ["WHERE server = 'up'", 'invocations_server_at'],
        ["WHERE status = 'error'", 'invocations_status_at'],
        ["WHERE at >= '2025'", 'invocations_at'],
      ]) {
        const detail = plan(`SELECT * FROM invocations ${where} ${order}`);
        t.match(detail, new RegExp(`USING INDEX ${index}`), `${where || 'no filter'}: ${detail}`);
        t.notMatch(detail, /TEMP B-TREE/, `${where || 'no filter'}: no sort`);
      }
      t.match(plan("DELETE FROM invocations WHERE id IN (SELECT id FROM invocations WHERE at < '2025' ORDER BY at LIMIT 500)"), /invocations_at/, 'prune walks the at index');
      t.match(plan("DELETE FROM audit_log WHERE id IN (SELECT id FROM audit_log WHERE at < '2025' ORDER BY at LIMIT 500)"), /audit_log_at/);
    });
  });

  t.test('008 keeps every invocation and checks a row without building a temporary b-tree per insert', async (t) => {
    const init = tempInit(t, firstMigrations(t, 7));
    const old = await openWriter(t, init);
    await old.close();
    const columns = 'id, at, server, kind, key, duration_ms, status, session, error_code';
    const rows = [
      [7, '2025-01-01T00:00:00.000Z', 'up', 'tool', 'a', 3, 'error', 's1', -32000],
      [9, '2025-01-01T00:00:01.000Z', 'up', 'prompt', 'p', 1, 'denied', null, null],
      [12, '2025-01-01T00:00:02.000Z', 'web', 'resource', 'r', 0, 'timeout', 's2', -32001],
    ];
    const sql = 'INSERT INTO invocations (at, server, kind, key, duration_ms, status, session, error_code) VALUES (?, ?, ?, ?, ?, ?, ?, ?)';
    const temporaryTrees = (db: Database.Database) =>
      (db.prepare(`EXPLAIN ${sql}`).all('2025-01-01T00:00:00.000Z', 'up', 'tool', 'x', 1, 'ok', null, null) as { opcode: string }[]).filter((row) => row.opcode === 'OpenEphemeral').length;
    const db = new Database(init.dbPath);
    try {
      t.ok(temporaryTrees(db) > 0, 'before 008, an insert builds its IN lists');
      const insert = db.prepare(`INSERT INTO invocations (${columns}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`);
      for (const row of rows) insert.run(...row);
    } finally {
      db.close();
    }

    const writer = await openWriter(t, { ...init, migrationsDir: MIGRATIONS_DIR });
    t.same(await writer.api.migrate(), { ok: true, value: { version: readMigrations(MIGRATIONS_DIR).length } });
    await writer.close();
    const db2 = new Database(init.dbPath);
    t.teardown(() => db2.close());
    t.same(db2.prepare(`SELECT ${columns} FROM invocations ORDER BY id`).raw().all(), rows, 'every row and id kept');
    t.equal(temporaryTrees(db2), 0, 'no temporary b-tree per insert');
    const add = db2.prepare(sql);
    t.throws(() => add.run('2025-01-01T00:00:03.000Z', 'up', 'shell', 'x', 1, 'ok', null, null), /CHECK constraint failed/);
    t.throws(() => add.run('2025-01-01T00:00:03.000Z', 'up', 'tool', 'x', 1, 'maybe', null, null), /CHECK constraint failed/);
    t.throws(() => add.run('2025-01-01T00:00:03.000Z', 'up', 'tool', 'x', -1, 'ok', null, null), /CHECK constraint failed/);
    t.throws(() => add.run('2025-01-01T00:00:03.000Z', 'up', 'tool', 'x', 1, 'error', null, 'abc'), /CHECK constraint failed/);
    for (const [kind, status] of [['tool', 'ok'], ['resource', 'error'], ['prompt', 'timeout'], ['tool', 'denied']]) add.run('2025-01-01T00:00:04.000Z', 'up', kind, 'x', 1, status, null, null);
    t.equal(db2.prepare('SELECT count(*) FROM invocations').pluck().get(), rows.length + 4);
    t.same(
      db2.prepare("SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'invocations' ORDER BY name").pluck().all(),
      ['invocations_at', 'invocations_server_at', 'invocations_status_at'],
    );
  });

  t.test('a failing migration is rolled back and named', async (t) => {
    const dir = firstMigrations(t, 1);
    writeFileSync(join(dir, '002_broken.sql'), 'CREATE TABLE half_done (a INTEGER);\nTHIS IS NOT SQL;\n');
    const init = tempInit(t, dir);
    const opened = await openDbWriter(init);
    t.equal(opened.ok, false);
    if (!opened.ok) t.match(opened.error, { code: 'INTERNAL', message: /002_broken\.sql/ });
    inspect(init.dbPath, (db) => {
      t.equal(db.pragma('user_version', { simple: true }), 1, 'the good migration stays applied');
      t.equal(db.prepare("SELECT count(*) FROM sqlite_master WHERE name = 'half_done'").pluck().get(), 0, 'nothing of the failed file is left');
    });
  });

  t.test('a database newer than this build is refused and left untouched', async (t) => {
    const init = tempInit(t);
    const db = new Database(init.dbPath);
    db.pragma('journal_mode = WAL');
    db.exec('CREATE TABLE from_the_future (x); INSERT INTO from_the_future VALUES (1)');
    db.pragma('user_version = 99');
    db.close();
    const before = sha(init.dbPath);

    const opened = await openDbWriter(init);
    t.equal(opened.ok, false);
    if (!opened.ok) t.match(opened.error, { code: 'CONFIG_INVALID', details: { db_version: 99, supported_version: readMigrations(MIGRATIONS_DIR).length } });
    t.equal(sha(init.dbPath), before, 'same bytes');
    t.notOk(existsSync(`${init.dbPath}-wal`), 'no WAL left behind');
    t.notOk(existsSync(init.keyPath), 'no key file created');
  });

  t.test('a database another process holds is no failed migration: up to date it opens, else the lock is named', async (t) => {
    const init = tempInit(t, firstMigrations(t, 1));
    const old = await openWriter(t, init);
    await old.close();
    const other = new Database(init.dbPath);
    t.teardown(() => other.close());
    other.exec('BEGIN IMMEDIATE');
    const behind = await openDbWriter({ ...init, migrationsDir: MIGRATIONS_DIR });
    t.notOk(behind.ok);
    if (!behind.ok) {
      t.match(behind.error, { code: 'INTERNAL', details: { file: '002_invocations_retention.sql' } });
      t.match(behind.error.message, /locked by another process/, 'the lock is the reason given, not a broken migration');
    }
    const current = await openDbWriter(init);
    t.ok(current.ok, 'a database with nothing to migrate takes no write lock to open');
    if (current.ok) {
      t.same(await current.value.api.listServers(), []);
      await current.value.close();
    }
    other.exec('ROLLBACK');
  });

  t.test('migration files must be numbered without gaps', async (t) => {
    const dir = firstMigrations(t, 1);
    writeFileSync(join(dir, '003_skipped.sql'), 'SELECT 1;');
    t.throws(() => readMigrations(dir), /without gaps/);
  });
});

t.test('servers: create, duplicate, get, list, update, delete', async (t) => {
  const init = tempInit(t);
  const { api } = await openWriter(t, init);

  const created = await api.createServer(stdio('files'), 'cli');
  t.ok(created.ok);
  if (!created.ok) return;
  t.match(created.value.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  t.equal(created.value.updated_at, created.value.created_at);

  t.match(await api.createServer(stdio('files'), 'cli'), { ok: false, error: { code: 'RESOURCE_ALREADY_EXISTS' } });
  t.match(await api.createServer({ ...stdio('x'), name: 'bad__name' }, 'cli'), { ok: false, error: { code: 'CONFIG_INVALID' } }, 'the writer re-validates');
  t.ok((await api.createServer(config({ name: 'alpha', transport: { type: 'http', url: 'https://example.com/mcp' } }), 'api')).ok);

  t.same((await api.listServers()).map((record) => record.config.name), ['alpha', 'files']);
  t.equal(await api.getServer('nope'), null);
  t.same((await api.getServer('files'))?.config, stdio('files'));

  await sleep(5);
  const updated = await api.updateServer({ ...stdio('files'), description: 'my files', enabled: false }, 'ui');
  t.ok(updated.ok);
  if (updated.ok) {
    t.equal(updated.value.created_at, created.value.created_at);
    t.ok(updated.value.updated_at > created.value.updated_at);
    t.same((await api.getServer('files'))?.config, { ...stdio('files'), description: 'my files', enabled: false });
  }
  t.match(await api.updateServer(stdio('ghost'), 'ui'), { ok: false, error: { code: 'RESOURCE_NOT_FOUND' } });

  t.ok((await api.reconcile('files', 'tool', ['read', 'write'], true)).ok);
  t.equal((await api.getPreferences('files')).length, 2);
  t.same(await api.deleteServer('files', 'cli'), { ok: true, value: null });
  t.match(await api.deleteServer('files', 'cli'), { ok: false, error: { code: 'RESOURCE_NOT_FOUND' } });
  t.equal(await api.getServer('files'), null);
  t.same(await api.getPreferences('files'), []);
  inspect(init.dbPath, (db) => t.equal(db.prepare('SELECT count(*) FROM mcp_capability_preferences').pluck().get(), 0, 'preferences cascaded'));

  const events = (await api.listAudit({ server: 'files' })).map((entry) => [entry.actor, entry.event_type]).reverse();
  t.same(events.filter(([, type]) => type.startsWith('server_')), [
    ['cli', 'server_added'],
    ['ui', 'server_updated'],
    ['cli', 'server_removed'],
  ]);
});

t.test('a stored OAuth record nested deeper than coffer reads is refused with a code, and never hangs its reader', async (t) => {
  const { api } = await openWriter(t, tempInit(t));
  const url = 'https://example.com/mcp';
  t.ok((await api.createServer(config({ name: 'deep', transport: { type: 'http', url } }), 'cli')).ok);
  // Deep enough that the opened record, passed back to the main thread, no longer deserialises there.
  let discovery: Record<string, unknown> = {};
  for (let level = 0; level < 2_000; level++) discovery = { next: discovery };
  await api.saveOAuth('deep', { resource: url, tokens: { access_token: 'secret-token' }, discovery });
  const read = await Promise.race([api.getOAuth('deep'), sleep(5_000).then(() => 'no answer in 5 s')]);
  t.match(read, { ok: false, error: { code: 'INTERNAL', message: /nests deeper than \d+ levels.*coffer mcp auth deep/ } });
  t.notMatch(JSON.stringify(read), 'secret-token', 'the refusal shows nothing of the record');

  await api.saveOAuth('deep', { resource: url, tokens: { access_token: 'fresh' } });
  t.same(await api.getOAuth('deep'), { ok: true, value: { resource: url, tokens: { access_token: 'fresh' } } }, 'a new sign-in replaces it');
});

t.test('reconcile (R4)', async (t) => {
  const { api } = await openWriter(t, tempInit(t));
  await api.createServer(stdio('up'), 'cli');
  await api.createServer(stdio('careful', {}, { auto_enable_new_capabilities: false }), 'cli');

  const first = await api.reconcile('up', 'tool', ['a', 'b', 'a'], true);
  t.ok(first.ok);
  if (!first.ok) return;
  t.same(first.value.map((row) => [row.capability_key, row.enabled]), [['a', true], ['b', true]], 'unseen keys inserted once, per policy');
  t.same(
    (await api.listAudit({ event_type: 'capability_first_seen' })).map((entry) => entry.payload).reverse(),
    [{ type: 'tool', key: 'a', enabled: true }, { type: 'tool', key: 'b', enabled: true }],
  );
  await api.setPreferences('up', [{ capability_type: 'tool', capability_key: 'a', enabled: false }], 'cli');

  await sleep(5);
  const second = await api.reconcile('up', 'tool', ['b', 'c'], true);
  if (!second.ok) return t.fail('reconcile failed');
  const [a, b, c] = second.value;
  const [a0, b0] = first.value;
  t.same([a.capability_key, b.capability_key, c.capability_key], ['a', 'b', 'c'], 'a vanished key is kept');
  t.equal(a.last_seen_at, a0.last_seen_at, 'a vanished key is not touched');
  t.ok(b.last_seen_at > b0.last_seen_at, 'a seen key has last_seen_at bumped');
  t.equal(b.first_seen_at, b0.first_seen_at);

  await sleep(5);
  const third = await api.reconcile('up', 'tool', ['a'], true);
  if (!third.ok) return t.fail('reconcile failed');
  t.match(third.value[0], { capability_key: 'a', enabled: false, first_seen_at: a0.first_seen_at }, 'a flapping key keeps the user choice');
  t.equal((await api.listAudit({ event_type: 'capability_first_seen', server: 'up' })).length, 3, 'only a, b and c were ever first seen');

  t.same(await api.reconcile('up', 'prompt', [], true), { ok: true, value: [] }, 'each type on its own');
  const careful = await api.reconcile('careful', 'resource', ['file:///x'], false);
  t.match(careful, { ok: true, value: [{ server: 'careful', capability_type: 'resource', capability_key: 'file:///x', enabled: false }] });
  t.match(await api.reconcile('ghost', 'tool', ['a'], true), { ok: false, error: { code: 'RESOURCE_NOT_FOUND' } });
  t.same((await api.getPreferences()).map((row) => `${row.server}/${row.capability_key}`), ['careful/file:///x', 'up/a', 'up/b', 'up/c']);
});

t.test('a key with a lone surrogate comes back as itself: reconciled again, switched, and apart from its U+FFFD look-alike', async (t) => {
  const { api } = await openWriter(t, tempInit(t));
  await api.createServer(stdio('up'), 'cli');
  const lone = 'wipe\uD800';
  const lookAlike = 'wipe\uFFFD';
  const first = await api.reconcile('up', 'tool', [lone, 'ok'], true);
  t.same(first.ok && first.value.map((row) => row.capability_key).sort(), ['ok', lone].sort(), 'stored exactly as the upstream named it');
  const again = await api.reconcile('up', 'tool', [lone, 'ok', lookAlike], true);
  t.same(again.ok && again.value.map((row) => row.capability_key).sort(), ['ok', lookAlike, lone].sort(), 'a second list does not insert it again');
  t.match(await api.setPreferences('up', [{ capability_type: 'tool', capability_key: lone, enabled: false }], 'api'), { ok: true, value: [{ capability_key: lone, enabled: false }] });
  const switched = new Map((await api.getPreferences('up')).map((row) => [row.capability_key, row.enabled]));
  t.equal(switched.get(lone), false, 'the switch is on the key the router looks up');
  t.equal(switched.get(lookAlike), true, 'the well-formed look-alike keeps its own switch');
  t.match(await api.setOwnWords('up', 'tool', lone, { name: 'wipe_disk' }, 'api'), { ok: true, value: { capability_key: lone, own_name: 'wipe_disk' } });
  t.match(await api.setOwnWords('up', 'tool', 'ok', { name: lone }, 'api'), { ok: false, error: { code: 'RESOURCE_ALREADY_EXISTS', details: { taken_by: lone } } }, 'its upstream name is taken');
});

t.test('setPreferences is all or nothing and audits real changes only', async (t) => {
  const { api } = await openWriter(t, tempInit(t));
  await api.createServer(stdio('up'), 'cli');
  await api.reconcile('up', 'tool', ['a', 'b'], true);
  await api.reconcile('up', 'prompt', ['p'], false);

  const refused = await api.setPreferences('up', [
    { capability_type: 'tool', capability_key: 'a', enabled: false },
    { capability_type: 'tool', capability_key: 'p', enabled: true },
  ], 'api');
  t.match(refused, { ok: false, error: { code: 'RESOURCE_NOT_FOUND', details: { capability_type: 'tool', capability_key: 'p' } } });
  t.same((await api.getPreferences('up')).map((row) => [row.capability_key, row.enabled]), [['p', false], ['a', true], ['b', true]], 'nothing changed');

  const changed = await api.setPreferences('up', [
    { capability_type: 'tool', capability_key: 'a', enabled: false },
    { capability_type: 'tool', capability_key: 'b', enabled: true },
    { capability_type: 'prompt', capability_key: 'p', enabled: true },
  ], 'ui');
  t.match(changed, { ok: true, value: [{ capability_key: 'a', enabled: false }, { capability_key: 'b', enabled: true }, { capability_key: 'p', enabled: true }] });
  const audited = (await api.listAudit({ server: 'up' })).filter((entry) => entry.event_type.startsWith('capability_') && entry.event_type !== 'capability_first_seen');
  t.same(audited.map((entry) => [entry.actor, entry.event_type, entry.payload]).reverse(), [
    ['ui', 'capability_disabled', { type: 'tool', key: 'a' }],
    ['ui', 'capability_enabled', { type: 'prompt', key: 'p' }],
  ], 'b was already enabled: no entry');
  t.match(await api.setPreferences('ghost', [], 'ui'), { ok: false, error: { code: 'RESOURCE_NOT_FOUND' } });
});

t.test('a client or toolset change whose audit entry cannot be written is not stored either', async (t) => {
  const init = tempInit(t);
  const { api } = await openWriter(t, init);
  const hash = (seed: string) => createHash('sha256').update(seed).digest('hex');
  t.ok((await api.createToolset({ name: 'kept', description: 'before', servers: [] }, 'cli')).ok);
  t.ok((await api.addClient('bound', hash('bound'), 'cli')).ok);
  const before = { clients: await api.listClients(), toolsets: await api.listToolsets() };
  // Any failure of the second statement (a full disk, an I/O error) looks like this one to the first.
  const direct = new Database(init.dbPath);
  direct.exec("CREATE TRIGGER audit_fails BEFORE INSERT ON audit_log BEGIN SELECT RAISE(ABORT, 'disk full (simulated)'); END");
  direct.close();
  const attempts: [string, () => Promise<unknown>][] = [
    ['addClient', () => api.addClient('half', hash('half'), 'cli')],
    ['bindClient', () => api.bindClient('bound', 'kept', 'cli')],
    ['revokeClient', () => api.revokeClient('bound', 'cli')],
    ['createToolset', () => api.createToolset({ name: 'half', description: '', servers: [] }, 'cli')],
    ['updateToolset', () => api.updateToolset({ name: 'kept', description: 'after', servers: [] }, 'cli')],
  ];
  for (const [method, attempt] of attempts) await t.rejects(attempt(), /disk full/, `${method} fails`);
  t.same({ clients: await api.listClients(), toolsets: await api.listToolsets() }, before, 'nothing of the failed changes is stored');
});

t.test('listAudit filters and the free-form audit call', async (t) => {
  const { api } = await openWriter(t, tempInit(t));
  await api.audit('system', 'daemon_started', null, { port: 1234 });
  await sleep(5);
  const since = new Date().toISOString();
  await sleep(5);
  await api.createServer(stdio('one'), 'cli');
  await api.createServer(stdio('two'), 'cli');
  t.match(await api.listAudit({}), [{ event_type: 'server_added', server: 'two' }, { server: 'one' }, { event_type: 'daemon_started', server: null, payload: { port: 1234 } }]);
  t.equal((await api.listAudit({ since })).length, 2);
  t.equal((await api.listAudit({ event_type: 'daemon_started' })).length, 1);
  t.equal((await api.listAudit({ limit: 1 })).length, 1);
  t.equal((await api.listAudit({ server: 'one' })).length, 1);
});

t.test('secret values never reach the database file or the audit log', async (t) => {
  const init = tempInit(t);
  const writer = await openWriter(t, init);
  const envSecret = `ENV-SECRET-${randomBytes(8).toString('hex')}`;
  const newEnvSecret = `ENV-SECRET-${randomBytes(8).toString('hex')}`;
  const headerSecret = `HEADER-SECRET-${randomBytes(8).toString('hex')}`;
  const remote = config({ name: 'remote', transport: { type: 'sse', url: 'https://example.com/sse', headers: { Authorization: `Bearer ${headerSecret}` } } });

  await writer.api.createServer(stdio('local', { API_KEY: envSecret }), 'cli');
  await writer.api.updateServer(stdio('local', { API_KEY: newEnvSecret, OTHER: envSecret }), 'cli');
  await writer.api.createServer(remote, 'api');

  t.same((await writer.api.getServer('local'))?.config.transport, stdio('local', { API_KEY: newEnvSecret, OTHER: envSecret }).transport, 'decrypts back');
  t.same((await writer.api.getServer('remote'))?.config, remote);

  const audit = JSON.stringify(await writer.api.listAudit({}));
  for (const secret of [envSecret, newEnvSecret, headerSecret]) t.notOk(audit.includes(secret), 'not in the audit log');
  t.match(await writer.api.listAudit({ server: 'local', event_type: 'server_updated' }), [
    { payload: { config: { transport: { env: { API_KEY: REDACTED, OTHER: REDACTED } } } } },
  ]);

  const scan = (label: string) => {
    for (const file of [init.dbPath, `${init.dbPath}-wal`].filter(existsSync)) {
      const bytes = readFileSync(file);
      for (const secret of [envSecret, newEnvSecret, headerSecret]) t.equal(bytes.indexOf(secret), -1, `${label}: not in ${file.slice(-10)}`);
    }
  };
  t.ok(statSync(`${init.dbPath}-wal`).size > 0, 'the writes are in the WAL');
  scan('open');
  await writer.close();
  scan('checkpointed');

  writeFileSync(init.keyPath, randomBytes(32));
  const wrongKey = await openWriter(t, init);
  await t.rejects(wrongKey.api.getServer('local'), /cannot decrypt the secrets of server "local"/, 'another key does not open them');
});

t.test('a writer that dies is reported, and its calls fail instead of hanging', async (t) => {
  const init = tempInit(t);
  const worker = new Worker(workerFile('db-writer/main.js'), { workerData: init });
  const deaths: ErrorBody[] = [];
  const opened = await superviseDbWriter(worker, { onDeath: (error) => deaths.push(error) });
  if (!opened.ok) return t.fail(opened.error.message);
  await worker.terminate();
  await t.rejects(opened.value.api.listServers(), { code: 'INTERNAL' }, 'a call fails');
  t.match(deaths, [{ code: 'INTERNAL', message: /DB writer worker exited/ }]);
  await opened.value.close();
  t.equal(deaths.length, 1, 'close after death reports nothing more');
});

t.test('close() then no death report; close twice is fine', async (t) => {
  const deaths: ErrorBody[] = [];
  const opened = await openDbWriter(tempInit(t), { onDeath: (error) => deaths.push(error) });
  if (!opened.ok) return t.fail(opened.error.message);
  await Promise.all([opened.value.close(), opened.value.close()]);
  await t.rejects(opened.value.api.listServers(), { code: 'INTERNAL' });
  t.same(deaths, []);
});

// The child writes through the real handle and prints each acknowledged write; it is SIGKILLed mid-stream.
const CHILD = `
import { writeSync } from 'node:fs';
const { openDbWriter } = await import(process.env.HANDLE_URL);
const opened = await openDbWriter(JSON.parse(process.env.DB_INIT));
if (!opened.ok) { writeSync(2, opened.error.message); process.exit(1); }
const { api } = opened.value;
const stdio = (name) => ({ name, description: '', enabled: true, auto_enable_new_capabilities: true,
  transport: { type: 'stdio', command: 'node', args: [], env: { K: 'v' + name }, cwd: null },
  timeouts: { connect_ms: 30000, request_ms: 120000, list_deadline_ms: 2000 } });
for (let i = 0; ; i++) {
  const name = 's' + i;
  if (!(await api.createServer(stdio(name), 'cli')).ok) process.exit(2);
  writeSync(1, JSON.stringify({ created: name }) + '\\n');
  if (!(await api.reconcile(name, 'tool', ['t1', 't2'], true)).ok) process.exit(3);
  const off = await api.setPreferences(name, [{ capability_type: 'tool', capability_key: 't1', enabled: false }], 'cli');
  if (!off.ok) process.exit(4);
  writeSync(1, JSON.stringify({ disabled: name }) + '\\n');
}
`;

t.test('every acknowledged write survives SIGKILL', async (t) => {
  const init = tempInit(t);
  // A file, not --eval: workers inherit execArgv, and --input-type would break theirs.
  const script = join(init.dbPath, '..', 'child.mjs');
  writeFileSync(script, CHILD);
  const child = spawn(process.execPath, [script], {
    env: { ...process.env, DB_INIT: JSON.stringify(init), HANDLE_URL: pathToFileURL(join(DIST_ROOT, 'src', 'db', 'writer-handle.js')).href },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const acks: { created?: string; disabled?: string }[] = [];
  let buffered = '';
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdout.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    const lines = buffered.split('\n');
    buffered = lines.pop() ?? '';
    for (const line of lines) acks.push(JSON.parse(line));
    if (acks.length >= 60) child.kill('SIGKILL');
  });
  const [, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.on('close', (code, sig) => resolve([code, sig])));
  t.equal(signal, 'SIGKILL', `killed, not exited (${stderr.trim()})`);
  t.ok(acks.length >= 60);
  t.ok(statSync(`${init.dbPath}-wal`).size > 0, 'the writes were still in the WAL');

  const writer = await openWriter(t, init);
  for (const ack of acks) {
    if (ack.created) t.equal((await writer.api.getServer(ack.created))?.config.transport.type, 'stdio', `${ack.created} is there`);
    if (ack.disabled) {
      const rows = await writer.api.getPreferences(ack.disabled);
      t.match(rows, [{ capability_key: 't1', enabled: false }, { capability_key: 't2', enabled: true }], `${ack.disabled}: t1 stays disabled`);
    }
  }
  await writer.close();
  inspect(init.dbPath, (db) => t.equal(db.pragma('integrity_check', { simple: true }), 'ok'));
});
