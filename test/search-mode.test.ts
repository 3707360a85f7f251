// Search mode through a running daemon, real upstreams and real clients of
// both eras: the list is the meta-tools (coffer__add_tools for 2025-era sessions only); a search finds live tools by what
// they do, only among those its caller may see (switches, toolset); a call
// through coffer__call_tool is gated and logged as the real tool.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { faultSwitch, stdioFixture } from './fixtures/fixture-servers.js';
import { gatewayWith, startGateway, tempHome, waitFor, type Gateway } from './helpers/gateway.js';
import { modernClient } from './helpers/modern.js';
import { SearchMode } from '../src/search/search-mode.js';

const SEARCH = 'coffer__search_tools';
const CALL = 'coffer__call_tool';
const ADD = 'coffer__add_tools';

const withServers = (options: Parameters<typeof startGateway>[0] = {}): Promise<Gateway> => gatewayWith(t, [stdioFixture('a'), stdioFixture('b')], options);

/** The v1 and v2 clients alike: only callTool({name, arguments}) is used. */
interface Caller {
  callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<unknown>;
}

async function found(client: Caller, query: string, limit?: number): Promise<string[]> {
  const answer = await client.callTool({ name: SEARCH, arguments: { query, ...(limit === undefined ? {} : { limit }) } });
  const text = (answer as { content: Array<{ type: string; text: string }> }).content[0]!.text;
  return text.startsWith('{') ? (JSON.parse(text) as { tools: Array<{ name: string }> }).tools.map((tool) => tool.name) : [];
}

async function refusal(call: Promise<unknown>): Promise<{ code: number; data: any }> {
  const error = await call.then(
    () => null,
    (caught: unknown) => caught,
  );
  if (!(error instanceof McpError) && !(error instanceof Error && 'code' in error)) throw new Error(`expected an MCP error, got ${String(error)}`);
  return { code: (error as { code: number }).code, data: (error as { data?: unknown }).data };
}

