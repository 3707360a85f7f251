// What tools/list holds in search mode besides the meta-tools, through a
// running daemon, real upstreams and real clients of both eras: the tools the
// user pinned (per toolset, and for /mcp) — never one the switches or the set
// hide — and, for a 2025-era session only, the tools it added itself with
// coffer__add_tools, announced by list_changed to that session alone, at most 200 in all.
// The races between a request's list and a newer merge, with the router's real merges and fake upstreams.
import t from 'tap';
import { McpError, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { faultSwitch, stdioFixture } from './fixtures/fixture-servers.js';
import { gatewayWith, startGateway, tempHome, type Gateway } from './helpers/gateway.js';
import { modernClient } from './helpers/modern.js';
import { sleep, waitFor } from './helpers/wait.js';
import type { ListAnswer } from '../src/upstreams/upstream.js';
import { heldLists } from './helpers/held-lists.js';
import { SearchMode } from '../src/search/search-mode.js';
import { ToolsetView } from '../src/toolsets/view.js';
import { ViewLists } from '../src/toolsets/view-lists.js';

const META = ['coffer__call_tool', 'coffer__search_tools'];
const SESSION_META = ['coffer__add_tools', ...META];

const withServers = (options: Parameters<typeof startGateway>[0] = {}): Promise<Gateway> => gatewayWith(t, [stdioFixture('a'), stdioFixture('b')], options);

/** The v1 and v2 clients alike. */
const names = async (client: { listTools(): Promise<{ tools: Array<{ name: string }> }> }): Promise<string[]> => (await client.listTools()).tools.map((tool) => tool.name).sort();

const toggle = (gateway: Gateway, server: string, key: string, on: boolean) => gateway.api('POST', `/servers/${server}/capabilities/tool/${on ? 'enable' : 'disable'}`, { key });

async function refusal(call: Promise<unknown>): Promise<{ code: number; message: string }> {
  const error = await call.then(
    () => null,
    (caught: unknown) => caught,
  );
  if (!(error instanceof McpError) && !(error instanceof Error && 'code' in error)) throw new Error(`expected an MCP error, got ${String(error)}`);
  return { code: (error as { code: number }).code, message: (error as Error).message };
}

t.test('a toolset in search mode lists its pinned tools beside the meta-tools, never one the switches or the set hide', async (t) => {
  const gateway = await withServers();
  const outside = await gateway.api('POST', '/toolsets', { name: 'pinset', mode: 'search', servers: [{ server: 'a', exclude: ['tool:whoami'] }], pinned: ['b/tool:echo'] });
  t.equal(outside.status, 422, 'a pin naming a server outside the set is refused');
  t.match(JSON.stringify(outside.body), /pinned\[0\].*not in the set/);
  t.equal((await gateway.api('POST', '/toolsets', { name: 'pinset', mode: 'search', servers: [{ server: 'a' }], pinned: ['a/echo'] })).status, 422, 'a malformed pin is refused');

  const created = await gateway.api('POST', '/toolsets', { name: 'pinset', mode: 'search', servers: [{ server: 'a', exclude: ['tool:whoami'] }, { server: 'b' }], pinned: ['a/tool:echo', 'a/tool:who*', 'b/tool:get*'] });
  t.equal(created.status, 201);
  t.same(created.body.pinned, ['a/tool:echo', 'a/tool:who*', 'b/tool:get*'], 'the pins are kept');
  const legacy = await gateway.client('pinned', {}, undefined, '/mcp/pinset');
  t.same(await names(legacy), [...SESSION_META, 'a__echo', 'b__getenv'].sort(), 'meta-tools and the pinned tools; a__whoami is pinned but outside the set');
  t.match(JSON.stringify((await legacy.callTool({ name: 'a__echo', arguments: { pinned: 'yes' } })).content), /pinned/, 'a pinned tool is called directly');

  const modern = await modernClient(gateway, 'pin', { path: '/mcp/pinset' });
  t.teardown(() => modern.close());
  t.same(await names(modern), [...META, 'a__echo', 'b__getenv'].sort(), '2026-07-28: the same pins, no coffer__add_tools');

  await toggle(gateway, 'a', 'echo', false);
  t.same(await names(legacy), [...SESSION_META, 'b__getenv'].sort(), 'a switched-off pinned tool is not listed');
  t.same(await names(modern), [...META, 'b__getenv'].sort(), '2026-07-28 too');
  await toggle(gateway, 'a', 'echo', true);

  const patched = await gateway.api('PATCH', '/toolsets/pinset', { description: 'kept pins' });
  t.same(patched.body.pinned, created.body.pinned, 'an update that does not name the pins keeps them');
  t.equal((await gateway.api('PATCH', '/toolsets/pinset', { pinned: [] })).status, 200);
  t.same(await names(legacy), SESSION_META, 'pins cleared: the meta-tools only');
});

t.test('COFFER_PINNED_TOOLS (pinnedTools) pins tools on /mcp in search mode', async (t) => {
  const gateway = await withServers({ toolsMode: 'search', pinnedTools: ['a/tool:getenv', 'nope/tool:*'] });
  t.same(await names(await gateway.client('default-pins')), [...SESSION_META, 'a__getenv'].sort(), 'the pinned tool beside the meta-tools; a pin of no server shows nothing');
  await toggle(gateway, 'a', 'getenv', false);
  t.same(await names(await gateway.client('default-pins-2')), SESSION_META, 'disabled: not listed');
});

t.test('a 2025-era session adds found tools to its own list: list_changed reaches it alone; the 2026-07-28 era has no coffer__add_tools', async (t) => {
  const gateway = await withServers({ toolsMode: 'search' });
  const adder = await gateway.client('adder');
  const other = await gateway.client('other');
  const heard = { adder: 0, other: 0 };
  for (const [key, client] of [['adder', adder], ['other', other]] as const) {
    t.same(await names(client), SESSION_META);
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => void heard[key]++);
  }

  const answer = await adder.callTool({ name: 'coffer__add_tools', arguments: { names: ['b__echo', 'a__getenv'] } });
  t.match(JSON.stringify(answer.content), /Added to your tools\/list: b__echo, a__getenv/);
  await waitFor('list_changed on the adding session', () => heard.adder >= 1, 30_000);
  t.same(await names(adder), [...SESSION_META, 'a__getenv', 'b__echo'].sort(), 'its list holds the added tools');
  t.same(await names(other), SESSION_META, "another session's list is unchanged");
  t.match(JSON.stringify((await adder.callTool({ name: 'b__echo', arguments: { direct: 1 } })).content), /direct/, 'an added tool is called directly');

  const again = await adder.callTool({ name: 'coffer__add_tools', arguments: { names: ['b__echo'] } });
  t.match(JSON.stringify(again.content), /nothing changed/, 'adding it again changes nothing');
  t.match(await refusal(adder.callTool({ name: 'coffer__add_tools', arguments: { names: ['b__nope'] } })), { code: -32602, message: /b__nope/ }, 'an unknown name: invalid params');
  t.match(await refusal(adder.callTool({ name: 'coffer__add_tools', arguments: {} })), { code: -32602 }, 'no names: invalid params');

  // A switch is announced to both sessions, on the same stream as a stray one to `other` would have been (and after it).
  await toggle(gateway, 'b', 'echo', false);
  await waitFor('the switch heard by both', () => heard.adder >= 2 && heard.other >= 1, 30_000);
  t.equal(heard.other, 1, 'the other session heard only the switch, never the add');
  t.same(await names(adder), [...SESSION_META, 'a__getenv'].sort(), 'an added tool switched off leaves the list');
  await toggle(gateway, 'a', 'whoami', false);
  t.match(await refusal(adder.callTool({ name: 'coffer__add_tools', arguments: { names: ['a__whoami'] } })), { code: -32602 }, 'a disabled tool cannot be added');

  const modern = await modernClient(gateway);
  t.teardown(() => modern.close());
  t.same(await names(modern), META, '2026-07-28: no coffer__add_tools, and none of the session’s tools');
  const call = await modern.callTool({ name: 'coffer__add_tools', arguments: { names: ['a__getenv'] } }).then(
    (result) => JSON.stringify(result),
    (error: unknown) => String(error),
  );
  t.match(call, /coffer__add_tools|unknown|not found|-32602/i, '2026-07-28: coffer__add_tools is not a tool there');
  t.same(await names(modern), META, 'and its list never varies');
});

