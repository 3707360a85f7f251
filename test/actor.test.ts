// The upstream actor against real fixture servers over stdio, Streamable HTTP
// and SSE: lists, the list cache, forwarding, progress, environment.
import { createRequire } from 'node:module';
import t from 'tap';
import { startHost } from '../bench/targets/host.js';
import type { Progress } from '../src/protocol/actor.js';
import { MSGPACK_FROM_ITEMS } from '../src/protocol/list-codec.js';
import type { ActorListAnswer } from '../src/upstreams/actor.js';
import { callTool, startActor, toolJson } from './fixtures/actor-harness.js';
import type { ServerConfig } from '../src/protocol/server-config.js';
import { networkConfig, SERVER_INFO_FIXTURE, serverConfig, startNetworkFixture, stdioFixture } from './fixtures/fixture-servers.js';
import { waitFor } from './helpers/wait.js';

function names(answer: ActorListAnswer, key = 'name'): unknown[] {
  if (!answer.ok || answer.state !== 'live') throw new Error(`not a live list: ${JSON.stringify(answer)}`);
  return answer.items.map((item) => item[key]);
}

const ALL_TOOLS = ['echo', 'whoami', 'getenv', 'slow', 'crash', 'mutate', 'stats'];

t.test('stdio: every kind lists live, forwards return results unchanged', async (t) => {
  process.env.COFFER_TEST_SECRET = 'do-not-leak';
  t.teardown(() => {
    delete process.env.COFFER_TEST_SECRET;
  });
  const config = stdioFixture('alpha', ['--resources', '--prompts'], {}, { FIXTURE_TOKEN: 'configured-value' });
  if (config.transport.type === 'stdio') config.transport.cwd = '/tmp';
  const actor = startActor(t, config);
  const ready = await actor.waitForState('ready');
  t.equal(ready.type === 'state' && ready.status.serverInfo?.name, 'alpha');
  t.type(ready.type === 'state' && ready.status.pid, 'number');
  t.same(names(await actor.handle.list('tools', false)), ALL_TOOLS);
  t.same(names(await actor.handle.list('resources', false), 'uri'), ['fixture://static']);
  t.same(names(await actor.handle.list('resourceTemplates', false), 'uriTemplate'), ['fixture://items/{id}']);
  t.same(names(await actor.handle.list('prompts', false)), ['greet']);

  const echo = await callTool(actor, 'echo', { a: 1, nested: { b: [true, null] } });
  t.same(echo, {
    ok: true,
    result: { content: [{ type: 'text', text: '{"a":1,"nested":{"b":[true,null]}}' }], structuredContent: { a: 1, nested: { b: [true, null] } }, fixture_extra: { kept: true } },
  });
  const read = await actor.handle.forward({ id: 'r1', method: 'resources/read', params: { uri: 'fixture://items/7' }, progress: false });
  t.same(read, { ok: true, result: { contents: [{ uri: 'fixture://items/7', mimeType: 'text/plain', text: 'content of fixture://items/7' }] } });
  const unknown = await callTool(actor, 'no_such_tool');
  t.match(unknown, { ok: false, error: { code: -32602, message: /unknown tool no_such_tool/ } }, 'upstream errors pass through');
  const method = await actor.handle.forward({ id: 'm1', method: 'completion/complete', params: {}, progress: false });
  t.match(method, { ok: false, error: { code: -32601 } });

  // Progress comes back with the request that asked for it, before its answer.
  const progress: Progress[] = [];
  t.same(toolJson(await callTool(actor, 'slow', { ms: 300, steps: 3 }, { progress: true, id: 'p-1', onProgress: (p) => progress.push(p) })), { slept: 300 });
  // Progress after its call's answer is dropped, so what is here came first.
  t.ok(progress.length >= 2, 'progress arrived before the answer');
  t.match(progress[0], { progress: 1, total: 3, message: 'step 1' });
  const unasked: Progress[] = [];
  await callTool(actor, 'slow', { ms: 100, steps: 2 }, { progress: false, id: 'p-2', onProgress: (p) => unasked.push(p) });
  t.same(unasked, [], 'no progress unless asked');

  // The child's environment is minimal plus the configured env; cwd as configured. (NODE_OPTIONS is covered by
  // the child-env unit test: under tap, its process-info hook copies NODE_OPTIONS into every child.)
  const who = toolJson(await callTool(actor, 'whoami'));
  t.equal(who.cwd, '/tmp');
  const keys = who.envKeys as string[];
  t.ok(keys.includes('PATH') && keys.includes('FIXTURE_TOKEN'));
  t.notOk(keys.includes('COFFER_TEST_SECRET'), 'the daemon env is not inherited');
  t.same(toolJson(await callTool(actor, 'getenv', { name: 'FIXTURE_TOKEN' })), { value: 'configured-value' });
  t.notMatch(actor.log(), /configured-value/, 'env values are never logged');
});

