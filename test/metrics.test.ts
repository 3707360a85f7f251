// /metrics over real HTTP, scraped while a real client works through real
// upstreams, parsed by a strict Prometheus text parser: the values move with
// what happened, labels stay bounded, and the endpoint wants the API token
// unless the operator opted out.
import { readFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Registry } from 'prom-client';
import t, { type Test } from 'tap';
import { opsSettings } from '../src/ops/ops-settings.js';
import { protocolEra } from '../src/ops/metrics.js';
import { startGateway, tempHome, waitFor } from './helpers/gateway.js';
import { parsePrometheusText, sampleValue, type Family } from './helpers/prom-text.js';
import { CreateMessageRequestSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { faultSwitch, spawnHello, stdioFixture } from './fixtures/fixture-servers.js';
import { modernClient } from './helpers/modern.js';

async function scrape(url: string, token?: string): Promise<Map<string, Family>> {
  const response = await fetch(`${url}/metrics`, { headers: token ? { authorization: `Bearer ${token}` } : {}, signal: AbortSignal.timeout(60_000) });
  if (response.status !== 200) throw new Error(`GET /metrics: ${response.status} ${await response.text()}`);
  if (!response.headers.get('content-type')?.startsWith('text/plain; version=0.0.4')) throw new Error(`content-type ${response.headers.get('content-type')}`);
  return parsePrometheusText(await response.text());
}

const MODERN_FIXTURE = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'modern-upstream.js');

/** Every label the metrics may carry. */
const ALLOWED_LABELS = new Set(['server', 'outcome', 'state', 'result', 'method', 'era', 'call', 'le']);