t.test('in a toolset, a session adds only tools of its set', async (t) => {
  const gateway = await withServers();
  t.equal((await gateway.api('POST', '/toolsets', { name: 'only-a', mode: 'search', servers: [{ server: 'a' }] })).status, 201);
  const client = await gateway.client('in-set', {}, undefined, '/mcp/only-a');
  t.match(await refusal(client.callTool({ name: 'coffer__add_tools', arguments: { names: ['b__echo'] } })), { code: -32602, message: /b__echo/ }, 'a tool outside the set: invalid params');
  await client.callTool({ name: 'coffer__add_tools', arguments: { names: ['a__echo'] } });
  t.same(await names(client), [...SESSION_META, 'a__echo'].sort());
});

t.test("a session's added tool is that tool, whatever it is named: a new prefix keeps it listed, and another tool given its old name is not listed", async (t) => {
  const gateway = await withServers({ toolsMode: 'search' });
  const adder = await gateway.client('adder-renamed');
  await adder.callTool({ name: 'coffer__add_tools', arguments: { names: ['a__echo'] } });
  t.same(await names(adder), [...SESSION_META, 'a__echo'].sort());

  t.equal((await gateway.api('PATCH', '/servers/a', { namespace: 'z' })).status, 200);
  t.equal((await gateway.api('PATCH', '/servers/b', { namespace: 'a' })).status, 200);
  const searcher = await gateway.client('renamed-search');
  t.match(JSON.stringify((await searcher.callTool({ name: 'coffer__call_tool', arguments: { name: 'a__whoami', arguments: {} } })).content), /\\"name\\":\\"b\\"/, 'a__echo is now b\'s');
  t.same(await names(adder), [...SESSION_META, 'z__echo'].sort(), "the added tool under its new name; b's echo, now a__echo, was never added");
});

