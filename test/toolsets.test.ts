// Toolsets through a running daemon with real upstreams and real SDK clients
// over HTTP: a toolset only narrows (R10 still rules), its lists and
// list_changed are exact per view, a bound client sees only its set on /mcp
// too, and the REST surface round-trips with audit entries and admin events.
import { rmSync } from 'node:fs';
import t, { type Test } from 'tap';
import { LoggingMessageNotificationSchema, McpError, PromptListChangedNotificationSchema, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { connectAdmin } from '../src/admin/client.js';
import type { CofferEvent } from '../src/protocol/events.js';
import { startGateway, tempHome, waitFor, type Gateway } from './helpers/gateway.js';
import { mcpPost, MCP_HEADERS } from './helpers/mcp-post.js';
import { faultSwitch, stdioFixture } from './fixtures/fixture-servers.js';
import { modernClient } from './helpers/modern.js';
import { ToolsetView } from '../src/toolsets/view.js';
import { ViewLists, type ViewSession } from '../src/toolsets/view-lists.js';
import { ViewNotifier } from '../src/toolsets/notifier.js';
import { Logger } from '../src/log.js';
import type { Namespaced } from '../src/router/namespace.js';
import type { ListAnswer } from '../src/upstreams/upstream.js';
import { heldLists } from './helpers/held-lists.js';

type ModernClient = Awaited<ReturnType<typeof modernClient>>;

const TA = { name: 'ta', description: 'a few of a', servers: [{ server: 'a', include: ['tool:echo', 'tool:mutate', 'tool:stats', 'prompt:*'] }] };
const TB = { name: 'tb', servers: [{ server: 'b', exclude: ['tool:crash'] }] };

const names = async (client: Client) => (await client.listTools()).tools.map((tool) => tool.name).sort();

async function withServers(options: Parameters<typeof startGateway>[0] = {}): Promise<Gateway> {
  const gateway = await startGateway(options);
  t.teardown(() => gateway.close());
  await gateway.addServer(stdioFixture('a', ['--prompts']));
  await gateway.addServer(stdioFixture('b'));
  for (const spec of [TA, TB]) {
    const created = await gateway.api('POST', '/toolsets', spec);
    if (created.status !== 201) throw new Error(`toolset not created: ${JSON.stringify(created.body)}`);
  }
  return gateway;
}

async function refusal(call: Promise<unknown>): Promise<{ code: number; data: any }> {
  const error = await call.then(
    () => null,
    (caught: unknown) => caught,
  );
  if (!(error instanceof McpError)) throw new Error(`expected an MCP error, got ${String(error)}`);
  return { code: error.code, data: error.data };
}

async function toggle(gateway: Gateway, server: string, key: string, enabled: boolean): Promise<void> {
  const answer = await gateway.api('POST', `/servers/${server}/capabilities/tool/${enabled ? 'enable' : 'disable'}`, { key });
  if (answer.status !== 200) throw new Error(`toggle failed: ${JSON.stringify(answer.body)}`);
}

t.test('a toolset only narrows: outside is neither listed nor callable (NOT_IN_TOOLSET), a switch off inside is gone (R10)', async (t) => {
  const gateway = await withServers();
  const inSet = await gateway.client('ta-client', {}, undefined, '/mcp/ta');
  const whole = await gateway.client('whole');
  t.same(await names(inSet), ['a__echo', 'a__mutate', 'a__stats'], 'only the included tools of a');
  t.same((await inSet.listPrompts()).prompts.map((prompt) => prompt.name), ['a__greet']);
  t.ok((await names(whole)).includes('a__whoami') && (await names(whole)).includes('b__echo'), '/mcp stays the whole surface');
  t.match(await inSet.callTool({ name: 'a__echo', arguments: { x: 1 } }), { content: [{ type: 'text' }] }, 'a tool in the set is callable');

  for (const outside of ['a__whoami', 'b__echo']) {
    t.match(await refusal(inSet.callTool({ name: outside, arguments: {} })), { code: -32015, data: { code: 'NOT_IN_TOOLSET', toolset: 'ta' } }, `${outside} is refused`);
  }
  t.ok((await inSet.getPrompt({ name: 'a__greet', arguments: { name: 'x' } })).messages.length > 0, 'a prompt in the set is served');

  await toggle(gateway, 'a', 'echo', false);
  t.same(await names(inSet), ['a__mutate', 'a__stats'], 'a switched-off tool leaves the toolset too');
  t.match(await refusal(inSet.callTool({ name: 'a__echo', arguments: {} })), { code: -32000, data: { code: 'TOOL_DISABLED' } }, 'and is refused as disabled');
  await toggle(gateway, 'a', 'whoami', true);
  t.notOk((await names(inSet)).includes('a__whoami'), 'a switch on outside the set does not widen it');
  await toggle(gateway, 'a', 'echo', true);
  t.same(await names(inSet), ['a__echo', 'a__mutate', 'a__stats']);
});

type Heard = { ta: number; tb: number; whole: number };

/**
 * Switches inside and outside each set, an upstream's new tool and a change of
 * the set itself: each view (`heard` counts its tools/list_changed) must hear
 * exactly what changed its own list. `listed` runs after each step (a 2025
 * session lists again, as a client told would); `mutate` adds a tool to a.
 */
async function listChangedPerView(t: Test, gateway: Gateway, heard: Heard, listed: () => Promise<unknown>, mutate: () => Promise<unknown>): Promise<void> {
  const settle = () => new Promise((resolve) => setTimeout(resolve, 1_000));
  const expect = async (label: string, want: Heard) => {
    await waitFor(label, () => Object.entries(want).every(([key, count]) => heard[key as keyof Heard] >= count), 10_000);
    await settle();
    t.same(heard, want, label);
    await listed();
  };

  await toggle(gateway, 'b', 'echo', false);
  await expect('a switch inside tb: tb and /mcp hear it, ta does not', { ta: 0, tb: 1, whole: 1 });
  await toggle(gateway, 'a', 'whoami', false);
  await expect('a switch of a outside ta: only /mcp hears it', { ta: 0, tb: 1, whole: 2 });
  await toggle(gateway, 'b', 'crash', false);
  await expect('a switch of an excluded tool of tb: only /mcp hears it', { ta: 0, tb: 1, whole: 3 });
  await mutate();
  await expect("an upstream's new tool outside ta: only /mcp hears it", { ta: 0, tb: 1, whole: 4 });
  await toggle(gateway, 'a', 'echo', false);
  await expect('a switch inside ta: ta and /mcp hear it', { ta: 1, tb: 1, whole: 5 });
  t.equal((await gateway.api('PATCH', '/toolsets/ta', { servers: [{ server: 'a', include: ['tool:getenv'] }] })).status, 200);
  await expect('the toolset itself changed: only its sessions hear it', { ta: 2, tb: 1, whole: 5 });
}

t.test('list_changed reaches only the sessions whose own view changed', async (t) => {
  const gateway = await withServers();
  const clients = { ta: await gateway.client('ta', {}, undefined, '/mcp/ta'), tb: await gateway.client('tb', {}, undefined, '/mcp/tb'), whole: await gateway.client('whole') };
  const heard = { ta: 0, tb: 0, whole: 0 };
  for (const [key, client] of Object.entries(clients) as [keyof Heard, Client][]) {
    await client.listTools();
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => void heard[key]++);
  }
  const listAll = async () => {
    for (const client of Object.values(clients)) await client.listTools();
  };
  await listChangedPerView(t, gateway, heard, listAll, () => clients.ta.callTool({ name: 'a__mutate', arguments: {} }));
  t.same(await names(clients.ta), ['a__getenv'], 'and list the new set');
});