t.test('Streamable HTTP and SSE upstreams, with headers', async (t) => {
  for (const transport of ['http', 'sse'] as const) {
    const fixture = await startNetworkFixture(transport, ['--prompts']);
    t.teardown(() => fixture.kill());
    const actor = startActor(t, networkConfig(`net-${transport}`, transport, fixture.url, {}, { 'x-coffer-test': 'yes' }));
    await actor.waitForState('ready');
    t.same(names(await actor.handle.list('tools', false)), ALL_TOOLS, `${transport}: tools`);
    t.same(names(await actor.handle.list('prompts', false)), ['greet'], `${transport}: prompts`);
    t.match(await actor.handle.list('resources', false), { ok: true, state: 'unsupported' }, `${transport}: resources not advertised`);
    t.same(toolJson(await callTool(actor, 'echo', { via: transport })), { via: transport });
    await actor.handle.stop();
  }
});

t.test('unsupported kinds: not advertised, or -32601; cached, not errors', async (t) => {
  const actor = startActor(t, stdioFixture('sparse', ['--tools', 'none', '--method-not-found', 'prompts']));
  await actor.waitForState('ready');
  t.match(await actor.handle.list('tools', false), { ok: true, state: 'unsupported', cached: false });
  t.match(await actor.handle.list('resources', false), { ok: true, state: 'unsupported' });
  t.match(await actor.handle.list('resourceTemplates', false), { ok: true, state: 'unsupported' });
  t.match(await actor.handle.list('prompts', false), { ok: true, state: 'unsupported', cached: false }, '-32601 is unsupported');
  t.match(await actor.handle.list('prompts', false), { ok: true, state: 'unsupported', cached: true });
  t.notMatch(actor.log(), /evicting/, 'a -32601 does not evict the connection');
});

t.test('list cache: hits, fresh, TTL, list_changed, shared in-flight fetch', async (t) => {
  const actor = startActor(t, stdioFixture('cached'), { cacheTtlMs: 400 });
  await actor.waitForState('ready');
  const stats = async () => (toolJson(await callTool(actor, 'stats')).lists as Record<string, number>).tools ?? 0;

  const first = await actor.handle.list('tools', false);
  const hit = await actor.handle.list('tools', false);
  t.match(first, { ok: true, cached: false });
  t.match(hit, { ok: true, cached: true, version: first.ok ? first.version : -1 });
  t.equal(await stats(), 1, 'the hit did not reach the upstream');

  const fresh = await actor.handle.list('tools', true);
  t.match(fresh, { ok: true, cached: false, version: first.ok ? first.version : -1 }, 'fresh refetches; same content keeps the version');
  t.equal(await stats(), 2);

  await new Promise((resolve) => setTimeout(resolve, 450));
  t.match(await actor.handle.list('tools', false), { ok: true, cached: false }, 'expired after the TTL');
  t.equal(await stats(), 3);

  // R3: the upstream's list_changed empties the cache.
  const dropped = async (): Promise<void> => {
    const seen = actor.events.length;
    t.ok((await callTool(actor, 'mutate')).ok);
    await actor.waitFor((event) => event.type === 'list_changed' && event.kind === 'tools' && actor.events.indexOf(event) >= seen);
  };
  await dropped();
  t.match(await actor.handle.list('tools', false), { ok: true, cached: false }, 'list_changed empties the cache');
  t.equal(await stats(), 4);

  await dropped();
  // Three lists posted together after the cache was dropped: one upstream request serves them all.
  const together = await Promise.all([actor.handle.list('tools', false), actor.handle.list('tools', false), actor.handle.list('tools', false)]);
  t.ok(together.every((answer) => answer.ok && answer.state === 'live' && answer.items.length === 9), 'all three see both added tools');
  t.equal(await stats(), 5, 'concurrent lists shared one upstream request');
});

t.test('list_changed drops the cache, emits an event, bumps the version', async (t) => {
  const actor = startActor(t, stdioFixture('changing', ['--resources']));
  await actor.waitForState('ready');
  const before = await actor.handle.list('tools', false);
  await actor.handle.list('resources', false);
  await actor.handle.list('resourceTemplates', false);

  t.ok((await callTool(actor, 'mutate')).ok);
  await actor.waitFor((event) => event.type === 'list_changed' && event.kind === 'tools');
  const after = await actor.handle.list('tools', false);
  t.match(after, { ok: true, cached: false });
  t.ok(names(after).includes('added_1'));
  t.not(after.ok && after.version, before.ok && before.version, 'new content, new version');

  t.ok((await callTool(actor, 'mutate', { kind: 'resources' })).ok);
  await actor.waitFor((event) => event.type === 'list_changed' && event.kind === 'resourceTemplates');
  t.ok(actor.events.some((event) => event.type === 'list_changed' && event.kind === 'resources'));
  t.match(await actor.handle.list('resourceTemplates', false), { ok: true, cached: false }, 'resource templates dropped with resources');
  t.match(await actor.handle.list('tools', false), { ok: true, cached: true }, 'other kinds stay cached');
});

