// Retention: policies (set, list, audited, validated), the prune (on demand and
// periodic, in batches that let other calls through), audit streaming to the main
// thread, and the /retention routes. Real worker, real SQLite in a temp dir.
import Database from 'better-sqlite3';
import t, { type Test } from 'tap';
import { HttpApi } from '../src/api/http-api.js';
import { retentionRoutes } from '../src/api/routes/retention.js';
import type { AuditEntry, DbInit, RetentionTable } from '../src/protocol/db.js';
import type { InvocationRecord } from '../src/protocol/events.js';
import { ago, openWriter, sleep, tempInit as writerInit, waitFor } from './helpers/writer.js';
import type { ServerConfig } from '../src/protocol/server-config.js';
import { parseServerConfig } from '../src/registry/server-config.js';

const DAY = 86_400_000;

// Tests that want the periodic prune turn it on; the others must not race it.
const tempInit = (t: Test, extra: Partial<DbInit> = {}): DbInit => writerInit(t, 'coffer-retention-', { pruneIntervalMs: 0, ...extra });

function record(at: string, key: string): InvocationRecord {
  return { at, server: 'up', kind: 'tool', key, duration_ms: 1, status: 'ok', session: 's', error_code: null };
}

function stdio(name: string): ServerConfig {
  const parsed = parseServerConfig({ name, transport: { type: 'stdio', command: 'node', args: ['server.js'], env: {} } });
  if (!parsed.ok) throw new Error(parsed.error.message);
  return parsed.value;
}

/** Audit rows from the past, written beside the writer (the API stamps every entry with now). */
function plantOldAudit(dbPath: string, rows: { at: string; event_type: string }[]): void {
  const db = new Database(dbPath, { timeout: 5_000 });
  try {
    const insert = db.prepare("INSERT INTO audit_log (at, actor, event_type, server, payload) VALUES (?, 'system', ?, NULL, '{}')");
    db.transaction(() => rows.forEach((row) => insert.run(row.at, row.event_type)))();
  } finally {
    db.close();
  }
}

t.test('policies: defaults, set, forever, audited, validated', async (t) => {
  const { api } = await openWriter(t, tempInit(t));
  t.same(await api.listRetention(), [{ table: 'audit', days: 365 }, { table: 'invocations', days: 30 }], 'the documented retention defaults');

  t.same(await api.setRetention('invocations', 7, 'cli'), { ok: true, value: { table: 'invocations', days: 7 } });
  t.same(await api.setRetention('audit', null, 'ui'), { ok: true, value: { table: 'audit', days: null } }, 'null = forever');
  t.same(await api.setRetention('invocations', 7, 'api'), { ok: true, value: { table: 'invocations', days: 7 } }, 'unchanged is fine');
  t.same(await api.setRetention('audit', 36_500, 'api'), { ok: true, value: { table: 'audit', days: 36_500 } }, 'the largest value');
  t.same(await api.listRetention(), [{ table: 'audit', days: 36_500 }, { table: 'invocations', days: 7 }]);

  const audited = (await api.listAudit({ event_type: 'retention_changed' })).reverse();
  t.same(
    audited.map((entry) => [entry.actor, entry.server, entry.payload]),
    [
      ['cli', null, { table: 'invocations', from: 30, to: 7 }],
      ['ui', null, { table: 'audit', from: 365, to: null }],
      ['api', null, { table: 'audit', from: null, to: 36_500 }],
    ],
    'each real change audited with from and to; a no-op is not',
  );

  t.match(await api.setRetention('sessions', 3, 'cli'), { ok: false, error: { code: 'RESOURCE_NOT_FOUND', message: /sessions/ } });
  for (const days of [0, -1, 1.5, 36_501, Number.NaN, Infinity, '30', undefined, {}]) {
    const answer = await api.setRetention('audit', days as number, 'cli');
    t.match(answer, { ok: false, error: { code: 'CONFIG_INVALID', details: { errors: [{ field: 'days' }] } } }, `days ${String(days)} refused`);
  }
  t.match(await api.setRetention('nope', 0, 'cli'), { ok: false, error: { code: 'RESOURCE_NOT_FOUND' } }, 'the table is checked first');
  t.same(await api.listRetention(), [{ table: 'audit', days: 36_500 }, { table: 'invocations', days: 7 }], 'refusals changed nothing');
  t.equal((await api.listAudit({ event_type: 'retention_changed' })).length, 3, 'refusals are not audited');
});