t.test("an upstream's list_changed inside a set reaches its sessions: the set's list is weighed after the upstream's old copy is gone", async (t) => {
  const gateway = await withServers();
  const inSet = await gateway.client('ta', {}, undefined, '/mcp/ta');
  const whole = await gateway.client('whole');
  const heard = { ta: 0, whole: 0 };
  for (const [key, client] of [['ta', inSet], ['whole', whole]] as const) {
    t.same((await client.listPrompts()).prompts.map((prompt) => prompt.name), ['a__greet']);
    client.setNotificationHandler(PromptListChangedNotificationSchema, () => void heard[key]++);
  }
  // The fixture adds prompt added_1 (in ta: prompt:*) and announces it.
  await inSet.callTool({ name: 'a__mutate', arguments: { kind: 'prompts' } });
  await waitFor('the whole surface told', () => heard.whole > 0, 10_000);
  await waitFor('the session of ta told', () => heard.ta > 0, 5_000);
  t.same((await inSet.listPrompts()).prompts.map((prompt) => prompt.name).sort(), ['a__added_1', 'a__greet'], 'and its list has the new prompt');
});

t.test('2026-07-28 listens hear list_changed only when their own view changed, and once', async (t) => {
  const gateway = await withServers();
  const heard = { ta: 0, tb: 0, whole: 0 };
  const clients = new Map<keyof Heard, ModernClient>();
  for (const [key, path] of [['ta', '/mcp/ta'], ['tb', '/mcp/tb'], ['whole', '/mcp']] as const) {
    const client = await modernClient(gateway, 'pin', { path });
    t.teardown(() => client.close());
    client.setNotificationHandler('notifications/tools/list_changed', () => void heard[key]++);
    await client.listen({ toolsListChanged: true });
    clients.set(key, client);
  }
  // A 2025 session of ta beside them: its list_changed must not reach the listens again.
  const legacy = await gateway.client('ta-legacy', {}, undefined, '/mcp/ta');
  await legacy.listTools();
  // A listen never lists: what it hears is measured against its view when it opened.
  await listChangedPerView(t, gateway, heard, () => legacy.listTools(), () => clients.get('ta')!.callTool({ name: 'a__mutate', arguments: {} }));
});