t.test('a toolset in search mode lists the two meta-tools; a search finds only what its caller may see; a call is gated and logged as the real tool', async (t) => {
  const gateway = await withServers();
  const created = await gateway.api('POST', '/toolsets', { name: 'finder', mode: 'search', servers: [{ server: 'a' }] });
  t.equal(created.status, 201);
  t.equal(created.body.toolset?.mode ?? created.body.mode, 'search', 'the mode is kept');
  const client = await gateway.client('searcher', {}, undefined, '/mcp/finder');
  t.same((await client.listTools()).tools.map((tool) => tool.name).sort(), [ADD, CALL, SEARCH], 'tools/list holds the meta-tools only');

  const echo = await found(client, 'return my arguments back');
  t.equal(echo[0], 'a__echo', `"return my arguments back" finds a__echo first (${echo.join(', ')})`);
  t.notOk((await found(client, 'echo', 50)).some((name) => name.startsWith('b__')), 'never a tool outside the toolset');

  await gateway.api('POST', '/servers/a/capabilities/tool/disable', { key: 'echo' });
  t.notOk((await found(client, 'returns its arguments', 50)).includes('a__echo'), 'never a switched-off tool');
  await gateway.api('POST', '/servers/a/capabilities/tool/enable', { key: 'echo' });

  const answer = await client.callTool({ name: CALL, arguments: { name: 'a__echo', arguments: { hello: 'world' } } });
  t.match(JSON.stringify(answer.content), /hello/, 'coffer__call_tool returns the real tool’s result');
  t.match(await refusal(client.callTool({ name: CALL, arguments: { name: 'b__echo', arguments: {} } })), { code: -32015, data: { code: 'NOT_IN_TOOLSET' } }, 'outside the set: refused');
  await gateway.api('POST', '/servers/a/capabilities/tool/disable', { key: 'whoami' });
  t.match(await refusal(client.callTool({ name: CALL, arguments: { name: 'a__whoami', arguments: {} } })), { data: { code: 'TOOL_DISABLED' } }, 'a switched-off tool: refused');
  t.match(await refusal(client.callTool({ name: CALL, arguments: {} })), { code: -32602 }, 'no name: invalid params');
  t.match(await refusal(client.callTool({ name: SEARCH, arguments: { query: 'x', limit: 500 } })), { code: -32602 }, 'a limit past the cap: invalid params');
  for (const limit of ['3', true, [3], 2.5]) {
    t.match(await refusal(client.callTool({ name: SEARCH, arguments: { query: 'echo', limit } })), { code: -32602 }, `a limit of ${JSON.stringify(limit)}, not an integer: invalid params`);
  }
  // A query's or a name's words are worked out on the main thread, and an unknown name is echoed: each is bounded, as a direct call's name is.
  t.equal((await found(client, `echo ${'x'.repeat(1_019)}`))[0], 'a__echo', 'a query of 1,024 characters is searched');
  t.match(await refusal(client.callTool({ name: SEARCH, arguments: { query: 'x'.repeat(1_025) } })), { code: -32602, data: { code: 'NAME_TOO_LONG', field: 'params.arguments.query', limit: 1_024 } }, 'a longer one is refused');
  t.match(await refusal(client.callTool({ name: CALL, arguments: { name: `a__${'x'.repeat(2_000)}`, arguments: {} } })), { data: { code: 'NAME_TOO_LONG', field: 'params.arguments.name' } }, 'a call_tool name past the bound of a direct call');
  t.match(await refusal(client.callTool({ name: ADD, arguments: { names: ['a__echo', 'x'.repeat(2_000)] } })), { data: { code: 'NAME_TOO_LONG', field: 'params.arguments.names[1]' } }, 'and an add_tools name');

  const { invocations } = (await gateway.api('GET', '/invocations?server=a')).body;
  t.ok(invocations.some((row: { key: string; status: string }) => row.key === 'echo' && row.status === 'ok'), 'the call is logged as a__echo itself');
  t.ok(invocations.some((row: { key: string; status: string }) => row.key === 'whoami' && row.status === 'denied'), 'the refused one too');
});

t.test('a tool added upstream is found at once (the index follows the live list); COFFER_TOOLS_MODE=search puts /mcp in search mode for both eras', async (t) => {
  const gateway = await withServers({ toolsMode: 'search' });
  const legacy = await gateway.client('legacy');
  t.same((await legacy.listTools()).tools.map((tool) => tool.name).sort(), [ADD, CALL, SEARCH]);
  t.ok((await found(legacy, 'read an environment variable')).slice(0, 2).some((name) => name.endsWith('__getenv')), 'getenv is found by what it does');
  await legacy.callTool({ name: CALL, arguments: { name: 'a__mutate', arguments: { kind: 'tools' } } });
  let added: string[] = [];
  for (let attempt = 0; attempt < 50 && added.length === 0; attempt++) {
    added = (await found(legacy, 'added', 50)).filter((name) => name.startsWith('a__') && !['a__echo', 'a__whoami', 'a__getenv', 'a__slow', 'a__crash', 'a__mutate', 'a__stats'].includes(name));
    if (added.length === 0) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  t.ok(added.length > 0, `the tool mutate added is found: ${added.join(', ')}`);

  const modern = await modernClient(gateway, 'pin');
  t.teardown(() => modern.close());
  t.same((await modern.listTools()).tools.map((tool) => tool.name).sort(), [CALL, SEARCH], '2026-07-28: the same list');
  t.ok((await found(modern, 'read an environment variable')).some((name) => name.endsWith('__getenv')), '2026-07-28: the same search');
  const called = await modern.callTool({ name: CALL, arguments: { name: 'b__echo', arguments: { via: 'modern' } } });
  t.match(JSON.stringify(called.content), /modern/, '2026-07-28: coffer__call_tool forwards');
});

t.test("a tool that takes a name another server's tool had is found under it: the index never drops one server's tool when it re-indexes the other", async (t) => {
  const gateway = await withServers({ toolsMode: 'search' });
  const client = await gateway.client('renames');
  t.same((await found(client, 'return my arguments back', 2)).sort(), ['a__echo', 'b__echo'], 'both echoes are found');
  // Server a comes first in a merged list: it takes b's names before b, re-indexed after it, lets go of them.
  t.equal((await gateway.api('PATCH', '/servers/b', { namespace: 'z' })).status, 200);
  t.equal((await gateway.api('PATCH', '/servers/a', { namespace: 'b' })).status, 200);
  t.match(JSON.stringify((await client.callTool({ name: CALL, arguments: { name: 'b__whoami', arguments: {} } })).content), /\\"name\\":\\"a\\"/, "b__echo is now a's");
  t.same((await found(client, 'return my arguments back', 2)).sort(), ['b__echo', 'z__echo'], "a's echo is found under b's old name, and b's under its new one");
});

/** What `run` answers, and the longest the test's thread (the daemon's, in process) went without running a timer meanwhile. */
async function longestStall<T>(run: () => Promise<T>): Promise<{ value: T; stallMs: number }> {
  let last = performance.now();
  let longest = 0;
  const tick = (): void => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  };
  const timer = setInterval(tick, 5);
  try {
    const value = await run();
    tick();
    return { value, stallMs: longest };
  } finally {
    clearInterval(timer);
  }
}