t.test('prune removes what is older than each policy and keeps the rest', async (t) => {
  const init = tempInit(t);
  const { api } = await openWriter(t, init);
  await api.recordInvocations([
    record(ago(40 * DAY), 'old-40d'),
    record(ago(31 * DAY), 'old-31d'),
    record(ago(29 * DAY), 'kept-29d'),
    record(ago(60_000), 'kept-1min'),
    record(new Date().toISOString(), 'kept-now'),
  ]);
  plantOldAudit(init.dbPath, [
    { at: ago(400 * DAY), event_type: 'ancient' },
    { at: ago(100 * DAY), event_type: 'oldish' },
  ]);
  await api.audit('system', 'fresh', null, {});

  t.same(await api.prune(), { audit: 1, invocations: 2 });
  t.same((await api.listInvocations({})).map((row) => row.key), ['kept-now', 'kept-1min', 'kept-29d']);
  t.same((await api.listAudit({})).map((entry) => entry.event_type), ['fresh', 'oldish']);
  t.same(await api.prune(), { audit: 0, invocations: 0 }, 'nothing more to do');

  await api.setRetention('invocations', 1, 'cli');
  t.same(await api.prune(), { audit: 0, invocations: 1 });
  t.same((await api.listInvocations({})).map((row) => row.key), ['kept-now', 'kept-1min']);

  await api.setRetention('audit', null, 'cli');
  await api.setRetention('invocations', null, 'cli');
  await api.recordInvocations([record(ago(10_000 * DAY), 'very-old')]);
  t.same(await api.prune(), { audit: 0, invocations: 0 }, 'forever keeps everything');
  t.equal((await api.listInvocations({})).length, 3);
  t.equal((await api.listAudit({ event_type: 'oldish' })).length, 1);
});

t.test('a prune of many rows lets other writer calls through', async (t) => {
  const { api } = await openWriter(t, tempInit(t));
  await api.createServer(stdio('up'), 'cli');
  await api.reconcile('up', 'tool', ['a'], true);
  const OLD = 50_000;
  for (let start = 0; start < OLD; start += 10_000) {
    await api.recordInvocations(Array.from({ length: 10_000 }, (_, i) => record(ago(90 * DAY + start + i), `old-${start + i}`)));
  }
  await api.recordInvocations([record(new Date().toISOString(), 'new')]);

  const pruneStarted = performance.now();
  let pruneEnded = Number.POSITIVE_INFINITY;
  const pruning = api.prune().then((pruned) => {
    pruneEnded = performance.now();
    return pruned;
  });
  const latencies: number[] = [];
  const answeredAt: number[] = [];
  const failures: string[] = [];
  let enabled = true;
  // Calls keep coming while the prune runs: each must be answered between two batches.
  while (pruneEnded === Number.POSITIVE_INFINITY && latencies.length < 200) {
    const started = performance.now();
    enabled = !enabled;
    const changed = await api.setPreferences('up', [{ capability_type: 'tool', capability_key: 'a', enabled }], 'api');
    await api.audit('api', 'probe', 'up', {});
    latencies.push(performance.now() - started);
    answeredAt.push(performance.now());
    if (!changed.ok) failures.push(changed.error.message);
  }
  const pruned = await pruning;
  const pruneMs = pruneEnded - pruneStarted;
  const during = answeredAt.filter((at) => at < pruneEnded).length;
  const worst = Math.max(...latencies);
  const sorted = [...latencies].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)]!;
  t.comment(`latencies (ms): ${sorted.map((ms) => ms.toFixed(1)).join(' ')}`);
  t.same(failures, [], 'every interleaved call succeeded');
  t.same(pruned, { audit: 0, invocations: OLD });
  t.ok(during >= 3, `${during} call pairs answered while the prune ran (${pruneMs.toFixed(0)} ms)`);
  t.ok(answeredAt[0]! < pruneEnded, 'the first call did not wait for the prune to end');
  t.ok(median < pruneMs / 10, `median call pair ${median.toFixed(1)} ms, prune ${pruneMs.toFixed(0)} ms`);
  t.ok(worst < pruneMs / 3, `slowest call pair ${worst.toFixed(1)} ms, prune ${pruneMs.toFixed(0)} ms`);
  t.same((await api.listInvocations({})).map((row) => row.key), ['new'], 'old rows gone, the new one kept');
  t.equal((await api.listAudit({ event_type: 'probe', limit: 10_000 })).length, latencies.length, 'every interleaved write is there');
});

