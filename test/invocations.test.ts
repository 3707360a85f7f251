// The invocation log: the writer's recordInvocations / listInvocations through the
// real worker on real SQLite, the main-thread batcher (InvocationLog), and GET /invocations.
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import t, { type Test } from 'tap';
import { HttpApi } from '../src/api/http-api.js';
import { auditRoutes } from '../src/api/routes/audit.js';
import { invocationRoutes } from '../src/api/routes/invocations.js';
import { InvocationLog } from '../src/daemon/invocation-log.js';
import type { DbWriterCalls } from '../src/db/writer-handle.js';
import type { DbInit } from '../src/protocol/db.js';
import type { InvocationRecord } from '../src/protocol/events.js';
import { ago, openWriter, sleep, tempInit as writerInit, waitFor } from './helpers/writer.js';

const tempInit = (t: Test, extra: Partial<DbInit> = {}): DbInit => writerInit(t, 'coffer-invocations-', extra);

function record(overrides: Partial<InvocationRecord> = {}): InvocationRecord {
  return { at: new Date().toISOString(), server: 'up', kind: 'tool', key: 'echo', duration_ms: 3, status: 'ok', session: 'sess-1', error_code: null, ...overrides };
}

t.test('recordInvocations and listInvocations: newest first, every filter, limits', async (t) => {
  const { api } = await openWriter(t, tempInit(t));
  t.same(await api.listInvocations({}), [], 'empty at first');
  await api.recordInvocations([
    record({ at: ago(5_000), server: 'files', key: 'read', status: 'ok' }),
    record({ at: ago(4_000), server: 'files', key: 'write', status: 'error', error_code: -32602 }),
    record({ at: ago(3_000), server: 'web', kind: 'resource', key: 'https://example.com/a', status: 'timeout', error_code: -32001 }),
    record({ at: ago(2_000), server: 'web', kind: 'prompt', key: 'summarize', status: 'denied', error_code: -32000 }),
  ]);
  // Arrives later but happened earlier: ordered by the time of the call.
  await api.recordInvocations([record({ at: ago(6_000), server: 'files', key: 'stat' })]);

  const all = await api.listInvocations({});
  t.same(all.map((row) => row.key), ['summarize', 'https://example.com/a', 'write', 'read', 'stat'], 'newest first by call time');
  t.same(Object.keys(all[0]!).sort(), ['at', 'duration_ms', 'error_code', 'id', 'key', 'kind', 'server', 'session', 'status']);
  t.match(all[0], { server: 'web', kind: 'prompt', status: 'denied', error_code: -32000, session: 'sess-1', duration_ms: 3 });
  t.equal(typeof all[0]!.error_code, 'number', 'error_code comes back a number');
  t.equal(all[3]!.error_code, null);

  t.same((await api.listInvocations({ server: 'files' })).map((row) => row.key), ['write', 'read', 'stat']);
  t.same((await api.listInvocations({ status: 'error' })).map((row) => row.key), ['write']);
  t.same((await api.listInvocations({ server: 'files', status: 'ok' })).map((row) => row.key), ['read', 'stat']);
  t.same((await api.listInvocations({ since: ago(3_500) })).map((row) => row.key), ['summarize', 'https://example.com/a']);
  t.same((await api.listInvocations({ since: ago(4_500), server: 'files' })).map((row) => row.key), ['write']);
  t.same((await api.listInvocations({ limit: 2 })).map((row) => row.key), ['summarize', 'https://example.com/a']);
  t.same(await api.listInvocations({ server: 'nobody' }), []);

  const many = Array.from({ length: 10_500 }, (_, i) => record({ at: ago(100_000 + i), key: `k${i}` }));
  await api.recordInvocations(many);
  t.equal((await api.listInvocations({})).length, 100, 'default limit 100');
  t.equal((await api.listInvocations({ limit: 50_000 })).length, 10_000, 'at most 10 000');
  t.equal((await api.listInvocations({ limit: 0 })).length, 1, 'at least 1');
});

