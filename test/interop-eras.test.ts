// Both MCP eras through one daemon, with every real client coffer claims to
// serve: ONE daemon fronts a 2025-11-25 upstream (the v1-SDK conformance
// fixture over stdio) and a 2026-07-28-only one (the v2 fixture, `legacy:
// 'reject'`, over HTTP). Against it: the SDK v2 client in `auto` and pinned
// to 2026-07-28, the v1 client and @ai-sdk/mcp over /mcp, and `coffer shim`
// driven by a v2 client (auto and pinned) and by a v1 client over stdio. Each
// lists both upstreams' tools and calls one of each; through the shim a call
// to a tool with an x-mcp-header argument carries the Mcp-Param-* header the
// daemon checks (the stdio client has none to send), an
// elicitation crosses the era bridge each way, a call is cancelled, progress
// arrives on its call, and a subscriptions/listen stays open for a change.
import { createMCPClient } from '@ai-sdk/mcp';
import { Client as ClientV2 } from '@modelcontextprotocol/client';
import { StdioClientTransport as StdioClientTransportV2 } from '@modelcontextprotocol/client/stdio';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CreateMessageRequestSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import t, { type Test } from 'tap';
import { CLI_ENTRY } from '../src/paths.js';
import { CONFORMANCE_FIXTURE } from './fixtures/fixture-servers.js';
import { waitFor } from './helpers/gateway.js';
import { mcpAuthHeader } from './helpers/mcp-post.js';
import { MODERN, modernClient, modernFront } from './helpers/modern.js';

const LEGACY_TOOL = 'c__test_simple_text';
const LEGACY_TEXT = 'This is a simple text response for testing.';
const MODERN_TOOL = 'm__echo';
/** Declares x-mcp-header arguments: a modern call needs their Mcp-Param-* headers. */
const HEADER_TOOL = 'c__test_custom_headers';

const front = modernFront(t);

t.before(async () => {
  await front.gateway.addServer({ name: 'c', namespace: 'c', transport: { type: 'stdio', command: process.execPath, args: [CONFORMANCE_FIXTURE, '--transport', 'stdio'], env: {}, cwd: null } });
});

/** What every client answers, whatever its API. */
interface Caller {
  tools(): Promise<string[]>;
  call(name: string, args: Record<string, unknown>): Promise<string>;
}

type AnyResult = { content?: unknown };
const textOf = (result: AnyResult): string => ((result.content as Array<{ text?: string }> | undefined) ?? []).map((part) => part.text).join('');

function sdkCaller(client: { listTools(): Promise<{ tools: Array<{ name: string }> }>; callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<unknown> }): Caller {
  return {
    tools: async () => (await client.listTools()).tools.map((tool) => tool.name),
    call: async (name, args) => textOf((await client.callTool({ name, arguments: args })) as AnyResult),
  };
}

/** `coffer shim` as a stdio server command, toward this gateway's daemon. */
function shimCommand(): { command: string; args: string[]; env: Record<string, string>; stderr: 'pipe' } {
  return { command: process.execPath, args: [CLI_ENTRY, 'shim'], env: { ...(process.env as Record<string, string>), COFFER_HOME: front.gateway.home }, stderr: 'pipe' };
}

async function shimV2(capabilities: Record<string, unknown> = {}, mode: 'auto' | 'pin' = 'pin'): Promise<ClientV2> {
  const client = new ClientV2({ name: `v2-shim-${mode}`, version: '2.4.0' }, { capabilities, versionNegotiation: { mode: mode === 'pin' ? { pin: MODERN } : 'auto' } });
  await client.connect(new StdioClientTransportV2(shimCommand()));
  return client;
}

async function shimV1(capabilities: Record<string, unknown> = {}): Promise<Client> {
  const client = new Client({ name: 'v1-shim', version: '1.0.0' }, { capabilities });
  await client.connect(new StdioClientTransport(shimCommand()));
  return client;
}