t.test("an upstream's huge descriptions or a thousand tools never stall the router's thread for long when a search indexes them", async (t) => {
  const control = faultSwitch(tempHome('coffer-wordy-'), { fault: 'big', list: true, prose: true, mb: 4 });
  const gateway = await gatewayWith(t, [stdioFixture('wordy', [...control.args, '--tools', 'echo'])]);
  t.equal((await gateway.api('POST', '/toolsets', { name: 'finder', mode: 'search', servers: [{ server: 'wordy' }] })).status, 201);
  const full = await gateway.client('full');
  const searcher = await gateway.client('searcher', {}, undefined, '/mcp/finder');
  const listed = async (name: string): Promise<boolean> => (await full.listTools()).tools.some((tool) => tool.name === name);
  t.ok(await listed('wordy__big'), 'the tool with a 4 MB description is listed');

  // The toolset's part of the list is worked out when its client lists: not the search's cost.
  await searcher.listTools();
  const one = await longestStall(() => found(searcher, 'big'));
  t.equal(one.value[0], 'wordy__big', 'it is found by its name');
  t.ok(one.stallMs < 500, `indexing its 4 MB description stalled the thread ${Math.round(one.stallMs)} ms`);
  t.same(await found(searcher, 'writex'), ['wordy__big'], 'and by a word of its description');

  await control.set({ fault: 'big', list: true, prose: true, mb: 12 / 1_024, items: 1_000 });
  t.equal((await gateway.api('POST', '/servers/wordy/refresh')).status, 200);
  await waitFor('the 1,000 tools listed', () => listed('wordy__big999'), 60_000, 200);
  await searcher.listTools();
  const many = await longestStall(() => found(searcher, 'big999'));
  t.equal(many.value[0], 'wordy__big999', 'one of 1,000 tools is found by its name');
  t.ok(many.stallMs < 500, `indexing 1,000 tools of 12 KB each stalled the thread ${Math.round(many.stallMs)} ms`);
});

/** The daemon log's records about `server`, as objects: the Logger writes them in order, through a stream. */
function logRecords(gateway: Gateway, server: string): Array<Record<string, unknown>> {
  const lines = readFileSync(join(gateway.home, 'logs', 'daemon.log'), 'utf8').split('\n').filter(Boolean);
  return lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((record) => record.upstream === server);
}