t.test('the writer prunes by itself, again and again', async (t) => {
  const pruneRuns: Record<RetentionTable, number>[] = [];
  const { api } = await openWriter(t, tempInit(t, { pruneIntervalMs: 150 }), { onPrune: (pruned) => pruneRuns.push(pruned) });
  await api.recordInvocations([record(ago(45 * DAY), 'old-1'), record(new Date().toISOString(), 'new-1')]);
  await waitFor('the first periodic prune', async () => (await api.listInvocations({})).length === 1);
  t.same((await api.listInvocations({})).map((row) => row.key), ['new-1']);

  await api.recordInvocations([record(ago(45 * DAY), 'old-2'), record(new Date().toISOString(), 'new-2')]);
  await waitFor('another periodic prune', async () => (await api.listInvocations({})).length === 2);
  t.same((await api.listInvocations({})).map((row) => row.key), ['new-2', 'new-1']);
  await waitFor('the runs are reported', () => pruneRuns.reduce((sum, run) => sum + run.invocations, 0) === 2);
  t.ok(pruneRuns.length >= 2, `${pruneRuns.length} runs reported on onPrune`);
  t.ok(pruneRuns.every((run) => typeof run.audit === 'number' && typeof run.invocations === 'number'));
});

t.test('no periodic prune with pruneIntervalMs 0', async (t) => {
  const pruneRuns: unknown[] = [];
  const { api } = await openWriter(t, tempInit(t, { pruneIntervalMs: 0 }), { onPrune: (pruned) => pruneRuns.push(pruned) });
  await api.recordInvocations([record(ago(45 * DAY), 'old')]);
  await sleep(300);
  t.equal((await api.listInvocations({})).length, 1);
  t.same(pruneRuns, []);
});

t.test('every committed audit entry reaches onAudit as it happens, rolled-back ones never', async (t) => {
  const seen: AuditEntry[] = [];
  const { api } = await openWriter(t, tempInit(t), { onAudit: (entry) => seen.push(entry) });
  await api.createServer(stdio('up'), 'cli');
  await waitFor('server_added', () => seen.length === 1);
  t.match(seen[0], { actor: 'cli', event_type: 'server_added', server: 'up' });

  await api.reconcile('up', 'tool', ['a', 'b'], true);
  await api.setPreferences('up', [{ capability_type: 'tool', capability_key: 'a', enabled: false }], 'ui');
  await api.setRetention('invocations', 14, 'api');
  await api.audit('api', 'token_rotated', null, {});
  await waitFor('five more', () => seen.length === 6);

  // Refused or no-op operations record nothing, so nothing is streamed.
  await api.createServer(stdio('up'), 'cli');
  await api.setRetention('invocations', 0, 'api');
  await api.setRetention('invocations', 14, 'api');
  await api.setPreferences('up', [{ capability_type: 'tool', capability_key: 'nope', enabled: false }], 'ui');
  await api.audit('system', 'marker', null, { last: true });
  await waitFor('the marker', () => seen.some((entry) => entry.event_type === 'marker'));

  t.same(
    seen.map((entry) => entry.event_type),
    ['server_added', 'capability_first_seen', 'capability_first_seen', 'capability_disabled', 'retention_changed', 'token_rotated', 'marker'],
  );
  t.same(seen, (await api.listAudit({})).reverse(), 'exactly the rows listAudit answers (ids, times, payloads)');
  t.match(seen.find((entry) => entry.event_type === 'retention_changed'), { actor: 'api', server: null, payload: { table: 'invocations', from: 30, to: 14 } });
  t.match(seen.find((entry) => entry.event_type === 'token_rotated'), { actor: 'api', payload: {} });
});

