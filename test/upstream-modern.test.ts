// Upstreams of the 2026-07-28 era behind coffer: each actor negotiates its era
// (server/discover, falling back to initialize), sends the per-request envelope
// and headers to modern upstreams, listens for their list changes, and keeps
// speaking the 2025 era to everything else. Real daemon, real v2 fixture
// upstreams (test/fixtures/modern-upstream.ts), real v1 SDK clients on /mcp.
import t, { type Test } from 'tap';
import { LoggingMessageNotificationSchema, ResourceUpdatedNotificationSchema, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { spawnHello, stdioFixture, type HelloChild } from './fixtures/fixture-servers.js';
import { startGateway, waitFor, type Gateway } from './helpers/gateway.js';
import { modernPost } from './helpers/modern.js';
import { VERSION } from '../src/version.js';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), 'fixtures');
const MODERN_FIXTURE = join(FIXTURES, 'modern-upstream.js');
const STRICT_FIXTURE = join(FIXTURES, 'strict-legacy-upstream.js');
const CONFORMANCE_MODERN = join(FIXTURES, 'conformance-modern.js');
const MODERN = '2026-07-28';

interface Logged {
  method: string;
  headers: Record<string, string>;
  meta: Record<string, unknown> | null;
  params: Record<string, any> | undefined;
}

type Modern = HelloChild<{ url: string; control: string }> & { log(): Promise<Logged[]>; control(path: string, body: unknown): Promise<void> };

async function modernUpstream(t: Test, ...args: string[]): Promise<Modern> {
  const child = await spawnHello<{ url: string; control: string }>(MODERN_FIXTURE, args);
  t.teardown(() => child.kill());
  return {
    ...child,
    log: async () => (await (await fetch(`${child.hello.control}/log`)).json()) as Logged[],
    control: async (path, body) => void (await fetch(`${child.hello.control}/${path}`, { method: 'POST', body: JSON.stringify(body) })),
  };
}

async function gatewayFor(t: Test): Promise<Gateway> {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  return gateway;
}

const httpServer = (name: string, url: string, extra: Record<string, unknown> = {}) => ({ name, transport: { type: 'http', url }, ...extra });
const health = async (gateway: Gateway, name: string) => (await gateway.api('GET', `/servers/${name}`)).body.health;
const toolNames = async (client: Awaited<ReturnType<Gateway['client']>>) => (await client.listTools()).tools.map((tool) => tool.name).sort();
const firstText = (result: any): string => result.content[0].text;

t.test('a modern-only upstream (legacy: reject) registers, lists and serves through coffer to a v1 client', async (t) => {
  const upstream = await modernUpstream(t, '--legacy', 'reject');
  const gateway = await gatewayFor(t);
  await gateway.addServer(httpServer('m', upstream.hello.url));
  const state = await health(gateway, 'm');
  t.equal(state.era, 'modern', 'health reports the era');
  t.equal(state.protocol_version, MODERN, 'and the version');
  const tested = await gateway.api('POST', '/servers/m/test');
  t.match(tested.body, { ok: true, protocol_version: MODERN, server_info: { name: 'coffer-modern-upstream' }, capabilities: { tools: 6, resources: 1, prompts: 1 } }, 'the test connection (R9) speaks the modern era too');

  const client = await gateway.client();
  t.same(await toolNames(client), ['m__add', 'm__ask', 'm__echo', 'm__regional', 'm__wait'], 'the tool with an invalid x-mcp-header is left out');
  const echoed = await client.callTool({ name: 'm__echo', arguments: { text: 'hi' } });
  t.equal(firstText(echoed), 'hi');
  t.notOk('resultType' in echoed, 'a 2025 client gets no resultType, which its era does not have');
  t.notOk(echoed._meta && 'io.modelcontextprotocol/serverInfo' in echoed._meta, "nor the upstream's serverInfo");
  t.equal(firstText(await client.callTool({ name: 'm__regional', arguments: { region: 'eu-west', q: 'x' } })), 'region=eu-west');
  t.equal(((await client.readResource({ uri: 'coffer://m/modern://readme' })).contents[0] as { text: string }).text, 'modern era');
  t.match((await client.getPrompt({ name: 'm__greet', arguments: { who: 'Ada' } })).messages[0]!.content, { text: 'Hello Ada' });

  const log = await upstream.log();
  t.notOk(log.some((entry) => entry.method === 'initialize' || entry.method === 'ping'), 'no initialize, no ping');
  for (const entry of log) {
    t.equal(entry.headers['mcp-protocol-version'], MODERN, `${entry.method}: MCP-Protocol-Version`);
    t.equal(entry.headers['mcp-method'], entry.method, `${entry.method}: Mcp-Method`);
    t.equal(entry.meta?.['io.modelcontextprotocol/protocolVersion'], MODERN, `${entry.method}: _meta protocolVersion`);
    t.same(entry.meta?.['io.modelcontextprotocol/clientCapabilities'], {}, `${entry.method}: _meta clientCapabilities`);
    t.match(entry.meta?.['io.modelcontextprotocol/clientInfo'], { name: 'coffer' }, `${entry.method}: _meta clientInfo`);
  }
  const regional = log.find((entry) => entry.method === 'tools/call' && entry.headers['mcp-name'] === 'regional');
  t.equal(regional?.headers['mcp-param-region'], 'eu-west', 'the x-mcp-header argument is mirrored into Mcp-Param-Region');
  t.equal(log.find((entry) => entry.method === 'resources/read')?.headers['mcp-name'], 'modern://readme', 'Mcp-Name carries the URI');

  // The switches apply to a modern upstream's tools as to any other.
  t.equal((await gateway.api('POST', '/servers/m/capabilities/tool/disable', { key: 'echo' })).status, 200);
  t.notOk((await toolNames(client)).includes('m__echo'), 'a disabled tool is not listed');
  const refused = await client.callTool({ name: 'm__echo', arguments: { text: 'x' } }).then(() => null, (error: any) => error);
  t.equal(refused?.data?.code, 'TOOL_DISABLED', 'and not called');

  // Asking a client that declared nothing for input: coffer tells the upstream so, and the upstream refuses clearly.
  const asked = await client.callTool({ name: 'm__ask', arguments: {} }).then(() => null, (error: any) => error);
  t.equal(asked?.code, -32021, 'missing client capability reaches the client as the upstream said it');
  t.match(asked?.message, /client capabilities do not declare/);
});