t.test('a malformed record is left out, not its whole batch; fields are normalised', async (t) => {
  const { api } = await openWriter(t, tempInit(t));
  const bad = [
    { ...record(), kind: 'shell' },
    { ...record(), status: 'maybe' },
    { ...record(), server: '' },
    { ...record(), key: 42 },
    null,
  ] as unknown as InvocationRecord[];
  await api.recordInvocations([
    ...bad,
    record({ key: 'good', at: '2025-03-01T10:00:00+02:00', duration_ms: 2.6, error_code: 1.5 as number }),
    record({ key: 'negative', at: 'yesterday-ish', duration_ms: -4, session: 7 as unknown as string }),
    record({ key: 'overflow', at: '2025-02-29T23:59:59.999Z' }),
    record({ key: 'leap', at: '2024-02-29T23:59:59.999Z' }),
    record({ key: 'hour', at: '2025-03-01T24:00:00.000Z' }),
  ]);
  await api.recordInvocations([]);
  const rows = await api.listInvocations({});
  t.same(rows.map((row) => row.key).sort(), ['good', 'hour', 'leap', 'negative', 'overflow']);
  const at = (key: string) => rows.find((row) => row.key === key)!.at;
  t.equal(at('overflow'), '2025-03-01T23:59:59.999Z', 'a day past the end of its month, in the stored form, is still read as a time');
  t.equal(at('leap'), '2024-02-29T23:59:59.999Z', 'a leap day is kept as it came');
  t.notMatch(at('hour'), /T24/, 'an hour past 23 is not kept as it came');
  const good = rows.find((row) => row.key === 'good')!;
  t.equal(good.at, '2025-03-01T08:00:00.000Z', 'stored as UTC ISO with milliseconds');
  t.equal(good.duration_ms, 3);
  t.equal(good.error_code, null, 'a non-integer code is not kept');
  const negative = rows.find((row) => row.key === 'negative')!;
  t.equal(negative.duration_ms, 0);
  t.equal(negative.session, null);
  t.match(negative.at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/, 'an unreadable time becomes the time it was stored');
});

t.test('a secret in the tool arguments reaches no invocation row and no database byte', async (t) => {
  const init = tempInit(t);
  const writer = await openWriter(t, init);
  const secret = `ARG-SECRET-${randomBytes(8).toString('hex')}`;
  // What a careless producer might hand over: the call's arguments and result riding along.
  const leaky = {
    ...record({ key: 'login' }),
    arguments: { password: secret },
    params: { name: 'up__login', arguments: { password: secret } },
    result: { content: [{ type: 'text', text: secret }] },
  } as unknown as InvocationRecord;
  await writer.api.recordInvocations([leaky, record({ key: 'other', status: 'error', error_code: -32603 })]);

  const rows = await writer.api.listInvocations({});
  t.equal(rows.length, 2);
  t.notOk(JSON.stringify(rows).includes(secret), 'not in what listInvocations answers');
  for (const row of rows) t.same(Object.keys(row).sort(), ['at', 'duration_ms', 'error_code', 'id', 'key', 'kind', 'server', 'session', 'status']);

  const scan = (label: string) => {
    for (const file of [init.dbPath, `${init.dbPath}-wal`].filter(existsSync)) t.equal(readFileSync(file).indexOf(secret), -1, `${label}: not in ${file.slice(-10)}`);
  };
  scan('open');
  await writer.close();
  scan('checkpointed');
  const db = new Database(init.dbPath, { readonly: true });
  t.teardown(() => db.close());
  t.same(
    db.prepare("SELECT name FROM pragma_table_info('invocations')").pluck().all(),
    ['id', 'at', 'server', 'kind', 'key', 'duration_ms', 'status', 'session', 'error_code'],
    'the table has no column an argument or a result could go to',
  );
});

/** The real writer's recordInvocations, counted, and failing on demand. */
function counted(api: DbWriterCalls) {
  const calls: number[] = [];
  let failing = false;
  return {
    calls,
    fail(value: boolean) {
      failing = value;
    },
    writer: {
      recordInvocations: async (records: InvocationRecord[]) => {
        calls.push(records.length);
        if (failing) throw new Error('writer down');
        return api.recordInvocations(records);
      },
    },
  };
}