t.test("a toolset holds a resource URI as the switches do: by its resource's key, else by the templates that generate it", async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  await gateway.addServer(stdioFixture('r', ['--resources']));
  for (const spec of [
    { name: 'notemplate', servers: [{ server: 'r', exclude: ['resource:fixture://items/{id}'] }] },
    { name: 'onlytemplate', servers: [{ server: 'r', include: ['resource:fixture://items/{id}'] }] },
  ]) {
    t.equal((await gateway.api('POST', '/toolsets', spec)).status, 201);
  }
  const item = { uri: 'coffer://r/fixture://items/7' };
  const listed = { uri: 'coffer://r/fixture://static' };

  const without = await gateway.client('nt', {}, undefined, '/mcp/notemplate');
  t.same((await without.listResourceTemplates()).resourceTemplates, [], 'the excluded template is not listed');
  t.match(await refusal(without.readResource(item)), { code: -32015, data: { code: 'NOT_IN_TOOLSET', toolset: 'notemplate' } }, 'nor is a URI it generates readable');
  t.ok((await without.readResource(listed)).contents.length > 0, 'a listed resource of the set is');

  const only = await gateway.client('ot', {}, undefined, '/mcp/onlytemplate');
  t.equal((await only.listResourceTemplates()).resourceTemplates.length, 1, 'the one included template is listed');
  t.ok((await only.readResource(item)).contents.length > 0, 'a URI it generates is readable');
  t.match(await refusal(only.readResource(listed)), { code: -32015, data: { code: 'NOT_IN_TOOLSET' } }, 'a resource outside the set is not');
});