t.test("a server whose tools' text passes the 1 MiB indexed per server is told in the daemon log once per indexing, without its tools' text; a normal server, or one long tool, is not", async (t) => {
  const control = faultSwitch(tempHome('coffer-trimmed-'), { fault: 'big', list: true, prose: true, mb: 1 });
  const gateway = await gatewayWith(t, [stdioFixture('wordy', [...control.args, '--tools', 'echo']), stdioFixture('plain')], { toolsMode: 'search' });
  const searcher = await gateway.client('trimmed');
  const trimmed = (): Array<Record<string, unknown>> => logRecords(gateway, 'wordy').filter((record) => record.level === 'warn' && typeof record.tools_indexed_in_part === 'number');
  t.equal((await found(searcher, 'big'))[0], 'wordy__big', 'one tool with a 1 MB description: cut at 8,192 characters, which is not told');

  const relist = async (items: number): Promise<void> => {
    await control.set({ fault: 'big', list: true, prose: true, mb: 8 / 1_024, items });
    t.equal((await gateway.api('POST', '/servers/wordy/refresh')).status, 200, `relisted with ${items} long tools`);
    await waitFor(`the ${items} tools listed`, async () => (await found(searcher, `big${items - 1}`))[0] === `wordy__big${items - 1}`, 60_000, 200);
  };
  await relist(200);
  const first = await waitFor('the warning', () => trimmed()[0] ?? null, 10_000, 50);
  t.match(first, { level: 'warn', upstream: 'wordy', tools: 201 }, 'it names the server and how many tools it has');
  const partly = first.tools_indexed_in_part as number;
  t.ok(partly > 0 && partly < 200, `${partly} of its 201 tools (8 KB of text each) are indexed in part`);
  t.match(String(first.msg), /1 MiB.*listed.*callable/, 'and says why, and that they stay listed and callable');
  t.notMatch(JSON.stringify(first), /read|write|fetch|big\d/, "none of its tools' text or names");

  await found(searcher, 'big42');
  await relist(300);
  const second = await waitFor('the warning of the new list', () => trimmed()[1] ?? null, 10_000, 50);
  t.same(
    trimmed().map((record) => record.tools_indexed_in_part),
    [partly, partly + 100],
    'told once per indexing of its list: not per tool, not for a search that re-indexes nothing, not for the one long tool',
  );
  t.equal(second.tools, 301, 'the new list: 301 tools');
  t.same(logRecords(gateway, 'plain').filter((record) => 'tools_indexed_in_part' in record), [], 'a normal server: nothing told');
});

t.test("tools' titles count against the 1 MiB of text indexed per server: an upstream cannot put its prose in titles instead", async (t) => {
  const control = faultSwitch(tempHome('coffer-titled-'), { fault: 'big', list: true, prose: true, titled: true, mb: 8 / 1_024, items: 300 });
  const gateway = await gatewayWith(t, [stdioFixture('titled', [...control.args, '--tools', 'echo'])], { toolsMode: 'search' });
  const searcher = await gateway.client('titled');
  t.equal((await found(searcher, 'big299'))[0], 'titled__big299', 'a tool past the budget is found by its name');
  const told = await waitFor('the warning', () => logRecords(gateway, 'titled').find((record) => typeof record.tools_indexed_in_part === 'number') ?? null, 10_000, 50).catch(() => null);
  t.match(told, { level: 'warn', tools: 301 }, '300 titles of 8 KB each (2.4 MB) pass the budget, which is told');
  const partly = (told?.tools_indexed_in_part as number | undefined) ?? 0;
  t.ok(partly > 150 && partly <= 300, `${partly} of its tools are indexed in part`);
});

t.test('a search answer holds at most 8,192 characters of each description, however long the upstream wrote them', async (t) => {
  const control = faultSwitch(tempHome('coffer-long-'), { fault: 'big', list: true, mb: 2, items: 4 });
  const gateway = await gatewayWith(t, [stdioFixture('long', [...control.args, '--tools', 'echo'])], { toolsMode: 'search' });
  const client = await gateway.client('long-answers');
  const answer = await client.callTool({ name: SEARCH, arguments: { query: 'big', limit: 4 } });
  const text = (answer as { content: Array<{ text: string }> }).content[0]!.text;
  t.ok(text.length < 100_000, `the answer is ${text.length} characters long`);
  const tools = (JSON.parse(text) as { tools: Array<{ name: string; description: string }> }).tools;
  t.equal(tools.filter((tool) => tool.name.startsWith('long__big')).length, 4, 'the four 2 MB tools are found');
  t.match(tools.find((tool) => tool.name === 'long__big')!.description, /^x{8191,8192}… \[\d+ more chars\]$/, 'each description is cut, saying how much was left out');
});