t.test('InvocationLog batches many add() into few writer calls', async (t) => {
  const { api } = await openWriter(t, tempInit(t));
  const spy = counted(api);
  const errors: Error[] = [];
  const log = new InvocationLog(spy.writer, { maxBatch: 200, flushMs: 400 }, (error) => errors.push(error));

  const started = process.hrtime.bigint();
  for (let i = 0; i < 1_000; i++) log.add(record({ key: `k${i}`, at: ago(1_000_000 - i) }));
  const addMs = Number(process.hrtime.bigint() - started) / 1e6;
  t.ok(addMs < 500, `1000 add() calls took ${addMs.toFixed(1)} ms (no waiting)`);
  t.same(spy.calls, [], 'nothing is sent synchronously');

  await waitFor('all 1000 stored', async () => (await api.listInvocations({ limit: 10_000 })).length === 1_000);
  t.same(spy.calls, [200, 200, 200, 200, 200], 'five full batches, sent without waiting for flushMs');

  log.add(record({ key: 'late-1' }));
  log.add(record({ key: 'late-2' }));
  const added = performance.now();
  await sleep(20);
  if (performance.now() - added < 350) t.equal(spy.calls.length, 5, 'a partial batch waits for flushMs');
  await waitFor('the partial batch', async () => (await api.listInvocations({ limit: 10_000 })).length === 1_002);
  t.same(spy.calls.slice(5), [2]);
  const keys = (await api.listInvocations({ limit: 10_000 })).map((row) => row.key);
  t.same(keys.slice(0, 2).sort(), ['late-1', 'late-2']);
  t.equal(new Set(keys).size, 1_002, 'each record once');
  t.same(errors, []);
  await log.close();
});

t.test('InvocationLog flushes on close and takes nothing after', async (t) => {
  const { api } = await openWriter(t, tempInit(t));
  const spy = counted(api);
  const log = new InvocationLog(spy.writer, { maxBatch: 200, flushMs: 60_000 });
  for (let i = 0; i < 450; i++) log.add(record({ key: `k${i}` }));
  // Full batches go without waiting for the flush timer (60 s here); one batch is in flight at a time.
  await waitFor('two full batches', () => spy.calls.length >= 2, 5_000).catch(() => undefined);
  t.ok(spy.calls.length >= 2, 'full batches already went');
  await log.close();
  t.equal((await api.listInvocations({ limit: 10_000 })).length, 450, 'the last partial batch too');
  t.equal(spy.calls.reduce((sum, n) => sum + n, 0), 450);
  log.add(record({ key: 'after-close' }));
  await log.flush();
  t.equal((await api.listInvocations({ limit: 10_000 })).length, 450, 'nothing after close');
  t.equal(log.pending, 0);
});

t.test('InvocationLog keeps at most maxBuffered records while the writer rejects, and recovers', async (t) => {
  const { api } = await openWriter(t, tempInit(t));
  const spy = counted(api);
  spy.fail(true);
  const errors: Error[] = [];
  const log = new InvocationLog(spy.writer, { maxBatch: 100, flushMs: 20, maxBuffered: 1_000, maxRetryMs: 50 }, (error) => errors.push(error));
  const started = process.hrtime.bigint();
  for (let i = 0; i < 5_000; i++) log.add(record({ key: `k${i}`, at: ago(1_000_000 - i) }));
  const addMs = Number(process.hrtime.bigint() - started) / 1e6;
  t.ok(addMs < 1_000, `5000 add() with the writer down took ${addMs.toFixed(1)} ms`);
  t.equal(log.pending, 1_000, 'bounded');
  await waitFor('a few failed attempts', () => spy.calls.length >= 3);
  t.ok(log.pending <= 1_000, 'still bounded while retrying');
  t.ok(errors.length >= 1, 'reported');
  t.ok(errors.some((error) => /4000 invocation records were dropped/.test(error.message)), `drops counted: ${errors.map((e) => e.message).join(' / ')}`);
  t.ok(errors.every((error) => /writer down/.test(error.message)), 'with the writer error');
  const attemptsWhileDown = spy.calls.length;
  t.ok(spy.calls.every((n) => n === 100), 'one batch per attempt while failing');

  // More records while still down: the oldest of the kept ones are the ones to go.
  for (let i = 5_000; i < 5_200; i++) log.add(record({ key: `k${i}`, at: ago(1_000_000 - i) }));
  t.equal(log.pending, 1_000);

  spy.fail(false);
  await waitFor('the backlog written', async () => (await api.listInvocations({ limit: 10_000 })).length === 1_000, 15_000);
  const keys = (await api.listInvocations({ limit: 10_000 })).map((row) => row.key);
  t.equal(keys[0], 'k5199', 'the newest kept');
  t.equal(keys.at(-1), 'k4200', 'the oldest 4200 dropped');
  t.ok(spy.calls.length > attemptsWhileDown);
  await log.close();
  t.equal(log.pending, 0);
});