t.test('a tool added on a modern upstream reaches a v1 client as list_changed (upstream listen)', async (t) => {
  const upstream = await modernUpstream(t, '--legacy', 'reject');
  const gateway = await gatewayFor(t);
  await gateway.addServer(httpServer('live', upstream.hello.url));
  const client = await gateway.client();
  let changed = 0;
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => void changed++);
  t.notOk((await toolNames(client)).includes('live__late'));
  await waitFor('the listen stream', async () => (await upstream.log()).some((entry) => entry.method === 'subscriptions/listen'));
  await upstream.control('tool', { name: 'late' });
  await waitFor('list_changed at the client', () => changed > 0);
  t.ok((await toolNames(client)).includes('live__late'), 'the new list has the added tool');
});

t.test('resource updates of a modern upstream reach the subscribed client; a broken listen stream is reopened', async (t) => {
  const upstream = await modernUpstream(t, '--legacy', 'reject');
  const gateway = await gatewayFor(t);
  await gateway.addServer(httpServer('res', upstream.hello.url));
  const client = await gateway.client();
  const updated: string[] = [];
  let changed = 0;
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => void updated.push(notification.params.uri));
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => void changed++);
  await client.listTools();
  await client.subscribeResource({ uri: 'coffer://res/modern://readme' });
  const listens = async () => (await upstream.log()).filter((entry) => entry.method === 'subscriptions/listen');
  await waitFor('a listen naming the resource', async () => (await listens()).some((entry) => entry.params?.notifications?.resourceSubscriptions?.includes('modern://readme')));
  await upstream.control('updated', { uri: 'modern://readme' });
  await waitFor('resources/updated at the client', () => updated.length > 0);
  t.same(updated, ['coffer://res/modern://readme'], 'with the exposed URI');

  const opened = (await listens()).length;
  await upstream.control('drop-listens', {});
  await waitFor('the listen stream reopened', async () => (await listens()).length > opened);
  await waitFor('list_changed after the reopen (changes meanwhile were missed)', () => changed > 0);
  const reopened = (await listens()).at(-1)!;
  t.same(reopened.params?.notifications?.resourceSubscriptions, ['modern://readme'], 'the reopened stream keeps the subscription');
  await upstream.control('tool', { name: 'after' });
  await waitFor('the added tool listed', async () => (await toolNames(client)).includes('res__after'));
  t.pass('notifications flow again on the reopened stream');
});