t.test('/metrics: token, parse, values move with real traffic, bounded labels', async (t) => {
  const gateway = await startGateway({ metrics: 'token' });
  t.teardown(() => gateway.close());
  await gateway.addServer(stdioFixture('alpha', ['--tools', 'all,invalid']));

  const refused = await fetch(`${gateway.url}/metrics`);
  t.equal(refused.status, 401, 'no token: refused');
  t.match(await refused.json(), { error: { code: 'UNAUTHENTICATED', message: /COFFER_METRICS_AUTH=none/ } });
  t.equal((await fetch(`${gateway.url}/metrics`, { headers: { authorization: 'Bearer wrong' } })).status, 401, 'wrong token: refused');

  const before = await scrape(gateway.url, gateway.daemon.token);
  const calls = (families: Map<string, Family>, outcome = 'ok') => sampleValue(families, 'coffer_upstream_calls_total', { server: 'alpha', outcome }) ?? 0;

  const client = await gateway.client();
  await client.listTools();
  await client.listTools();
  for (let i = 0; i < 5; i++) await client.callTool({ name: 'alpha__echo', arguments: { i } });
  await client.callTool({ name: 'alpha__invalid', arguments: {} }).catch(() => undefined);
  await client.callTool({ name: 'nowhere__nope', arguments: {} }).catch(() => undefined);
  const slow = client.callTool({ name: 'alpha__slow', arguments: { ms: 1_500 } });
  await waitFor('a call in flight', async () => sampleValue(await scrape(gateway.url, gateway.daemon.token), 'coffer_upstream_in_flight_calls', { server: 'alpha' }) === 1);
  await slow;

  const after = await scrape(gateway.url, gateway.daemon.token);
  t.equal(calls(after) - calls(before), 6, 'five echoes and the slow call counted as ok');
  t.equal(calls(after, 'error') - calls(before, 'error'), 1, "the upstream's refusal of the call as an error");
  t.equal(sampleValue(after, 'coffer_upstream_call_duration_seconds_count', { server: 'alpha' }), 7);
  t.equal(sampleValue(after, 'coffer_upstream_call_duration_seconds_bucket', { server: 'alpha', le: '1' }), 6, 'the slow call is in a later bucket');
  t.equal(sampleValue(after, 'coffer_mcp_requests_total', { method: 'tools/call', outcome: 'ok' }), 6);
  t.equal(sampleValue(after, 'coffer_mcp_requests_total', { method: 'tools/call', outcome: 'invalid_params' }), 1, "the upstream's JSON-RPC error, by its kind");
  t.equal(sampleValue(after, 'coffer_mcp_requests_total', { method: 'tools/call', outcome: 'RESOURCE_NOT_FOUND' }), 1, "coffer's refusal of an unknown server, by its stable code");
  t.equal(sampleValue(after, 'coffer_mcp_requests_total', { method: 'initialize', outcome: 'ok' }), 1);
  t.equal(sampleValue(after, 'coffer_upstream_in_flight_calls', { server: 'alpha' }), 0, 'nothing in flight after');
  t.ok(sampleValue(after, 'coffer_upstream_list_cache_total', { server: 'alpha', result: 'miss' })! >= 1, 'the first list asked the upstream');
  t.ok(sampleValue(after, 'coffer_upstream_list_cache_total', { server: 'alpha', result: 'hit' })! >= 1, 'the second came from the copy');
  t.ok(sampleValue(after, 'coffer_upstream_list_duration_seconds_count', { server: 'alpha' })! >= 1);
  t.equal(sampleValue(after, 'coffer_upstream_state', { server: 'alpha', state: 'ready' }), 1);
  t.equal(sampleValue(after, 'coffer_upstream_state', { server: 'alpha', state: 'backoff' }), 0);
  t.equal(sampleValue(after, 'coffer_mcp_sessions', { era: '2025-11-25' }), 1, 'the client session, in its era');
  t.equal(sampleValue(after, 'coffer_mcp_sessions', { era: '2026-07-28' }), 0, 'the next era is labelled already');
  t.ok(sampleValue(after, 'coffer_db_writer_call_duration_seconds_count', { call: 'recordInvocations' })! >= 1, 'the invocation log was written');
  t.equal(sampleValue(after, 'coffer_db_writer_queue_depth'), 0);
  t.equal(sampleValue(after, 'coffer_db_writer_up'), 1);
  t.ok(sampleValue(after, 'coffer_upstream_process_resident_memory_bytes', { server: 'alpha' })! > 1024 * 1024, "the stdio child's RSS");
  t.ok(sampleValue(after, 'nodejs_eventloop_lag_p99_seconds')! >= 0, 'main-thread event-loop delay');
  t.ok(sampleValue(after, 'process_resident_memory_bytes')! > 0);
  t.ok(sampleValue(after, 'nodejs_heap_size_used_bytes')! > 0);

  const labels = new Set([...after.values()].flatMap((family) => family.samples.flatMap((sample) => Object.keys(sample.labels))));
  t.same([...labels].filter((label) => !ALLOWED_LABELS.has(label)), [], 'no unexpected label (no tool names)');
  const values = [...after.values()].flatMap((family) => family.samples.flatMap((sample) => Object.values(sample.labels)));
  t.notOk(values.some((value) => /echo|slow|nope/.test(value)), 'no tool name in any label value');

  const modern = await modernClient(gateway);
  t.teardown(() => modern.close());
  await modern.listTools();
  for (let i = 0; i < 2; i++) await modern.callTool({ name: 'alpha__echo', arguments: { i } });
  await modern.callTool({ name: 'nowhere__nope', arguments: {} }).catch(() => undefined);
  const later = await scrape(gateway.url, gateway.daemon.token);
  const requests = (families: Map<string, Family>, method: string, outcome: string) => sampleValue(families, 'coffer_mcp_requests_total', { method, outcome }) ?? 0;
  t.equal(requests(later, 'tools/call', 'ok') - requests(after, 'tools/call', 'ok'), 2, 'a 2026-07-28 caller\'s calls are counted too');
  t.equal(requests(later, 'tools/call', 'RESOURCE_NOT_FOUND') - requests(after, 'tools/call', 'RESOURCE_NOT_FOUND'), 1, 'and its refusals, by their code');
  t.ok(requests(later, 'tools/list', 'ok') > requests(after, 'tools/list', 'ok'), 'and its lists');
});