t.test('InvocationLog against a writer that is gone: bounded, reported, close does not hang', async (t) => {
  const writer = await openWriter(t, tempInit(t));
  await writer.close();
  const errors: Error[] = [];
  const log = new InvocationLog(writer.api, { maxBatch: 50, flushMs: 10, maxBuffered: 200 }, (error) => errors.push(error));
  for (let i = 0; i < 1_000; i++) log.add(record({ key: `k${i}` }));
  t.equal(log.pending, 200);
  await log.flush();
  t.match(errors.at(-1)?.message, /DB writer is closed/);
  await log.close();
  t.match(errors.at(-1)?.message, /closed with 200 records/);
  t.equal(log.pending, 0, 'nothing held after close');
});

/** The query is refused: 422 CONFIG_INVALID naming exactly these fields, in this order. */
async function refusedQuery(t: Test, get: (query: string) => Promise<{ status: number; body?: unknown }>, query: string, fields: readonly string[]): Promise<void> {
  const answer = await get(query);
  t.equal(answer.status, 422, query);
  const error = (answer.body as { error: { code: string; details: { errors: { field: string }[] } } }).error;
  t.equal(error.code, 'CONFIG_INVALID');
  t.same(error.details.errors.map((e) => e.field), fields, `${query}: every bad field named`);
}

t.test('GET /invocations validates its query and filters', async (t) => {
  const { api: writer } = await openWriter(t, tempInit(t));
  await writer.recordInvocations([
    record({ at: ago(3_000), server: 'a', key: 'one', status: 'ok' }),
    record({ at: ago(2_000), server: 'b', key: 'two', status: 'error', error_code: -32603 }),
    record({ at: ago(1_000), server: 'a', key: 'three', status: 'timeout', error_code: -32001 }),
  ]);
  const http = new HttpApi(invocationRoutes(writer), () => 'token');
  const get = (query: string, token = 'token') =>
    http.handle({ method: 'GET', path: '/invocations', query: new URLSearchParams(query), headers: { authorization: `Bearer ${token}` }, body: undefined });

  t.equal((await get('', 'wrong')).status, 401, 'token needed');
  const all = await get('');
  t.equal(all.status, 200);
  t.same((all.body as { invocations: { key: string }[] }).invocations.map((row) => row.key), ['three', 'two', 'one']);
  const keys = async (query: string) => ((await get(query)).body as { invocations: { key: string }[] }).invocations.map((row) => row.key);
  t.same(await keys('server=a'), ['three', 'one']);
  t.same(await keys('status=error'), ['two']);
  t.same(await keys(`since=${encodeURIComponent(ago(2_500))}`), ['three', 'two']);
  t.same(await keys('limit=1'), ['three']);
  t.same(await keys('server=a&status=ok&limit=10'), ['one']);

  for (const [query, fields] of [
    ['status=bogus', ['status']],
    ['limit=0', ['limit']],
    ['limit=10001', ['limit']],
    ['limit=2.5', ['limit']],
    ['limit=', ['limit']],
    ['since=not-a-date', ['since']],
    ['server=', ['server']],
    ['status=OK&limit=-1&since=nope', ['limit', 'status', 'since']],
  ] as const) await refusedQuery(t, get, query, fields);
});

t.test('GET /audit checks since, limit and server as GET /invocations does: a time in any offset is that instant, a bad value is refused', async (t) => {
  const { api: writer } = await openWriter(t, tempInit(t));
  await writer.audit('cli', 'server_added', 'a', {});
  await sleep(5);
  const between = Date.now();
  await sleep(5);
  await writer.audit('cli', 'server_removed', 'a', {});
  const http = new HttpApi(auditRoutes(writer), () => 'token');
  const get = (query: string) => http.handle({ method: 'GET', path: '/audit', query: new URLSearchParams(query), headers: { authorization: 'Bearer token' }, body: undefined });
  const events = async (query: string) => ((await get(query)).body as { entries: { event_type: string }[] }).entries.map((entry) => entry.event_type);

  // The same instant as a clock 14 hours ahead of UTC writes it.
  const ahead = new Date(between + 14 * 3_600_000).toISOString().replace('Z', '+14:00');
  t.same(await events(`since=${encodeURIComponent(ahead)}`), ['server_removed'], 'since in another offset');
  t.same(await events(`since=${encodeURIComponent(new Date(between).toISOString())}`), ['server_removed'], 'since in UTC');

  for (const [query, fields] of [
    ['since=yesterday', ['since']],
    ['server=', ['server']],
    ['limit=2.5', ['limit']],
    ['limit=', ['limit']],
    ['limit=0&since=nope', ['limit', 'since']],
  ] as const) await refusedQuery(t, get, query, fields);
});