t.test('unit: a search racing a rename answers what the names lead to now, not what they led to when it came', async (t) => {
  const echo = (description: string, name: string) => ({ name, description, inputSchema: { type: 'object' } });
  // b gives up its prefix to a (as in the test above) while the search is under way.
  const before = { items: [echo("b's echo", 'b__echo')], routes: new Map([['b__echo', { server: 'b', original: 'echo' }]]) };
  const after = {
    items: [echo("a's echo", 'b__echo'), echo("b's echo", 'z__echo')],
    routes: new Map([['b__echo', { server: 'a', original: 'echo' }], ['z__echo', { server: 'b', original: 'echo' }]]),
  };
  let current = before;
  const router = {
    list: async () => current.items,
    routesOf: (items: unknown) => (items === before.items ? before.routes : after.routes),
  } as unknown as ConstructorParameters<typeof SearchMode>[0];
  const search = new SearchMode(router, 'search', [], { warn: () => undefined });
  const visible = () => router.list('tools');
  const answer = search.call({ name: SEARCH, arguments: { query: 'echo', limit: 5 } }, visible, () => Promise.reject(new Error('not used')));
  current = after;
  const text = ((await answer).content as Array<{ text: string }>)[0]!.text;
  const tools = (JSON.parse(text) as { tools: Array<{ name: string; description: string }> }).tools.map(({ name, description }) => `${name}: ${description}`).sort();
  t.same(tools, ["b__echo: a's echo", "z__echo: b's echo"], 'each name with the tool it leads to now');
});

t.test("unit: a search never reads the index while another search re-indexes a server: the tools of the caller's list are all found", async (t) => {
  // Enough tools that re-indexing their server takes several slices of the thread.
  const tool = (at: number, words: string) => ({ name: `a__tool${at}`, description: `${words} number ${at}`, inputSchema: { type: 'object' } });
  const many = (words: string) => [...Array.from({ length: 3_000 }, (_unused, at) => tool(at, words)), { name: 'a__target', description: 'finds the needle', inputSchema: { type: 'object' } }];
  let items = many('some prose');
  const routes = () => new Map(items.map((item) => [item.name, { server: 'a', original: item.name.slice('a__'.length) }]));
  const router = { list: async () => items, routesOf: routes } as unknown as ConstructorParameters<typeof SearchMode>[0];
  const search = new SearchMode(router, 'search', [], { warn: () => undefined });
  const notUsed = () => Promise.reject(new Error('not used'));
  const needle = async (visible: () => Promise<readonly Record<string, unknown>[]>) => {
    const answer = await search.call({ name: SEARCH, arguments: { query: 'needle', limit: 1 } }, visible, notUsed);
    return (answer.content as Array<{ text: string }>)[0]!.text;
  };
  t.match(await needle(router.list.bind(router, 'tools')), /a__target/, 'found once indexed');

  // This search's index is up to date; its caller's list comes late.
  let give: (list: readonly Record<string, unknown>[]) => void = () => undefined;
  const late = needle(() => new Promise((resolve) => (give = resolve)));
  await new Promise((resolve) => setImmediate(resolve));
  // Server a's list changes (its tools are re-indexed, a__target last); another search brings the index up to it.
  items = many('other prose');
  const other = needle(router.list.bind(router, 'tools'));
  const index = (search as unknown as { index: { size: number } }).index;
  await waitFor('the re-indexing under way', () => index.size < items.length, 10_000, 0);
  give(items);
  t.match(await late, /a__target/, 'the late search finds the tool its list holds');
  t.match(await other, /a__target/, 'so does the other');
});