t.test('a client bound to a toolset sees only its set, on /mcp too; it cannot reach another', async (t) => {
  const gateway = await withServers();
  const added = await gateway.api('POST', '/clients', { name: 'cursor', toolset: 'ta' });
  t.equal(added.status, 201);
  t.equal(added.body.toolset, 'ta');
  const token = added.body.token as string;
  const onMcp = await gateway.client('bound', {}, token);
  t.same(await names(onMcp), ['a__echo', 'a__mutate', 'a__stats'], 'on /mcp the bound client sees its toolset');
  t.match(await refusal(onMcp.callTool({ name: 'b__echo', arguments: {} })), { data: { code: 'NOT_IN_TOOLSET' } });
  t.same(await names(await gateway.client('bound-own', {}, token, '/mcp/ta')), ['a__echo', 'a__mutate', 'a__stats'], 'its own endpoint works too');

  const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } };
  const other = await mcpPost(gateway, init, { ...MCP_HEADERS, authorization: `Bearer ${token}` }, 5_000, '/mcp/tb');
  t.equal(other.status, 403, 'another toolset is refused');
  t.match(other.messages[0], { error: { data: { code: 'TOOLSET_FORBIDDEN' } } });
  const unknown = await mcpPost(gateway, init, {}, 5_000, '/mcp/nope');
  t.equal(unknown.status, 404);
  t.match(unknown.messages[0], { error: { data: { code: 'RESOURCE_NOT_FOUND' } } });

  t.same((await gateway.api('GET', '/toolsets/ta')).body.clients, ['cursor'], 'the toolset names the client that uses it');
  const removal = await gateway.api('DELETE', '/toolsets/ta');
  t.equal(removal.status, 409, 'a bound toolset is not removed');
  t.equal(removal.body.error.code, 'RESOURCE_IN_USE');

  const unbound = await gateway.api('PATCH', '/clients/cursor', { toolset: null });
  t.same(unbound.body, { name: 'cursor', created_at: added.body.created_at, toolset: null });
  await t.rejects(onMcp.listTools(), 'its sessions on the old view are closed');
  t.ok((await names(await gateway.client('unbound', {}, token))).includes('b__echo'), 'unbound, it sees the whole surface again');
  t.equal((await gateway.api('PATCH', '/clients/cursor', { toolset: 'nope' })).status, 404);
  t.equal((await gateway.api('PATCH', '/clients/ghost', { toolset: 'ta' })).status, 404);
  t.equal((await gateway.api('POST', '/clients', { name: 'c2', toolset: 'nope' })).status, 404, 'a client cannot be added with an unknown toolset');
});