t.test('/metrics: deadline misses, degradation and reconnects of a real upstream', async (t) => {
  const gateway = await startGateway({ metrics: 'none', tuning: { backoffInitialMs: 50 } }, tempHome());
  t.teardown(() => gateway.close());
  const fault = faultSwitch(gateway.home);
  await gateway.addServer(stdioFixture('flaky', fault.args, { list_deadline_ms: 300, request_ms: 1_000 }));
  const client = await gateway.client();
  const unauthenticated = () => scrape(gateway.url);

  await fault.set({ fault: 'hang' });
  await client.listTools();
  let now = await unauthenticated();
  t.equal(sampleValue(now, 'coffer_upstream_list_deadline_misses_total', { server: 'flaky' }), 1, 'the hung list missed its deadline');
  t.equal(sampleValue(now, 'coffer_upstream_degraded', { server: 'flaky' }), 1);

  await fault.set({});
  await client.callTool({ name: 'flaky__crash', arguments: {} }).catch(() => undefined);
  now = await waitFor('a reconnect counted', async () => {
    const families = await unauthenticated();
    return sampleValue(families, 'coffer_upstream_reconnects_total', { server: 'flaky' }) === 1 && families;
  });
  t.equal(sampleValue(now, 'coffer_upstream_state', { server: 'flaky', state: 'ready' }), 1, 'ready again');
  t.ok(sampleValue(now, 'coffer_upstream_calls_total', { server: 'flaky', outcome: 'error' })! >= 1, 'the crashed call failed');
});

t.test('/metrics: a removed server leaves no series behind', async (t) => {
  const gateway = await startGateway({ metrics: 'none', tuning: { backoffInitialMs: 50 } }, tempHome());
  t.teardown(() => gateway.close());
  const fault = faultSwitch(gateway.home);
  await gateway.addServer(stdioFixture('gone', fault.args, { list_deadline_ms: 300, request_ms: 1_000 }));
  await gateway.addServer(stdioFixture('kept'));
  const client = await gateway.client();
  await fault.set({ fault: 'hang' });
  await client.listTools();
  await fault.set({});
  await client.callTool({ name: 'gone__crash', arguments: {} }).catch(() => undefined);
  await waitFor('a reconnect counted', async () => sampleValue(await scrape(gateway.url), 'coffer_upstream_reconnects_total', { server: 'gone' }) === 1);
  await client.callTool({ name: 'gone__echo', arguments: {} });
  await client.callTool({ name: 'kept__echo', arguments: {} });
  await client.listTools();
  const servers = (families: Map<string, Family>) => new Set([...families.values()].flatMap((family) => family.samples.flatMap((sample) => sample.labels.server ?? [])));
  t.same([...servers(await scrape(gateway.url))].sort(), ['gone', 'kept'], 'both counted while registered');

  t.equal((await gateway.api('DELETE', '/servers/gone')).status, 204);
  const after = await scrape(gateway.url);
  t.same([...servers(after)], ['kept'], 'no series of the removed server (each would be kept for ever, one label set per server ever registered)');
  t.equal(sampleValue(after, 'coffer_upstream_calls_total', { server: 'kept', outcome: 'ok' }), 1, "the others' go on");

  await gateway.addServer(stdioFixture('gone'));
  await client.callTool({ name: 'gone__echo', arguments: {} });
  const again = await scrape(gateway.url);
  t.equal(sampleValue(again, 'coffer_upstream_calls_total', { server: 'gone', outcome: 'ok' }), 1, 'a server added again under that name counts from zero');
  t.equal(sampleValue(again, 'coffer_upstream_reconnects_total', { server: 'gone' }), undefined, 'its first ready is no reconnect');
});

t.test('/metrics: a call still going on with a removed server does not bring its series back', async (t) => {
  const upstream = await spawnHello<{ url: string }>(MODERN_FIXTURE, ['--legacy', 'reject']);
  t.teardown(() => upstream.kill());
  const gateway = await startGateway({ metrics: 'none' }, tempHome());
  t.teardown(() => gateway.close());
  await gateway.addServer({ name: 'gone', transport: { type: 'http', url: upstream.hello.url } });
  await gateway.addServer(stdioFixture('kept'));
  const client = await gateway.client('asker', { elicitation: {}, sampling: {} });
  await client.callTool({ name: 'kept__echo', arguments: {} });
  // The upstream's input_required is asked of this (2025) client between two requests to the upstream: the call goes
  // on with nothing in flight there while the client answers.
  let answer!: () => void;
  const answered = new Promise<void>((resolve) => (answer = resolve));
  let asked!: () => void;
  const questioned = new Promise<void>((resolve) => (asked = resolve));
  client.setRequestHandler(ElicitRequestSchema, async () => (asked(), await answered, { action: 'accept', content: { name: 'Bo' } }));
  client.setRequestHandler(CreateMessageRequestSchema, async () => ({ role: 'assistant', content: { type: 'text', text: 'fine' }, model: 'm' }));
  const call = client.callTool({ name: 'gone__ask', arguments: {} }).then(
    () => 'answered',
    () => 'failed',
  );
  await questioned;

  t.equal((await gateway.api('DELETE', '/servers/gone')).status, 204);
  answer();
  t.equal(await call, 'failed', 'the call ends with its server');
  const servers = new Set([...(await scrape(gateway.url)).values()].flatMap((family) => family.samples.flatMap((sample) => sample.labels.server ?? [])));
  t.same([...servers], ['kept'], 'the removed server has no series, not even from the call that ended after its removal');
});