t.test('a dual-era upstream (legacy: stateless): modern under auto, 2025 when pinned', async (t) => {
  const upstream = await modernUpstream(t, '--legacy', 'stateless');
  const gateway = await gatewayFor(t);
  await gateway.addServer(httpServer('dual', upstream.hello.url));
  await gateway.addServer(httpServer('old', upstream.hello.url, { protocol: '2025-11-25' }));
  t.equal((await health(gateway, 'dual')).era, 'modern');
  const pinned = await health(gateway, 'old');
  t.equal(pinned.era, 'legacy');
  t.equal(pinned.protocol_version, '2025-11-25');
  const client = await gateway.client();
  const names = await toolNames(client);
  t.ok(names.includes('dual__echo') && names.includes('old__echo'), 'both serve');
  t.equal(firstText(await client.callTool({ name: 'old__echo', arguments: { text: 'legacy' } })), 'legacy');
  const log = await upstream.log();
  t.ok(log.some((entry) => entry.method === 'initialize'), 'the pinned one said initialize');
  t.equal(log.filter((entry) => entry.method === 'server/discover').length >= 1, true, 'the auto one probed');
});

t.test('a legacy stdio upstream still connects under auto, and fast', async (t) => {
  const gateway = await gatewayFor(t);
  const timed = async (name: string, protocol: string): Promise<number> => {
    const started = Date.now();
    await gateway.addServer({ ...stdioFixture(name), protocol });
    return Date.now() - started;
  };
  const pinnedMs = await timed('pinned', '2025-11-25');
  const autoMs = await timed('auto', 'auto');
  t.equal((await health(gateway, 'auto')).era, 'legacy');
  t.equal((await health(gateway, 'auto')).protocol_version, '2025-11-25');
  t.comment(`connect + ready: pinned 2025-11-25 ${pinnedMs} ms, auto ${autoMs} ms`);
  // Fast because the probe is answered (refused), not waited out: a load-independent check of what the times show.
  // Only a child that takes longer than the window to start (the machine under load) answers after it: then its refusal comes late.
  const actorLog = await gateway.actorLog('auto', /speaking the 2025 era/);
  if (/no answer within the probe window/.test(actorLog)) {
    t.comment(`the child started after the probe window (${autoMs} ms to ready): the machine is loaded`);
    const late = /the answer to server\/discover came after coffer had given up on it: ignored/;
    t.match(await gateway.actorLog('auto', late), late, 'its answer to server/discover came after the window, and was ignored');
  } else {
    t.match(actorLog, /speaking the 2025 era: server\/discover answered error -?\d+/, 'the server refused server/discover and the era followed from it');
  }
  const client = await gateway.client();
  t.ok((await toolNames(client)).includes('auto__echo'));
});

t.test('a modern-only stdio server slower to start than the probe window still connects in the 2026 era', async (t) => {
  const gateway = await gatewayFor(t);
  // Silent for longer than the window (connect_ms / 3, at most 2 s), as a child is when many boot at once: it then refuses initialize.
  const command = `sleep 2.5; exec ${JSON.stringify(process.execPath)} ${JSON.stringify(CONFORMANCE_MODERN)} --legacy reject`;
  const created = await gateway.api('POST', '/servers', { name: 'slow', transport: { type: 'stdio', command: '/bin/sh', args: ['-c', command] }, timeouts: { connect_ms: 15_000 } });
  t.equal(created.status, 201);
  await waitFor('slow ready', async () => (await health(gateway, 'slow')).state === 'ready', 30_000);
  t.equal((await health(gateway, 'slow')).era, 'modern');
  const actorLog = await gateway.actorLog('slow', /speaking the 2026 era after all/);
  t.match(actorLog, /no answer within the probe window/, 'the window was waited out');
  t.match(actorLog, /speaking the 2026 era after all/, 'and the refusal of initialize sent coffer back to server\/discover');
  t.notMatch(actorLog, /UPSTREAM_VERSION_MISMATCH/, 'the connect did not fail first');
  t.notMatch(actorLog, /unknown message ID/, 'the late answer to the first probe is not reported as noise');
  const client = await gateway.client();
  t.ok((await toolNames(client)).includes('slow__test_simple_text'));
});

t.test('stdio 2025-era servers that exit on, or ignore, anything before initialize still connect under auto', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'coffer-strict-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const gateway = await gatewayFor(t);
  const strict = (name: string, mode: string) => ({
    name,
    transport: { type: 'stdio', command: process.execPath, args: [STRICT_FIXTURE, '--before-init', mode, '--spawn-log', join(dir, `${name}.log`)] },
  });
  const started = Date.now();
  await gateway.addServer(strict('dies', 'exit'));
  const diesMs = Date.now() - started;
  await gateway.addServer(strict('mute', 'silent'));
  const muteMs = Date.now() - started - diesMs;
  t.comment(`ready: exits on the probe ${diesMs} ms (one respawn), ignores the probe ${muteMs} ms (the probe window)`);
  for (const name of ['dies', 'mute']) t.equal((await health(gateway, name)).era, 'legacy', `${name}: 2025 era`);
  t.equal(readFileSync(join(dir, 'dies.log'), 'utf8').trim().split('\n').length, 2, 'the one that exited was started once more, for initialize');
  t.equal((await health(gateway, 'dies')).attempts, 0, 'and that counted as no failure');
  const client = await gateway.client();
  t.equal(firstText(await client.callTool({ name: 'dies__hello', arguments: {} })), 'hello from hello');
  t.equal(firstText(await client.callTool({ name: 'mute__hello', arguments: {} })), 'hello from hello');
});