async function bothUpstreams(t: Test, caller: Caller): Promise<void> {
  const tools = await caller.tools();
  t.ok(tools.includes(LEGACY_TOOL), 'the 2025 upstream’s tool is listed');
  t.ok(tools.includes(MODERN_TOOL), 'the 2026 upstream’s tool is listed');
  t.equal(await caller.call(LEGACY_TOOL, {}), LEGACY_TEXT, 'a call to the 2025 upstream');
  t.equal(await caller.call(MODERN_TOOL, { text: 'both eras' }), 'both eras', 'a call to the 2026 upstream');
}

const cancelledWaits = async (): Promise<number> => ((await (await fetch(`${front.upstream.hello.control}/cancelled`)).json()) as { cancelled: number }).cancelled;
const waitCalls = async (): Promise<number> =>
  ((await (await fetch(`${front.upstream.hello.control}/log`)).json()) as Array<{ method: string; params?: { name?: string } }>).filter((entry) => entry.method === 'tools/call' && entry.params?.name === 'wait').length;

/** Calls m__wait, cancels it once the upstream has it, and checks the upstream saw the cancel. */
async function cancelsWait(t: Test, call: (signal: AbortSignal) => Promise<unknown>): Promise<void> {
  const [calls, cancelled] = [await waitCalls(), await cancelledWaits()];
  const abort = new AbortController();
  const outcome = call(abort.signal).then(
    () => 'answered',
    () => 'rejected',
  );
  await waitFor('the call to reach the upstream', async () => (await waitCalls()) > calls);
  abort.abort('the user gave up');
  t.equal(await outcome, 'rejected', 'the caller sees its call cancelled');
  // Well inside the 30 s after which the tool ends by itself: only a cancel ends it sooner.
  await waitFor('the upstream to see the cancel', async () => (await cancelledWaits()) > cancelled, 10_000);
  t.pass('the cancel reached the upstream call');
}

t.test('the SDK v2 client over /mcp, in auto mode and pinned to 2026-07-28', async (t) => {
  for (const mode of ['auto', 'pin'] as const) {
    const client = await modernClient(front.gateway, mode);
    t.teardown(() => client.close());
    t.equal(client.getProtocolEra(), 'modern', `${mode}: the modern era`);
    await bothUpstreams(t, sdkCaller(client));
    // Closing the call's HTTP request is how a modern caller cancels: coffer stops waiting and cancels the upstream call.
    await cancelsWait(t, (signal) => client.callTool({ name: 'm__wait', arguments: {} }, { signal }));
  }
});

t.test('the SDK v1 client over /mcp', async (t) => {
  const client = await front.gateway.client('v1-http');
  await bothUpstreams(t, sdkCaller(client));
});

t.test('@ai-sdk/mcp over /mcp (HTTP transport)', async (t) => {
  const client = await createMCPClient({ transport: { type: 'http', url: `${front.gateway.url}/mcp`, headers: mcpAuthHeader(front.gateway) } });
  t.teardown(() => client.close());
  await bothUpstreams(t, {
    tools: async () => (await client.listTools()).tools.map((tool) => tool.name),
    call: async (name, args) => textOf((await client.callTool({ name, arguments: args })) as AnyResult),
  });
});