/**
 * Stops one actor thread for real: the inspector pauses its JavaScript (as a
 * debugger would) the next time it runs; resume() lets it go on.
 */
async function pauseAnActor(t: Test): Promise<{ resume(): Promise<void> }> {
  const session = new Session();
  session.connect();
  const post = (method: string, params: object): Promise<unknown> =>
    new Promise((resolve, reject) => session.post(method, params, (error, result) => (error ? reject(error) : resolve(result))));
  const actors: string[] = [];
  session.on('NodeWorker.attachedToWorker', ({ params }) => params.workerInfo.url.includes('/workers/actor/') && actors.push(params.sessionId));
  await post('NodeWorker.enable', { waitForDebuggerOnStart: false });
  const [sessionId] = await waitFor('an actor thread attached', () => actors.length > 0 && actors);
  let id = 0;
  const send = (method: string): Promise<unknown> => post('NodeWorker.sendMessageToWorker', { sessionId, message: JSON.stringify({ id: ++id, method }) });
  await send('Debugger.enable');
  await send('Debugger.pause');
  let resumed = false;
  const resume = async (): Promise<void> => {
    if (resumed) return;
    resumed = true;
    await send('Debugger.resume');
    session.disconnect();
  };
  t.teardown(resume);
  return { resume };
}

t.test("/metrics: each actor's own heap; a stuck actor is left out of the scrape, not waited for", async (t) => {
  const gateway = await startGateway({ metrics: 'none' });
  t.teardown(() => gateway.close());
  await gateway.addServer(stdioFixture('alpha'));
  await gateway.addServer(stdioFixture('beta'));
  const heapUsed = (families: Map<string, Family>, server: string) => sampleValue(families, 'coffer_upstream_actor_heap_used_bytes', { server });

  const both = await scrape(gateway.url);
  for (const server of ['alpha', 'beta']) {
    t.ok(heapUsed(both, server)! > 0, `${server}: heap in use`);
    t.ok(sampleValue(both, 'coffer_upstream_actor_heap_total_bytes', { server })! >= heapUsed(both, server)!, `${server}: heap allocated`);
    t.ok(sampleValue(both, 'coffer_upstream_actor_heap_limit_bytes', { server })! > sampleValue(both, 'coffer_upstream_actor_heap_total_bytes', { server })!, `${server}: heap limit`);
  }
  t.not(heapUsed(both, 'alpha'), sampleValue(both, 'nodejs_heap_size_used_bytes'), "each actor's own heap, not the main thread's");

  const paused = await pauseAnActor(t);
  const started = Date.now();
  const one = await scrape(gateway.url);
  const waited = Date.now() - started;
  const reported = ['alpha', 'beta'].filter((server) => heapUsed(one, server) !== undefined);
  t.equal(reported.length, 1, `the running actor reported, the stuck one did not (reported: ${reported.join(', ')})`);
  t.ok(waited < 15_000, `the scrape answered in ${waited} ms, at its deadline for the stuck actor`);
  t.equal(sampleValue(one, 'coffer_upstream_state', { server: 'alpha', state: 'ready' }), 1, 'the rest of the scrape is all there');

  await paused.resume();
  await waitFor('both actors report again', async () => {
    const families = await scrape(gateway.url);
    return heapUsed(families, 'alpha')! > 0 && heapUsed(families, 'beta')! > 0;
  });
});