t.test('negotiation failures reach the user as a stable code and what to do', async (t) => {
  const upstream = await modernUpstream(t, '--legacy', 'reject');
  const gateway = await gatewayFor(t);
  const register = async (config: object) => t.equal((await gateway.api('POST', '/servers', config)).status, 201);
  await register({ ...stdioFixture('pin26'), protocol: MODERN, timeouts: { connect_ms: 3_000 } });
  await register(httpServer('pin25', upstream.hello.url, { protocol: '2025-11-25' }));
  const failed = async (name: string) => {
    await waitFor(`${name} to fail`, async () => (await health(gateway, name)).last_error !== null);
    return health(gateway, name);
  };
  t.match((await failed('pin26')).last_error, /ERA_NEGOTIATION_FAILED: the server did not offer pinned protocol version 2026-07-28 via server\/discover.*set "protocol" to "auto"/);
  t.match((await failed('pin25')).last_error, /UPSTREAM_VERSION_MISMATCH: the upstream refused initialize .* speaks only 2026-07-28: set "protocol" to "auto"/);
  const client = await gateway.client();
  const error = await client.callTool({ name: 'pin25__echo', arguments: {} }).then(() => null, (caught: any) => caught);
  t.ok(error, 'a call to it fails');
});

t.test('ttlMs: 0 on a modern upstream does not turn client lists into an upstream list storm', async (t) => {
  const upstream = await modernUpstream(t, '--legacy', 'reject', '--ttl', '0');
  const gateway = await gatewayFor(t);
  await gateway.addServer(httpServer('zero', upstream.hello.url));
  const clients = await Promise.all([1, 2, 3, 4, 5].map((n) => gateway.client(`c${n}`)));
  const before = (await upstream.log()).filter((entry) => entry.method === 'tools/list').length;
  const started = Date.now();
  for (let round = 0; round < 10; round++) await Promise.all(clients.map((client) => client.listTools()));
  const elapsed = Date.now() - started;
  const lists = (await upstream.log()).filter((entry) => entry.method === 'tools/list').length - before;
  t.comment(`50 client lists in ${elapsed} ms: ${lists} upstream tools/list`);
  t.ok(lists <= Math.ceil(elapsed / 1_000) + 1, `at most one upstream list per second (${lists})`);
  // ttlMs bounds the cache: after the minimum interval a list goes upstream again.
  await new Promise((resolve) => setTimeout(resolve, 1_100));
  await clients[0]!.listTools();
  t.ok((await upstream.log()).filter((entry) => entry.method === 'tools/list').length - before > lists, 'a list after the interval is fetched again');
});

t.test('a private upstream list (cacheScope: "private") is coffer\'s own: listed once on its connection, served to every caller, each answer private', async (t) => {
  const upstream = await modernUpstream(t, '--legacy', 'reject', '--cache-scope', 'private');
  const gateway = await gatewayFor(t);
  await gateway.addServer(httpServer('p', upstream.hello.url));
  const token = async (name: string) => (await gateway.api('POST', '/clients', { name })).body.token as string;
  const [alice, bob] = [await token('alice'), await token('bob')];
  const upstreamLists = async () => (await upstream.log()).filter((entry) => entry.method === 'tools/list');

  const legacyNames = await toolNames(await gateway.client('alice', {}, alice));
  const afterAlice = (await upstreamLists()).length;
  const bobAnswer = await modernPost(gateway, 'tools/list', {}, { authorization: `Bearer ${bob}` });
  t.equal(bobAnswer.status, 200, 'a modern list with another client\'s token');
  const bobList = bobAnswer.messages[0].result;
  t.same(bobList.tools.map((tool: { name: string }) => tool.name).sort(), legacyNames, 'another client, of the other era, gets the same list');
  t.equal((await upstreamLists()).length, afterAlice, 'from coffer\'s copy: the second caller caused no upstream list');
  t.match(bobList, { ttlMs: 0, cacheScope: 'private' }, 'to each caller its list is private (and never to be cached)');
  // The one principal the upstream ever sees is coffer: its envelope, no caller's credential or capabilities.
  const lists = await upstreamLists();
  t.ok(lists.length >= 1, 'the upstream was listed');
  for (const entry of lists) {
    t.match(entry.meta?.['io.modelcontextprotocol/clientInfo'], { name: 'coffer' }, 'listed as coffer');
    t.same(entry.meta?.['io.modelcontextprotocol/clientCapabilities'], {}, 'with coffer\'s own capabilities');
  }
});