t.test('REST: add, show, update, remove; invalid specs refused with field paths; audit entries and admin events', async (t) => {
  const gateway = await withServers();
  const admin = await connectAdmin({ port: gateway.daemon.port, token: gateway.daemon.token });
  t.teardown(() => admin.close());
  const events: CofferEvent[] = [];
  admin.onEvent((event) => events.push(event));
  await admin.request({ type: 'subscribe', types: ['toolset', 'client_bound'] });

  const bad = [
    [{ name: 'x', servers: [{ server: 'ghost' }] }, 'servers[0].server'],
    [{ name: 'x', servers: [{ server: 'a', include: ['verb:echo'] }] }, 'servers[0].include[0]'],
    [{ name: 'a/b', servers: [] }, 'name'],
    [{ name: 'x', servers: [{ server: 'a' }, { server: 'a' }] }, 'servers'],
    [{ name: 'x', servers: [], mode: 'fast' }, 'mode'],
  ] as const;
  for (const [spec, field] of bad) {
    const answer = await gateway.api('POST', '/toolsets', spec);
    t.equal(answer.status, 422, `${JSON.stringify(spec)} refused`);
    t.equal(answer.body.error.code, 'CONFIG_INVALID');
    t.ok(answer.body.error.details.errors.some((error: { field: string }) => error.field === field), `names ${field}`);
  }
  t.equal((await gateway.api('POST', '/toolsets', TA)).body.error.code, 'RESOURCE_ALREADY_EXISTS');

  const created = await gateway.api('POST', '/toolsets', { name: 'docs', servers: [{ server: 'a', include: ['prompt:greet'] }] });
  t.equal(created.status, 201);
  t.match(created.body, { name: 'docs', description: '', endpoint: '/mcp/docs', clients: [] });
  t.equal((await gateway.api('PATCH', '/toolsets/docs', { description: 'prompts only' })).body.servers[0].include[0], 'prompt:greet', 'a description alone keeps the rules');
  const updated = await gateway.api('PATCH', '/toolsets/docs', { servers: [{ server: 'b' }] });
  t.same(updated.body.servers, [{ server: 'b' }]);
  t.equal(updated.body.description, 'prompts only');
  t.same((await gateway.api('GET', '/toolsets')).body.toolsets.map((toolset: { name: string }) => toolset.name), ['docs', 'ta', 'tb']);
  t.equal((await gateway.api('DELETE', '/toolsets/docs')).status, 204);
  t.equal((await gateway.api('GET', '/toolsets/docs')).status, 404);
  t.equal((await gateway.api('DELETE', '/toolsets/docs')).status, 404);

  const audit = (await gateway.api('GET', '/audit?limit=100')).body.entries.map((entry: { event_type: string; payload: { toolset?: string } }) => `${entry.event_type}:${entry.payload.toolset}`);
  for (const entry of ['toolset_added:docs', 'toolset_updated:docs', 'toolset_removed:docs']) t.ok(audit.includes(entry), `audited: ${entry}`);
  await waitFor('admin events', () => events.filter((event) => event.type === 'toolset').length >= 4);
  t.same(
    events.filter((event) => event.type === 'toolset').map((event) => event.type === 'toolset' && `${event.action}:${event.toolset}`),
    ['added:docs', 'updated:docs', 'updated:docs', 'removed:docs'],
  );
});

t.test('changes to one toolset sent at the same moment are all kept: none is written over a copy the other changed', async (t) => {
  const gateway = await withServers();
  const changes = await Promise.all([
    gateway.api('PATCH', '/toolsets/ta', { description: 'described' }),
    gateway.api('PATCH', '/toolsets/ta', { mode: 'search' }),
    gateway.api('PATCH', '/toolsets/ta', { servers: [{ server: 'b' }] }),
  ]);
  t.same(changes.map((answer) => answer.status), [200, 200, 200]);
  t.match((await gateway.api('GET', '/toolsets/ta')).body, { description: 'described', mode: 'search', servers: [{ server: 'b' }] }, 'every acknowledged change is there');
});

t.test('a toolset small enough for one page is answered in one page', async (t) => {
  const gateway = await withServers({ pageSize: 4 });
  const whole = await gateway.client('whole');
  const first = await whole.listTools();
  t.equal(first.tools.length, 4);
  t.ok(first.nextCursor, 'the whole surface takes several pages');
  const inSet = await gateway.client('ta', {}, undefined, '/mcp/ta');
  const page = await inSet.listTools();
  t.equal(page.tools.length, 3);
  t.equal(page.nextCursor, undefined, 'the toolset fits one page');
});

t.test('2026-07-28 callers are held to the toolset of their endpoint and of their credential, as 2025 sessions are', async (t) => {
  const gateway = await withServers();
  const modernNames = async (client: Awaited<ReturnType<typeof modernClient>>) => (await client.listTools()).tools.map((tool) => tool.name).sort();
  const onEndpoint = await modernClient(gateway, 'pin', { path: '/mcp/ta' });
  t.teardown(() => onEndpoint.close());
  t.same(await modernNames(onEndpoint), ['a__echo', 'a__mutate', 'a__stats'], '/mcp/ta lists only its set');
  await t.rejects(onEndpoint.callTool({ name: 'b__echo', arguments: {} }), { code: -32015, data: { code: 'NOT_IN_TOOLSET', toolset: 'ta' } }, 'outside the set: refused');
  const added = await gateway.api('POST', '/clients', { name: 'modern-bound', toolset: 'ta' });
  const bound = await modernClient(gateway, 'pin', { token: added.body.token as string });
  t.teardown(() => bound.close());
  t.same(await modernNames(bound), ['a__echo', 'a__mutate', 'a__stats'], 'a bound credential sees only its set on /mcp');
  await t.rejects(bound.callTool({ name: 'a__whoami', arguments: {} }), { code: -32015, data: { code: 'NOT_IN_TOOLSET' } });
});