t.test('/retention routes', async (t) => {
  const { api: writer } = await openWriter(t, tempInit(t));
  const http = new HttpApi(retentionRoutes(writer), () => 'token');
  const call = (method: string, path: string, body?: unknown, token = 'token') =>
    http.handle({ method, path, query: new URLSearchParams(), headers: { 'x-coffer-token': token }, body }) as Promise<{ status: number; body: any }>;

  t.equal((await call('GET', '/retention', undefined, 'nope')).status, 401);
  t.same(await call('GET', '/retention'), { status: 200, body: { policies: [{ table: 'audit', days: 365 }, { table: 'invocations', days: 30 }] } });
  t.same(await call('GET', '/retention/invocations'), { status: 200, body: { table: 'invocations', days: 30 } });
  const missing = await call('GET', '/retention/sessions');
  t.equal(missing.status, 404);
  t.equal(missing.body.error.code, 'RESOURCE_NOT_FOUND');

  t.same(await call('PATCH', '/retention/invocations', { days: 3 }), { status: 200, body: { table: 'invocations', days: 3 } });
  t.same(await call('PATCH', '/retention/audit', { days: null }), { status: 200, body: { table: 'audit', days: null } });
  t.same(await call('GET', '/retention/audit'), { status: 200, body: { table: 'audit', days: null } });
  t.match(await writer.listAudit({ event_type: 'retention_changed' }), [
    { actor: 'api', payload: { table: 'audit', from: 365, to: null } },
    { actor: 'api', payload: { table: 'invocations', from: 30, to: 3 } },
  ]);

  const fromCli = await http.handle({ method: 'PATCH', path: '/retention/invocations', query: new URLSearchParams(), headers: { 'x-coffer-token': 'token', 'x-coffer-actor': 'cli' }, body: { days: 4 } });
  t.same(fromCli, { status: 200, body: { table: 'invocations', days: 4 } });
  t.match((await writer.listAudit({ event_type: 'retention_changed', limit: 1 }))[0], { actor: 'cli', payload: { from: 3, to: 4 } }, 'X-Coffer-Actor names the actor');
  t.same(await call('PATCH', '/retention/invocations', { days: 3 }), { status: 200, body: { table: 'invocations', days: 3 } });

  t.equal((await call('PATCH', '/retention/sessions', { days: 3 })).status, 404);
  for (const body of [{ days: 0 }, { days: 2.5 }, { days: 40_000 }, { days: '3' }, {}, null, 'x', [3], { days: 3, extra: true }]) {
    const answer = await call('PATCH', '/retention/invocations', body);
    t.equal(answer.status, 422, `${JSON.stringify(body)} refused`);
    t.equal(answer.body.error.code, 'CONFIG_INVALID');
    t.ok(Array.isArray(answer.body.error.details.errors) && answer.body.error.details.errors.length > 0, 'the field is named');
  }
  t.same((await call('GET', '/retention/invocations')).body, { table: 'invocations', days: 3 }, 'unchanged by refusals');
  t.equal((await call('DELETE', '/retention/invocations')).status, 405);

  await writer.recordInvocations([record(ago(5 * DAY), 'old'), record(new Date().toISOString(), 'new')]);
  t.same(await call('POST', '/retention/prune'), { status: 200, body: { pruned: { audit: 0, invocations: 1 } } });
  t.same((await writer.listInvocations({})).map((row) => row.key), ['new']);
});