t.test('/metrics: a collection that fails answers a fixed message; the reason goes to the daemon log', async (t) => {
  const gateway = await startGateway({ metrics: 'none' });
  t.teardown(() => gateway.close());
  // What a failing collector could say: anything, an upstream's words included.
  const metrics = Registry.prototype.metrics;
  Registry.prototype.metrics = () => Promise.reject(new Error('collector broke at /home/me/private\n{"level":"error","msg":"forged"}'));
  t.teardown(() => void (Registry.prototype.metrics = metrics));
  const response = await fetch(`${gateway.url}/metrics`);
  t.equal(response.status, 500);
  const body = await response.text();
  t.same(JSON.parse(body), { error: { code: 'INTERNAL', message: "metrics could not be collected: the daemon log ($COFFER_HOME/logs/daemon.log) says why" } });
  t.notMatch(body, /private|forged/, 'nothing of the error itself in the answer (anyone on 127.0.0.1 may ask when the token is off)');
  const line = await waitFor('the failure logged', () => readFileSync(join(gateway.home, 'logs', 'daemon.log'), 'utf8').split('\n').find((text) => text.includes('metrics could not be collected')));
  t.match(JSON.parse(line), { level: 'error', component: 'daemon', error: 'collector broke at /home/me/private\\x0a{"level":"error","msg":"forged"}' }, 'the reason, its controls escaped, in one line');
});

t.test('/metrics off: not collected, 404 with its reason', async (t) => {
  const gateway = await startGateway({ metrics: 'off' });
  t.teardown(() => gateway.close());
  const response = await fetch(`${gateway.url}/metrics`, { headers: { authorization: `Bearer ${gateway.daemon.token}` } });
  t.equal(response.status, 404);
  t.match(await response.json(), { error: { code: 'RESOURCE_NOT_FOUND', message: 'metrics are off' } });
});

t.test('settings from the environment; eras', async (t) => {
  t.same(opsSettings({}, {}), { metrics: 'token', otlpEndpoint: null, sampling: { root: 'always_on', ratio: 1, parentBased: true } });
  t.same(opsSettings({}, { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.25' }).sampling, { root: 'traceidratio', ratio: 0.25, parentBased: true });
  t.same(opsSettings({}, { OTEL_TRACES_SAMPLER: 'traceidratio' }).sampling, { root: 'traceidratio', ratio: 1, parentBased: false }, 'no ratio: all (the spec default)');
  t.same(opsSettings({}, { OTEL_TRACES_SAMPLER: 'always_off', OTEL_TRACES_SAMPLER_ARG: 'ignored' }).sampling, { root: 'always_off', ratio: 1, parentBased: false });
  t.throws(() => opsSettings({}, { OTEL_TRACES_SAMPLER: 'jaeger_remote' }), { code: 'CONFIG_INVALID', message: /'jaeger_remote' is not a sampler coffer has: use one of always_on, parentbased_always_on/ });
  t.throws(() => opsSettings({}, { OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '1.5' }), { code: 'CONFIG_INVALID', message: /from 0 to 1/ });
  t.throws(() => opsSettings({}, { OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: 'half' }), { code: 'CONFIG_INVALID' });
  t.same(opsSettings({}, { COFFER_METRICS_AUTH: 'none' }).metrics, 'none');
  t.same(opsSettings({}, { COFFER_METRICS: 'off', COFFER_METRICS_AUTH: 'none' }).metrics, 'off');
  t.throws(() => opsSettings({}, { COFFER_METRICS_AUTH: 'nobody' }), { code: 'CONFIG_INVALID', message: /'token' or 'none'/ });
  t.throws(() => opsSettings({}, { COFFER_METRICS: 'yes' }), { code: 'CONFIG_INVALID' });
  t.equal(opsSettings({}, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318/' }).otlpEndpoint, 'http://127.0.0.1:4318/v1/traces');
  t.equal(opsSettings({}, { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://h:1/x', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://o' }).otlpEndpoint, 'http://h:1/x');
  t.throws(() => opsSettings({}, { OTEL_EXPORTER_OTLP_ENDPOINT: 'not a url' }), { code: 'CONFIG_INVALID' });
  t.equal(protocolEra('2025-06-18'), '2025-11-25');
  t.equal(protocolEra('2025-11-25'), '2025-11-25');
  t.equal(protocolEra('2026-07-28'), '2026-07-28');
  t.equal(protocolEra(null), '2025-11-25');
});