t.test("a client's 2026-07-28 listens end when it is rebound or revoked, as its 2025 sessions do", async (t) => {
  const gateway = await withServers();
  const changes = { rebound: () => gateway.api('PATCH', '/clients/rebound', { toolset: 'tb' }), revoked: () => gateway.api('DELETE', '/clients/revoked') };
  for (const [name, change] of Object.entries(changes)) {
    const added = await gateway.api('POST', '/clients', { name, toolset: 'ta' });
    const client = await modernClient(gateway, 'pin', { token: added.body.token as string });
    t.teardown(() => client.close());
    const subscription = await client.listen({ toolsListChanged: true });
    const other = await modernClient(gateway, 'pin', { path: '/mcp/ta' });
    t.teardown(() => other.close());
    const kept = await other.listen({ toolsListChanged: true });
    await change();
    const ended = await Promise.race([subscription.closed, new Promise((resolve) => setTimeout(() => resolve('open'), 5_000))]);
    t.not(ended, 'open', `${name}: the listen opened on the old view ends`);
    t.equal(await Promise.race([kept.closed, new Promise((resolve) => setTimeout(() => resolve('open'), 300))]), 'open', "another credential's listen of the same toolset stays");
  }
});

t.test("an upstream's own log messages reach only the sessions whose toolset has that server", async (t) => {
  const gateway = await withServers();
  const dir = tempHome('coffer-fault-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const fault = faultSwitch(dir);
  await gateway.addServer(stdioFixture('loud', fault.args));
  const heard = { ta: 0, whole: 0 };
  for (const [key, path] of [['ta', '/mcp/ta'], ['whole', '/mcp']] as const) {
    const client = await gateway.client(key, {}, undefined, path);
    client.setNotificationHandler(LoggingMessageNotificationSchema, (note) => void (String(note.params.data).startsWith('flood') && heard[key]++));
    await client.setLoggingLevel('info');
  }
  await fault.set({ fault: 'flood' });
  await waitFor('log messages of loud on /mcp', () => heard.whole > 0, 10_000);
  await fault.set({});
  t.equal(heard.ta, 0, 'a session of ta, which has no rule for loud, hears none of its log');
});

t.test("a toolset's clients get the instructions of the servers in their set only, in both eras", async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  await gateway.addServer(stdioFixture('a', ['--instructions', 'A-HINT']));
  await gateway.addServer(stdioFixture('b', ['--instructions', 'B-HINT']));
  t.equal((await gateway.api('POST', '/toolsets', TA)).status, 201);
  t.match((await gateway.client('whole')).getInstructions(), /A-HINT[^]*B-HINT/, '/mcp gets every server\'s');
  const legacy = (await gateway.client('ta', {}, undefined, '/mcp/ta')).getInstructions() ?? '';
  t.ok(legacy.includes('A-HINT') && !legacy.includes('B-HINT') && !legacy.includes('## b'), `2025: only a's (${legacy})`);
  const modern = await modernClient(gateway, 'pin', { path: '/mcp/ta' });
  t.teardown(() => modern.close());
  const discovered = modern.getInstructions() ?? '';
  t.ok(discovered.includes('A-HINT') && !discovered.includes('B-HINT'), `2026-07-28: only a's (${discovered})`);
});