t.test('coffer shim driven by a v2 client pinned to 2026-07-28', async (t) => {
  const client = await shimV2({ elicitation: {} });
  t.teardown(() => client.close());
  t.equal(client.getProtocolEra(), 'modern', 'server/discover answered through the shim');
  t.match(client.getServerVersion(), { name: 'coffer' });
  await bothUpstreams(t, sdkCaller(client));
  const region = textOf((await client.callTool({ name: HEADER_TOOL, arguments: { region: 'eu-west', query: 'q' } })) as AnyResult);
  t.equal(region, 'custom headers tool called with: {"region":"eu-west","query":"q"}', 'the shim mirrors an x-mcp-header argument into its Mcp-Param-* header');

  // The 2025 upstream asks elicitation/create; the shim's modern client gets input_required and retries with its answer.
  const asked: string[] = [];
  client.setRequestHandler('elicitation/create', async (request) => (asked.push(String(request.params.message)), { action: 'accept', content: { username: 'ada', email: 'ada@example.org' } }));
  const elicited = textOf((await client.callTool({ name: 'c__test_elicitation', arguments: { message: 'Who are you?' } })) as AnyResult);
  t.equal(elicited, 'Elicitation completed: action=accept, content={"username":"ada","email":"ada@example.org"}', 'the bridged elicitation completes the call');
  t.same(asked, ['Who are you?'], 'asked once, through the client’s own handler');

  const progress: number[] = [];
  const withProgress = (await client.callTool({ name: 'c__test_tool_with_progress', arguments: {} }, { onprogress: (note) => void progress.push(note.progress) })) as AnyResult;
  t.match(textOf(withProgress), /^Progress reported to /, 'the call carried a progress token');
  // The last update leaves the upstream right before the result; when both reach the SDK client in one stdio read
  // it drops that update (notification handlers run a microtask after the response has removed the call's handler).
  t.same(progress.slice(0, 2), [0, 50], 'progress arrives on the call, before its answer');
  t.ok(progress.length <= 3 && (progress.length < 3 || progress[2] === 100), `in order, nothing else: ${progress.join(',')}`);

  await cancelsWait(t, (signal) => client.callTool({ name: 'm__wait', arguments: {} }, { signal }));

  const changed = new Promise<void>((resolve) => client.setNotificationHandler('notifications/tools/list_changed', () => resolve()));
  const subscription = await client.listen({ toolsListChanged: true });
  t.match(subscription.honoredFilter, { toolsListChanged: true }, 'the listen is acknowledged through the shim');
  await fetch(`${front.upstream.hello.control}/tool`, { method: 'POST', body: JSON.stringify({ name: 'late' }) });
  await changed;
  t.pass('a list change arrives on the listen held open through the shim');
  await subscription.close();
  await waitFor('the new tool listed', async () => (await sdkCaller(client).tools()).includes('m__late'));
});

t.test('coffer shim driven by a v2 client in auto mode: server/discover over stdio chooses the modern era', async (t) => {
  const client = await shimV2({}, 'auto');
  t.teardown(() => client.close());
  t.equal(client.getProtocolEra(), 'modern', 'the probe found the modern era through the shim');
  t.equal(client.getNegotiatedProtocolVersion(), MODERN);
  t.match(client.getServerVersion(), { name: 'coffer' });
  await bothUpstreams(t, sdkCaller(client));
  const region = textOf((await client.callTool({ name: HEADER_TOOL, arguments: { region: 'Zürich', priority: 2 } })) as AnyResult);
  t.equal(region, 'custom headers tool called with: {"region":"Zürich","priority":2}', 'the x-mcp-header arguments reach the daemon mirrored as it demands');
});

t.test('coffer shim driven by a v1 client', async (t) => {
  const client = await shimV1({ elicitation: {}, sampling: {} });
  t.teardown(() => client.close());
  await bothUpstreams(t, sdkCaller(client));

  // The 2026 upstream answers input_required; the shim's legacy client is asked each question on its call.
  const asked: string[] = [];
  client.setRequestHandler(ElicitRequestSchema, async (request) => (asked.push(request.params.message), { action: 'accept', content: { name: 'Ada' } }));
  client.setRequestHandler(CreateMessageRequestSchema, async () => (asked.push('sampling'), { model: 'm', role: 'assistant', content: { type: 'text', text: 'fine' } }));
  t.equal(textOf((await client.callTool({ name: 'm__ask', arguments: {} })) as AnyResult), 'state-ok name=Ada mood=fine', 'the bridged rounds complete the call');
  t.same(asked, ['Your name?', 'sampling']);

  await cancelsWait(t, (signal) => client.callTool({ name: 'm__wait', arguments: {} }, undefined, { signal }));
});