t.test('unit: every refusal of a meta-tool, however malformed or hostile its arguments, carries a stable code in data.code', async (t) => {
  const items = [{ name: 'a__echo', description: 'echoes', inputSchema: { type: 'object' } }];
  const router = { list: async () => items, routesOf: () => new Map([['a__echo', { server: 'a', original: 'echo' }]]) } as unknown as ConstructorParameters<typeof SearchMode>[0];
  const search = new SearchMode(router, 'search', [], { warn: () => undefined });
  const session = { key: {}, listChanged: () => undefined };
  const forward = async (params: Record<string, unknown>) => ({ content: [{ type: 'text', text: `called ${String(params.name)}` }] });
  const refused = (name: string, args: unknown) =>
    search.call({ name, arguments: args }, async () => items, forward, session).then(
      () => null,
      (error: { code: number; data?: { code?: string } }) => ({ code: error.code, data: error.data?.code }),
    );
  const cases: Array<[string, string, unknown, string]> = [
    ['a search without a query', SEARCH, {}, 'BAD_REQUEST'],
    ['a query of white space', SEARCH, { query: ' \n\t ' }, 'BAD_REQUEST'],
    ['a query that is not text', SEARCH, { query: { $ne: 1 } }, 'BAD_REQUEST'],
    ['a limit past the most', SEARCH, { query: 'echo', limit: 51 }, 'BAD_REQUEST'],
    ['a limit that is not a number', SEARCH, { query: 'echo', limit: '5' }, 'BAD_REQUEST'],
    ['a query past 1,024 characters', SEARCH, { query: 'x'.repeat(1_025) }, 'NAME_TOO_LONG'],
    ['a call without a name', CALL, {}, 'BAD_REQUEST'],
    ["a call of coffer's own search", CALL, { name: SEARCH, arguments: { query: 'echo' } }, 'BAD_REQUEST'],
    ["a call of coffer's own add, as if a tool", CALL, { name: ADD, arguments: { names: ['a__echo'] } }, 'BAD_REQUEST'],
    ['a call whose arguments are a list', CALL, { name: 'a__echo', arguments: [1] }, 'BAD_REQUEST'],
    ['a call of a name past 1,024 characters', CALL, { name: `a__${'x'.repeat(1_024)}` }, 'NAME_TOO_LONG'],
    ['an add without names', ADD, {}, 'BAD_REQUEST'],
    ['an add of 51 names', ADD, { names: Array.from({ length: 51 }, () => 'a__echo') }, 'BAD_REQUEST'],
    ['an add of a name that is not text', ADD, { names: [7] }, 'BAD_REQUEST'],
    ["an add of coffer's own tool", ADD, { names: [ADD] }, 'BAD_REQUEST'],
    ['an add of a name with control characters', ADD, { names: ['a__echo\u0000\u001b[2J'] }, 'BAD_REQUEST'],
  ];
  for (const [label, name, args, code] of cases) t.same(await refused(name, args), { code: -32602, data: code }, `${label}: -32602 ${code}`);

  // What the caller sent is quoted back escaped: its control characters cannot rewrite what it reads.
  const control = /[\u0000-\u001f]/;
  const message = await search.call({ name: ADD, arguments: { names: ['a__echo\u0000\u001b[2J'] } }, async () => items, forward, session).catch((error: Error) => error.message);
  t.match(message, /named "a__echo\\x00\\x1b\[2J"/, 'an unknown name is quoted escaped');
  t.notMatch(message, control, 'the refusal holds no control character');
  const answer = await search.call({ name: SEARCH, arguments: { query: '\u0000\u001b[2J' } }, async () => items, forward, session);
  const text = (answer.content as Array<{ text: string }>)[0]!.text;
  t.match(text, /^No tool matches "\\x00\\x1b\[2J"/, 'a query of control characters only finds nothing, and says so, quoted escaped');
  t.notMatch(text, control, 'nor does the answer');
});