t.test("a refusal to a toolset's client names no server outside its set", async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  for (const name of ['inside', 'hidden']) await gateway.addServer({ ...stdioFixture(name), namespace: '' });
  t.equal((await gateway.api('POST', '/toolsets', { name: 'tu', servers: [{ server: 'inside' }] })).status, 201);
  const client = await gateway.client('tu', {}, undefined, '/mcp/tu');
  const { data } = await refusal(client.callTool({ name: 'no_such_tool', arguments: {} }));
  t.equal(data.code, 'RESOURCE_NOT_FOUND');
  const error = await client.callTool({ name: 'no_such_tool', arguments: {} }).catch((caught: Error) => caught.message);
  t.notMatch(String(error), /hidden/, `the message names only servers of the set (${String(error)})`);
  await gateway.addServer(stdioFixture('off'));
  t.equal((await gateway.api('POST', '/servers/off/disable')).status, 200);
  t.match(await refusal(client.callTool({ name: 'off__echo', arguments: {} })), { code: -32015, data: { code: 'NOT_IN_TOOLSET', toolset: 'tu' } }, 'a switched-off server outside the set is refused as outside it, not as disabled');
});

t.test('unit: a session that closes while its list is being gathered is not remembered once the list comes', async (t) => {
  const routes = new Map<string, Namespaced>([['a__echo', { server: 'a', original: 'echo' }], ['a__getenv', { server: 'a', original: 'getenv' }]]);
  let items = [{ name: 'a__echo' }];
  let gathered: () => void = () => undefined;
  let slow = false;
  const router = {
    // A slow upstream's list (up to its deadline) while `slow`.
    list: () => (slow ? new Promise<typeof items>((resolve) => (gathered = () => resolve(items))) : Promise.resolve(items)),
    routesOf: () => routes,
    partOf: () => undefined,
  } as unknown as ConstructorParameters<typeof ViewLists>[0];
  const view = new ToolsetView({ name: 'ta', description: '', servers: [{ server: 'a' }] });
  const views = new ViewLists(router, (name) => (name === null ? null : view));
  const open: ViewSession = { toolset: 'ta' };
  const closed: ViewSession = { toolset: 'ta' };
  await views.list('tools', open);

  slow = true;
  const listing = views.list('tools', closed);
  // The client ends its session (or the daemon evicts it) before the list is gathered.
  views.forget(closed);
  gathered();
  t.same(await listing, items, 'the list is still answered');
  slow = false;

  items = [{ name: 'a__echo' }, { name: 'a__getenv' }];
  const stale = await views.stale(['tools']);
  t.ok(stale.has(open), 'an open session whose list changed is stale');
  t.notOk(stale.has(closed), 'a closed one is not held, nor told: it was forgotten');
});

t.test('what a toolset holds now: its part of the live lists after the switches, a server left out named; 404 for an unknown toolset', async (t) => {
  const gateway = await withServers();
  await gateway.addServer(stdioFixture('stuck', ['--hang'], { list_deadline_ms: 400 }));
  const spec = { name: 'tc', servers: [{ server: 'a', include: ['tool:echo', 'tool:stats', 'prompt:*'] }, { server: 'stuck' }] };
  t.equal((await gateway.api('POST', '/toolsets', spec)).status, 201);
  const holds = async () => {
    const answer = await gateway.api('GET', '/toolsets/tc/holds');
    t.equal(answer.status, 200);
    t.equal(answer.body.toolset, 'tc');
    return answer.body.holds;
  };
  const before = await holds();
  t.same(before, { tools: ['a__echo', 'a__stats'], prompts: ['a__greet'], resources: [], resource_templates: [], left_out: ['stuck'] }, "the set's tools and prompts, as its clients see them; the hung server named, not guessed");
  const client = await gateway.client('tc', {}, undefined, '/mcp/tc');
  t.same(await names(client), before.tools, 'what a client of the set lists');

  t.equal((await gateway.api('POST', '/servers/a/capabilities/tool/disable', { key: 'stats' })).status, 200);
  t.same((await holds()).tools, ['a__echo'], 'a tool switched off is not held');
  const unknown = await gateway.api('GET', '/toolsets/nope/holds');
  t.equal(unknown.status, 404);
  t.equal(unknown.body.error.code, 'RESOURCE_NOT_FOUND');
});