t.test('log messages of a modern upstream: each request asks for the level its caller wants, none when it wants none', async (t) => {
  const gateway = await gatewayFor(t);
  // The v2 conformance fixture logs three info messages from test_logging_tool, only when the request's envelope asks for them.
  await gateway.addServer({ name: 'logs', transport: { type: 'stdio', command: process.execPath, args: [CONFORMANCE_MODERN, '--legacy', 'reject'] } });
  t.equal((await health(gateway, 'logs')).era, 'modern');
  const logged = (client: Awaited<ReturnType<Gateway['client']>>) => {
    const seen: string[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => void seen.push(String(notification.params.data)));
    return seen;
  };
  const call = (client: Awaited<ReturnType<Gateway['client']>>) => client.callTool({ name: 'logs__test_logging_tool', arguments: {} });

  const silent = await gateway.client('silent');
  const silentSeen = logged(silent);
  await call(silent);
  const info = await gateway.client('info');
  const infoSeen = logged(info);
  await info.setLoggingLevel('info');
  await call(info);
  await waitFor('the info session\'s three messages', () => infoSeen.length >= 3);
  t.same(infoSeen, ['Tool execution started', 'Tool processing data', 'Tool execution completed'], 'a 2025 session that set info gets the upstream\'s info messages of its call');
  const warning = await gateway.client('warning');
  const warningSeen = logged(warning);
  await warning.setLoggingLevel('warning');
  await call(warning);
  t.same(silentSeen, [], 'a session that set no level asked for none');
  t.same(warningSeen, [], 'one that set warning gets no info messages');

  const withLevel = await modernPost(gateway, 'tools/call', { name: 'logs__test_logging_tool', arguments: {}, _meta: { 'io.modelcontextprotocol/logLevel': 'info' } });
  t.same(withLevel.messages.filter((message) => message.method === 'notifications/message').map((message) => message.params.data), ['Tool execution started', 'Tool processing data', 'Tool execution completed'], 'a modern caller asking for info gets them on its request\'s stream');
  const without = await modernPost(gateway, 'tools/call', { name: 'logs__test_logging_tool', arguments: {} });
  t.notOk(without.messages.some((message) => message.method === 'notifications/message'), 'one that asks for none gets none');
  t.match(without.messages.at(-1), { result: { content: [{ text: 'Tool with logging executed successfully' }] } });
});

t.test("a modern caller's _meta reaches a modern upstream without the caller's envelope, other keys (a __proto__ one too) as plain data", async (t) => {
  const upstream = await modernUpstream(t, '--legacy', 'reject');
  const gateway = await gatewayFor(t);
  await gateway.addServer(httpServer('m', upstream.hello.url));
  const meta = JSON.parse('{"__proto__": {"polluted": true}, "keep": 1, "io.modelcontextprotocol/clientInfo": {"name": "caller", "version": "9"}}') as Record<string, unknown>;
  const answer = await modernPost(gateway, 'tools/call', { name: 'm__echo', arguments: { text: 'hi' }, _meta: meta });
  t.equal(answer.messages[0]?.result?.content?.[0]?.text, 'hi', 'the call is answered', { answer: answer.text });
  t.equal(answer.messages[0]?.result?.resultType, 'complete');
  t.same(answer.messages[0]?.result?._meta, { 'io.modelcontextprotocol/serverInfo': { name: 'coffer', version: VERSION } }, 'coffer answers as itself, not as its upstream');
  const sent = (await upstream.log()).find((entry) => entry.method === 'tools/call');
  t.equal(sent?.meta?.keep, 1, 'a key of its own stays');
  t.same(Object.getOwnPropertyDescriptor(sent?.meta ?? {}, '__proto__')?.value, { polluted: true }, '__proto__ arrives as an own data key');
  t.match(sent?.meta?.['io.modelcontextprotocol/clientInfo'], { name: 'coffer' }, "the upstream hears coffer's envelope, not the caller's");
  t.equal(({} as Record<string, unknown>).polluted, undefined, 'no prototype was touched');
});