t.test('a session adds at most 200 tools in all: a call that would pass the cap adds none and says so; tools added already never count again', async (t) => {
  const control = faultSwitch(tempHome('coffer-many-'), { fault: 'big', list: true, mb: 1 / 1_024, items: 260 });
  const gateway = await gatewayWith(t, [stdioFixture('many', [...control.args, '--tools', 'echo'])], { toolsMode: 'search' });
  const adder = await gateway.client('adder-capped');
  const batch = (from: number, count: number): string[] => Array.from({ length: count }, (_unused, i) => (from + i === 0 ? 'many__big' : `many__big${from + i}`));
  const add = (names: string[]) => adder.callTool({ name: 'coffer__add_tools', arguments: { names } });
  for (let from = 0; from < 190; from += 50) await add(batch(from, Math.min(50, 190 - from)));
  t.equal((await names(adder)).length, SESSION_META.length + 190, '190 tools added in four calls');

  const over = await refusal(add(batch(180, 30)));
  t.match(over, { code: -32602, message: /190 tools added.*200.*coffer__call_tool/ }, 'ten added already and twenty new would pass 200: invalid params, saying how many, the cap and what to do instead');
  t.equal((await names(adder)).length, SESSION_META.length + 190, 'and none of them was added');

  t.match(JSON.stringify((await add(batch(180, 20))).content), /Added to your tools\/list: many__big190,/, 'ten added already and ten new reach the cap exactly');
  t.match(JSON.stringify((await add(batch(0, 50))).content), /nothing changed/, 'at the cap, tools added already can be added again');
  t.match(await refusal(add(['many__big200'])), { code: -32602, message: /200/ }, 'one more is refused');
  t.equal((await names(adder)).length, SESSION_META.length + 200, 'the list holds 200 added tools');
  t.match(JSON.stringify((await adder.callTool({ name: 'coffer__call_tool', arguments: { name: 'many__big200', arguments: {} } })).content), /xxx/, 'coffer__call_tool still calls a tool past the cap');
  const description = (await adder.listTools()).tools.find((tool) => tool.name === 'coffer__add_tools')!.description;
  t.match(description, /200/, "coffer__add_tools's description tells the cap");
});