t.test('paginated lists are followed to the end; malformed schemas normalised, nameless items dropped', async (t) => {
  const actor = startActor(t, stdioFixture('messy', ['--tools', 'echo,stats,malformed', '--page-size', '2']));
  await actor.waitForState('ready');
  const answer = await actor.handle.list('tools', false);
  if (!answer.ok || answer.state !== 'live') throw new Error('expected a live list');
  const byName = new Map(answer.items.map((tool) => [tool.name, tool]));
  t.same([...byName.keys()], ['echo', 'stats', 'bad_schema', 'bad_output', 'no_schema']);
  t.equal((toolJson(await callTool(actor, 'stats')).lists as Record<string, number>).tools, 3, 'three pages');
  t.same(byName.get('bad_schema')!.inputSchema, { type: 'object', properties: { x: { type: 'string' } }, required: ['x'] });
  t.notOk('outputSchema' in byName.get('bad_output')!);
  t.same(byName.get('no_schema')!.inputSchema, { type: 'object' });
  // The log is appended asynchronously: the note is there once the writes in flight land.
  await waitFor('the note on the nameless tool', () => actor.log().includes('tools[5]'), 5_000);
  t.match(actor.log(), /tools\[5\]: no string name, dropped/);
});

t.test('a list long enough to be packed arrives whole from a real worker, which loads msgpackr only then', async (t) => {
  const count = MSGPACK_FROM_ITEMS + 50;
  const host = await startHost(count);
  t.teardown(() => host.stop());
  await host.configure({ servers: { 0: { tools: count } } });
  const actor = startActor(t, networkConfig('many', 'http', host.url(0)));
  await actor.waitForState('ready');
  const answer = await actor.handle.list('tools', false);
  if (!answer.ok || answer.state !== 'live') throw new Error('expected a live list');
  t.equal(answer.items.length, count, `${count} tools`);
  t.equal(new Set(answer.items.map((tool) => tool.name)).size, count, 'each once');
});

t.test('server-everything lists over stdio', async (t) => {
  const entry = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-everything/dist/index.js');
  const actor = startActor(t, serverConfig('everything', { type: 'stdio', command: process.execPath, args: [entry, 'stdio'], env: {}, cwd: null }));
  await actor.waitForState('ready', 0, 20_000);
  const tools = await actor.handle.list('tools', false);
  t.ok(tools.ok && tools.state === 'live' && tools.items.length > 5, 'tools listed');
  t.ok(names(tools).includes('echo'));
  const resources = await actor.handle.list('resources', false);
  t.ok(resources.ok && resources.state === 'live');
  t.match(await callTool(actor, 'echo', { message: 'hi' }), { ok: true, result: { content: [{ type: 'text', text: /hi/ }] } }, 'a real tool call');
});

t.test("an upstream's serverInfo is what it says of itself, never a reason it cannot connect: a name that is no string is dropped, a huge one clipped", async (t) => {
  const describedAs = (serverInfo: unknown): ServerConfig => serverConfig('self', { type: 'stdio', command: process.execPath, args: [SERVER_INFO_FIXTURE, JSON.stringify(serverInfo)], env: {}, cwd: null });
  for (const [what, serverInfo] of [
    ['a name that cannot become a string', { name: { toString: 1 }, version: '1' }],
    ['a version that cannot become a string', { name: 'self', version: { valueOf: 1, toString: 1 } }],
  ] as const) {
    const actor = startActor(t, describedAs(serverInfo), {}, {});
    const ready = await actor.waitForState('ready', 0, 15_000).catch(() => actor.events.at(-1));
    t.equal(ready?.type === 'state' && ready.status.state, 'ready', `${what}: connects (${JSON.stringify(ready?.type === 'state' ? ready.status.lastError : ready)})`);
    t.same(names(await actor.handle.list('tools', false)), ['plain'], `${what}: its tools list`);
    await actor.handle.stop();
  }
  const nameless = startActor(t, describedAs({ name: { toString: 1 }, version: '1' }));
  const status = await nameless.waitForState('ready', 0, 15_000);
  t.equal(status.type === 'state' && status.status.serverInfo, null, 'a name that is no string leaves no serverInfo');
  const huge = startActor(t, describedAs({ name: 'n'.repeat(40_000), version: 'v'.repeat(40_000) }));
  const described = await huge.waitForState('ready', 0, 15_000);
  const info = described.type === 'state' ? described.status.serverInfo : null;
  t.ok(info && info.name.startsWith('nnn') && info.name.length <= 2_100 && info.version.length <= 2_100, `a huge name and version are clipped (${info?.name.length}, ${info?.version.length} chars)`);
});