t.test('unit: a list narrowed to a set is weighed by the routes it was merged with, though another merge came in the same turn', async (t) => {
  // Two unprefixed servers: `x` passes from u1 (outside the set) to u2 (in it) between two lists of them.
  const { router, held } = heldLists(['u1', 'u2']);
  const view = new ToolsetView({ name: 'only-u2', description: '', servers: [{ server: 'u2' }] });
  const views = new ViewLists(router, (name) => (name === null ? null : view));
  const x = (server: string) => ({ name: 'x', description: `${server}'s x`, inputSchema: { type: 'object' } });
  const answers: Record<string, ListAnswer[]> = {
    u1: [{ ok: true, state: 'live', items: [x('u1')], version: 1, fetchedAt: Date.now() }, { ok: true, state: 'live', items: [], version: 2, fetchedAt: Date.now() }],
    u2: [{ ok: true, state: 'live', items: [], version: 1, fetchedAt: Date.now() }, { ok: true, state: 'live', items: [x('u2')], version: 2, fetchedAt: Date.now() }],
  };

  const listed = views.list('tools', { toolset: 'only-u2' });
  // Another session lists after both servers changed; both lists are answered in one turn.
  const whole = router.list('tools');
  t.equal(held.length, 4, 'each list asked both servers');
  for (const { server, answer } of held) answer(answers[server]!.shift()!);
  t.same((await whole).map((item) => item.description), ["u2's x"], 'the later list has u2\'s x');
  t.same(await listed, [], "the set's list, merged when x was u1's, does not show u1's x as u2's");
});

t.test('unit: a session of a set whose first list is gathered across a change is told once that list is in, if it is not what is there now', async (t) => {
  const routes = new Map<string, Namespaced>([['a__echo', { server: 'a', original: 'echo' }], ['a__getenv', { server: 'a', original: 'getenv' }]]);
  const before = [{ name: 'a__echo' }];
  const now = [{ name: 'a__echo' }, { name: 'a__getenv' }];
  let gathered: () => void = () => undefined;
  let lists = 0;
  const router = {
    // The session's own list waits for a slow upstream, which answers what it had before it changed; later lists have the change.
    list: () => (++lists === 1 ? new Promise<typeof before>((resolve) => (gathered = () => resolve(before))) : Promise.resolve(now)),
    routesOf: () => routes,
    partOf: () => undefined,
  } as unknown as ConstructorParameters<typeof ViewLists>[0];
  const view = new ToolsetView({ name: 'ta', description: '', servers: [{ server: 'a' }] });
  const told: ViewSession[][] = [];
  const candidates: ViewSession[] = [];
  const views: ViewLists = new ViewLists(router, (name) => (name === null ? null : view), (kind) => notifier.listedAcrossChange(kind));
  const notifier = new ViewNotifier(views, (_notification, to) => void told.push(candidates.filter((session) => to?.(session) ?? true)), new Logger(null, 'error'));
  const session: ViewSession = { toolset: 'ta' };
  candidates.push(session);

  const listing = views.list('tools', session);
  notifier.broadcast({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
  await new Promise((resolve) => setImmediate(resolve));
  t.same(told, [[]], 'while its first list is out, the session has nothing to be measured by');
  gathered();
  t.same(await listing, before, 'its list is what the upstream answered');
  await new Promise((resolve) => setImmediate(resolve));
  t.same(told, [[], [session]], 'it is told that list is no longer what is there');
  t.same(await views.list('tools', session), now);
  await new Promise((resolve) => setImmediate(resolve));
  t.equal(told.length, 2, 'a list gathered after the change tells nothing more');
});