t.test("a toolset's sessions and listens hear list_changed when its pins or its mode change what their tools/list holds", async (t) => {
  const gateway = await withServers();
  t.equal((await gateway.api('POST', '/toolsets', { name: 'repin', mode: 'search', servers: [{ server: 'a' }], pinned: ['a/tool:echo'] })).status, 201);
  const legacy = await gateway.client('repinned', {}, undefined, '/mcp/repin');
  const modern = await modernClient(gateway, 'pin', { path: '/mcp/repin' });
  t.teardown(() => modern.close());
  const heard = { legacy: 0, modern: 0 };
  t.same(await names(legacy), [...SESSION_META, 'a__echo'].sort());
  legacy.setNotificationHandler(ToolListChangedNotificationSchema, () => void heard.legacy++);
  modern.setNotificationHandler('notifications/tools/list_changed', () => void heard.modern++);
  await modern.listen({ toolsListChanged: true });

  t.equal((await gateway.api('PATCH', '/toolsets/repin', { pinned: ['a/tool:getenv'] })).status, 200);
  await waitFor('the new pins heard by the session and the listen', () => heard.legacy >= 1 && heard.modern >= 1, 10_000);
  t.same(await names(legacy), [...SESSION_META, 'a__getenv'].sort(), 'the list the session was told of');

  t.equal((await gateway.api('PATCH', '/toolsets/repin', { mode: 'full' })).status, 200);
  await waitFor('the new mode heard by the session and the listen', () => heard.legacy >= 2 && heard.modern >= 2, 10_000);
  t.ok((await names(legacy)).includes('a__whoami'), 'every tool of the set, listed in full mode');
});

t.test("a search is not a tools/list: a toolset session whose list changed unannounced is still told at the next comparison, though it searched meanwhile", async (t) => {
  const control = faultSwitch(tempHome('coffer-silent-'), { tools: 'echo,getenv,whoami' });
  const gateway = await gatewayWith(t, [stdioFixture('a', control.args), stdioFixture('b')], { tuning: { cacheTtlMs: 300 } });
  t.equal((await gateway.api('POST', '/toolsets', { name: 'silent', mode: 'search', servers: [{ server: 'a' }], pinned: ['a/tool:echo'] })).status, 201);
  const client = await gateway.client('silent', {}, undefined, '/mcp/silent');
  t.same(await names(client), [...SESSION_META, 'a__echo'].sort());
  let heard = 0;
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => void heard++);

  // The upstream drops its pinned tool without a list_changed: coffer learns of it when the list's copy expires.
  await control.set({ tools: 'getenv,whoami' });
  await waitFor('the copy expired and a search listed anew', async () => {
    await client.callTool({ name: 'coffer__search_tools', arguments: { query: 'echo' } });
    return (await gateway.client('whole')).listTools().then((page) => !page.tools.some((tool) => tool.name === 'a__echo'));
  }, 10_000, 200);
  t.equal(heard, 0, 'nothing announced yet');
  // The next change anywhere makes coffer compare what each toolset session last got.
  await toggle(gateway, 'b', 'echo', false);
  await waitFor('list_changed on the session whose pinned tool went', () => heard >= 1, 10_000);
  t.same(await names(client), SESSION_META, 'its list lost the pinned tool');
});

t.test("unit: a tools/list and coffer__add_tools read pins and added tools by the routes of the list they were given, though another merge came since", async (t) => {
  // `x` passes from u1 to u2 (two unprefixed servers) between two lists of them; the request's list is the older one.
  const servers = ['u1', 'u2'];
  const { router, held } = heldLists(servers);
  const view = new ToolsetView({ name: 'pins-u1', description: '', mode: 'search', servers: [{ server: 'u1' }, { server: 'u2' }], pinned: ['u1/tool:x'] });
  const views = new ViewLists(router, (name) => (name === null ? null : view));
  const search = new SearchMode(router, 'search', ['u1/tool:x'], { warn: () => undefined });
  const x = (server: string) => ({ name: 'x', description: `${server}'s x`, inputSchema: { type: 'object' } });
  const was: Record<string, ListAnswer> = {
    u1: { ok: true, state: 'live', items: [x('u1')], version: 1, fetchedAt: Date.now() },
    u2: { ok: true, state: 'live', items: [], version: 1, fetchedAt: Date.now() },
  };
  const is: Record<string, ListAnswer> = {
    u1: { ok: true, state: 'live', items: [], version: 2, fetchedAt: Date.now() },
    u2: { ok: true, state: 'live', items: [x('u2')], version: 2, fetchedAt: Date.now() },
  };
  /** Answers the lists asked so far, all in one turn: the last one after x passed to u2, the others before. */
  const answerAll = (): void => {
    const asked = held.splice(0);
    asked.forEach(({ server, answer }, at) => answer((at < asked.length - servers.length ? was : is)[server]!));
  };
  /** What a tools/list shows beside the meta-tools, with whose tool each is. */
  const shown = (items: Array<Record<string, unknown>>) => items.filter((item) => !SESSION_META.includes(item.name as string)).map((item) => `${item.name}: ${item.description}`);

  // Requests whose lists were gathered before x passed to u2; a merge made since is the router's latest.
  const whole = views.listFor('tools', null);
  const narrowed = views.list('tools', { toolset: 'pins-u1' });
  const later = router.list('tools');
  answerAll();
  t.same((await later).map((item) => item.description), ["u2's x"], "the latest list has u2's x");
  const before = await whole;
  t.same(shown(search.list(null, before)), ["x: u1's x"], "/mcp: u1's x, pinned, is listed beside the meta-tools");
  t.same(shown(search.list(view, await narrowed)), ["x: u1's x"], 'a toolset: the same');

  // A session adds x from the list it was given, where x is u1's: u1's x is added, not u2's.
  const session = { key: {}, listChanged: () => undefined };
  const unpinned = new SearchMode(router, 'search', [], { warn: () => undefined });
  await unpinned.call({ name: 'coffer__add_tools', arguments: { names: ['x'] } }, async () => before, () => Promise.reject(new Error('not used')), session);
  t.same(shown(unpinned.list(null, await later, session)), [], "u2's x, now named x, was never added");
  t.same(shown(unpinned.list(null, before, session)), ["x: u1's x"], "u1's x was");
});

t.test("a toolset's tools/list gathered while its pins changed answers with the pins of the view it was narrowed with, not those of the view when it came", async (t) => {
  // h's list hangs: a list waits for it up to its deadline, the window in which the set's pins change.
  const hung = faultSwitch(tempHome('coffer-hung-'));
  const gateway = await gatewayWith(t, [stdioFixture('a'), stdioFixture('h', hung.args, { list_deadline_ms: 3_000 })], { tuning: { cacheTtlMs: 300 } });
  t.equal((await gateway.api('POST', '/toolsets', { name: 'across', mode: 'search', servers: [{ server: 'a' }, { server: 'h' }], pinned: ['a/tool:echo'] })).status, 201, 'the set is made');
  const client = await gateway.client('across', {}, undefined, '/mcp/across');
  await hung.set({ fault: 'hang' });
  // Once h's list copy has expired, a list asks h again.
  await sleep(600);

  const listing = names(client);
  await sleep(500);
  t.equal((await gateway.api('PATCH', '/toolsets/across', { pinned: ['a/tool:getenv'] })).status, 200, 'its pins change while the list waits for h');
  t.same(await listing, [...SESSION_META, 'a__getenv'].sort(), 'the pins of the set its list was narrowed by');
});
