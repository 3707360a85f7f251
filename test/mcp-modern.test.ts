// coffer's /mcp in the MCP 2026-07-28 era ("modern": no session, metadata per
// request) beside the 2025-11-25 era on the same endpoint, with real clients
// over real HTTP: the SDK v2 client pinned to 2026-07-28 and in auto mode,
// the v1 client at the same time, raw modern POSTs for the wire's refusals,
// and a legacy upstream (the conformance fixture over stdio) behind coffer.
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import t, { type Test } from 'tap';
import { CONFORMANCE_FIXTURE } from './fixtures/fixture-servers.js';
import { startGateway, waitFor, type Gateway } from './helpers/gateway.js';
import { mcpPost, MCP_HEADERS } from './helpers/mcp-post.js';
import { envelope, MODERN, modernClient, modernPost } from './helpers/modern.js';
import { deepText } from './fixtures/fault-control.js';

const NS = 'c';
let gateway: Gateway;

t.before(async () => {
  gateway = await startGateway();
  await gateway.addServer({ name: NS, namespace: NS, transport: { type: 'stdio', command: process.execPath, args: [CONFORMANCE_FIXTURE, '--transport', 'stdio'], env: {}, cwd: null } });
});
t.teardown(() => gateway.close());

async function setTool(key: string, enabled: boolean): Promise<void> {
  const answer = await gateway.api('POST', `/servers/${NS}/capabilities/tool/${enabled ? 'enable' : 'disable'}`, { key });
  if (answer.status !== 200) throw new Error(`switch failed: ${JSON.stringify(answer.body)}`);
}

const textOf = (result: object) => (((result as { content?: unknown }).content as Array<{ text?: string }> | undefined) ?? []).map((part) => part.text).join('');

t.test('a v2 client pinned to 2026-07-28 connects, lists, calls, reads, gets prompts, completes', async (t) => {
  const client = await modernClient(gateway, 'pin');
  t.teardown(() => client.close());
  t.equal(client.getProtocolEra(), 'modern', 'the era is modern');
  t.equal(client.getNegotiatedProtocolVersion(), MODERN);
  t.match(client.getServerVersion(), { name: 'coffer' }, 'server/discover names coffer');
  t.match(client.getServerCapabilities(), { tools: { listChanged: true }, resources: { subscribe: true }, prompts: {} });
  const tools = (await client.listTools()).tools.map((tool) => tool.name);
  t.ok(tools.includes(`${NS}__test_simple_text`), 'the upstream tool, namespaced');
  t.equal(textOf(await client.callTool({ name: `${NS}__test_simple_text`, arguments: {} })), 'This is a simple text response for testing.');
  const read = await client.readResource({ uri: `coffer://${NS}/test://static-text` });
  t.match(read.contents[0], { uri: `coffer://${NS}/test://static-text`, text: /static/i }, 'resource URIs come back exposed');
  const prompt = await client.getPrompt({ name: `${NS}__test_prompt_with_arguments`, arguments: { arg1: 'a', arg2: 'b' } });
  t.ok(prompt.messages.length > 0, 'the prompt');
  const completion = await client.complete({ ref: { type: 'ref/prompt', name: `${NS}__test_prompt_with_arguments` }, argument: { name: 'arg1', value: 'par' } });
  t.ok(completion.completion.values.includes('paris'), 'completion through the router');
});

t.test('a v2 client in auto mode chooses the modern era; a v1 client on the same endpoint at the same time stays legacy', async (t) => {
  const modern = await modernClient(gateway, 'auto');
  const legacy = await gateway.client('v1');
  t.teardown(() => modern.close());
  t.equal(modern.getProtocolEra(), 'modern');
  const [a, b] = await Promise.all([
    modern.callTool({ name: `${NS}__test_simple_text`, arguments: {} }),
    legacy.callTool({ name: `${NS}__test_simple_text`, arguments: {} }),
  ]);
  t.equal(textOf(a), textOf(b), 'both eras get the same answer');
  t.equal(legacy.getServerVersion()?.name, 'coffer');
  await legacy.ping();
  t.pass('the legacy session still has ping');
});

t.test('a switch turned off: gone from the modern list, a call refused with the same stable code as for legacy', async (t) => {
  const modern = await modernClient(gateway, 'pin');
  const legacy = await gateway.client('v1-switch');
  t.teardown(async () => {
    await setTool('test_error_handling', true);
    await modern.close();
  });
  const name = `${NS}__test_error_handling`;
  t.ok((await modern.listTools()).tools.some((tool) => tool.name === name), 'listed while on');
  await setTool('test_error_handling', false);
  t.notOk((await modern.listTools()).tools.some((tool) => tool.name === name), 'not listed once off');
  const modernError = await modern.callTool({ name, arguments: {} }).then(
    () => null,
    (error: { code?: number; data?: unknown }) => error,
  );
  const legacyError = await legacy.callTool({ name, arguments: {} }).then(
    () => null,
    (error: { code?: number; data?: unknown }) => error,
  );
  t.match(modernError, { code: -32000, data: { code: 'TOOL_DISABLED' } }, 'modern: refused as disabled');
  t.match(legacyError, { code: -32000, data: { code: 'TOOL_DISABLED' } }, 'legacy: the same code');
});

t.test('subscriptions/listen: acknowledged, list_changed after a switch flip and after an upstream change, filter honoured', async (t) => {
  const client = await modernClient(gateway, 'pin');
  t.teardown(async () => {
    await setTool('test_simple_text', true);
    await client.close();
  });
  const seen: string[] = [];
  client.setNotificationHandler('notifications/tools/list_changed', () => void seen.push('tools'));
  client.setNotificationHandler('notifications/prompts/list_changed', () => void seen.push('prompts'));
  const subscription = await client.listen({ toolsListChanged: true });
  t.same(subscription.honoredFilter, { toolsListChanged: true }, 'the ack says what is honoured');
  await setTool('test_simple_text', false);
  await waitFor('list_changed after the switch flip', () => seen.includes('tools'), 5_000);
  seen.length = 0;
  // An upstream change (R3): the fixture adds a prompt and a tool; only the tool kind was asked for.
  await client.callTool({ name: `${NS}__test_trigger_prompt_change`, arguments: {} });
  await client.callTool({ name: `${NS}__test_trigger_tool_change`, arguments: {} });
  await waitFor('list_changed after the upstream changed its tools', () => seen.includes('tools'), 5_000);
  await sleep(300);
  t.notOk(seen.includes('prompts'), 'no prompts list_changed: not asked for');
  await subscription.close();
  t.equal(await subscription.closed, 'local');
});

/** The first `count` frames of a subscriptions/listen on `path` (fewer if the stream ends first). */
async function listenFrames(t: Test, path: string, notifications: Record<string, unknown>, count: number): Promise<any[]> {
  const controller = new AbortController();
  t.teardown(() => controller.abort());
  const response = await fetch(`${gateway.url}${path}`, {
    method: 'POST',
    headers: { ...MCP_HEADERS, authorization: `Bearer ${gateway.daemon.token}`, 'mcp-protocol-version': MODERN, 'mcp-method': 'subscriptions/listen' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 'sub-1', method: 'subscriptions/listen', params: { _meta: envelope(), notifications } }),
    signal: controller.signal,
  });
  t.equal(response.status, 200);
  t.match(response.headers.get('content-type'), /text\/event-stream/);
  const reader = response.body!.getReader();
  const frames: any[] = [];
  let buffer = '';
  while (frames.length < count) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += new TextDecoder().decode(value);
    const lines = buffer.split('\n');
    buffer = lines.pop()!;
    for (const line of lines) if (line.startsWith('data: ')) frames.push(JSON.parse(line.slice(6)));
  }
  return frames;
}

const WATCHED = `coffer://${NS}/test://watched-resource`;

t.test('subscriptions/listen on the wire: first frame the ack, tagged with the subscription id; resource updates with the exposed URI', async (t) => {
  const tooLong = `coffer://${NS}/test://${'x'.repeat(10_000)}`;
  const frames = await listenFrames(t, '/mcp', { resourceSubscriptions: [WATCHED, `coffer://${NS}/test://no-such`, tooLong] }, 2);
  t.match(frames[0], { method: 'notifications/subscriptions/acknowledged', params: { notifications: { resourceSubscriptions: [WATCHED] }, _meta: { 'io.modelcontextprotocol/subscriptionId': 'sub-1' } } }, 'the ack, with only the resource coffer can subscribe');
  t.notOk(frames[0].params.notifications.resourceSubscriptions.includes(tooLong), 'an over-long URI is left out');
  t.match(frames[1], { method: 'notifications/resources/updated', params: { uri: WATCHED, _meta: { 'io.modelcontextprotocol/subscriptionId': 'sub-1' } } }, 'an update, with the exposed URI');
});

t.test("subscriptions/listen holds the caller to its toolset: a resource outside it is not subscribed, as a read of it is refused", async (t) => {
  const made = await gateway.api('POST', '/toolsets', { name: 'narrow', servers: [{ server: NS, include: ['tool:test_simple_text'] }] });
  t.equal(made.status, 201);
  t.teardown(() => gateway.api('DELETE', '/toolsets/narrow'));
  const read = await mcpPost(gateway, { jsonrpc: '2.0', id: 1, method: 'resources/read', params: { uri: WATCHED, _meta: envelope() } }, { authorization: `Bearer ${gateway.daemon.token}`, 'mcp-protocol-version': MODERN, 'mcp-method': 'resources/read', 'mcp-name': WATCHED }, 20_000, '/mcp/narrow');
  t.match(read.messages.at(-1), { error: { data: { code: 'NOT_IN_TOOLSET' } } }, 'the read is refused');
  const frames = await listenFrames(t, '/mcp/narrow', { resourceSubscriptions: [WATCHED] }, 3);
  t.same(frames[0]?.params?.notifications, {}, 'the ack honours nothing');
  t.match(frames[1], { id: 'sub-1', result: { resultType: 'complete' } }, 'and the subscription completes at once');
  t.equal(frames.length, 2, 'no update follows');
});

t.test('progress and request-scoped logging travel on the exchange\'s own SSE stream', async (t) => {
  const progress = await modernPost(gateway, 'tools/call', { name: `${NS}__test_tool_with_progress`, arguments: {}, _meta: { progressToken: 'p1' } });
  t.match(progress.contentType, /text\/event-stream/);
  t.ok(progress.messages.filter((message) => message.method === 'notifications/progress' && message.params.progressToken === 'p1').length >= 2, 'progress notifications with the caller\'s token');
  t.match(progress.messages.at(-1), { id: 1, result: { resultType: 'complete', _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'coffer' } } } });
  const quiet = await modernPost(gateway, 'tools/call', { name: `${NS}__test_tool_with_logging`, arguments: {} });
  t.equal(quiet.messages.filter((message) => message.method === 'notifications/message').length, 0, 'no logLevel: no log messages');
  const loud = await modernPost(gateway, 'tools/call', { name: `${NS}__test_tool_with_logging`, arguments: {}, _meta: { 'io.modelcontextprotocol/logLevel': 'info' } });
  t.ok(loud.messages.filter((message) => message.method === 'notifications/message').length >= 1, 'logLevel info: the messages');
  const above = await modernPost(gateway, 'tools/call', { name: `${NS}__test_tool_with_logging`, arguments: {}, _meta: { 'io.modelcontextprotocol/logLevel': 'error' } });
  t.equal(above.messages.filter((message) => message.method === 'notifications/message').length, 0, 'logLevel error: info messages held back');
});

t.test('the modern wire\'s refusals', async (t) => {
  const list = await modernPost(gateway, 'tools/list');
  t.match(list, { status: 200, messages: [{ result: { resultType: 'complete', ttlMs: 0, cacheScope: 'private' } }] }, 'a list with its cache hints');
  const discover = await modernPost(gateway, 'server/discover');
  t.match(discover.messages[0].result, { supportedVersions: [MODERN], capabilities: { tools: {} }, resultType: 'complete', _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'coffer' } } });
  t.match(await modernPost(gateway, 'tools/list', {}, { 'mcp-method': null }), { status: 400, messages: [{ id: 1, error: { code: -32020 } }] }, 'Mcp-Method missing');
  t.match(await modernPost(gateway, 'tools/list', {}, { 'mcp-protocol-version': null }), { status: 400, messages: [{ error: { code: -32020 } }] }, 'MCP-Protocol-Version missing');
  t.match(await modernPost(gateway, 'tools/call', { name: `${NS}__test_simple_text`, arguments: {} }, { 'mcp-name': 'other' }), { status: 400, messages: [{ error: { code: -32020 } }] }, 'Mcp-Name disagrees');
  const sentinel = `=?base64?${Buffer.from(`${NS}__test_simple_text`).toString('base64')}?=`;
  t.match(await modernPost(gateway, 'tools/call', { name: `${NS}__test_simple_text`, arguments: {} }, { 'mcp-name': sentinel }), { status: 200, messages: [{ result: { isError: undefined } }] }, 'Mcp-Name in its Base64 form');
  t.match(await modernPost(gateway, 'tools/call', { name: `${NS}__test_simple_text`, arguments: {} }, { 'mcp-name': '=?base64?%%%?=' }), { status: 400, messages: [{ error: { code: -32020 } }] }, 'a malformed Base64 Mcp-Name');
  t.match(await modernPost(gateway, 'tools/call', { name: `${NS}__test_simple_text`, arguments: {} }, { 'mcp-name': '=?base64?%%%?=' }), { messages: [{ error: { message: /invalid Base64/, data: { mismatch: { header: '=?base64?%%%?=' } } } }] }, 'which says the encoding is what is wrong');
  t.match(await modernPost(gateway, 'tools/call', { name: `${NS}__test_simple_text`, arguments: {} }, { 'mcp-name': null }), { status: 400, messages: [{ error: { code: -32020, data: { mismatch: { header: '(missing)' } } } }] }, 'Mcp-Name missing');
  t.match(await modernPost(gateway, 'resources/read', { uri: `coffer://${NS}/test://static-text` }, { 'mcp-name': `coffer://${NS}/test://other` }), { status: 400, messages: [{ error: { code: -32020 } }] }, 'Mcp-Name disagrees with a resources/read URI');
  // Fetch joins a repeated header with ", "; only a raw request can send two, as a proxy might see them.
  const twice = (first: string) =>
    new Promise<string>((resolve, reject) => {
      const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: `${NS}__test_simple_text`, arguments: {}, _meta: envelope() } });
      const socket = connect(gateway.daemon.port, '127.0.0.1', () =>
        socket.write(
          [`POST /mcp HTTP/1.1`, `host: 127.0.0.1:${gateway.daemon.port}`, 'content-type: application/json', 'accept: application/json, text/event-stream', `authorization: Bearer ${gateway.daemon.token}`, `mcp-protocol-version: ${MODERN}`, 'mcp-method: tools/call', `mcp-name: ${first}`, `mcp-name: ${NS}__test_simple_text`, `content-length: ${Buffer.byteLength(body)}`, 'connection: close', '', body].join('\r\n'),
        ),
      );
      let text = '';
      socket.on('data', (chunk) => (text += chunk));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
  t.match(await twice('other'), /^HTTP\/1\.1 400[^]*"code":-32020/, 'a second Mcp-Name does not stand in for a first that disagrees');
  t.match(await twice(`${NS}__test_simple_text`), /^HTTP\/1\.1 400[^]*"code":-32020/, 'nor does a repeat of the same one: the header has one value');
  const future = await modernPost(gateway, 'tools/list', { _meta: { 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } }, { 'mcp-protocol-version': '2099-01-01' });
  t.match(future, { status: 400, messages: [{ id: 1, error: { code: -32022, data: { supported: [MODERN], requested: '2099-01-01' } } }] }, 'an unsupported version names the supported ones');
  for (const removed of ['initialize', 'ping', 'logging/setLevel', 'resources/subscribe', 'no/such']) {
    t.match(await modernPost(gateway, removed, {}, {}, 7), { status: 404, messages: [{ id: 7, error: { code: -32601 } }] }, `${removed}: 404`);
  }
  const missing = await mcpPost(gateway, { jsonrpc: '2.0', id: 3, method: 'tools/list', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN } } }, { 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/list' });
  t.match(missing, { status: 400, messages: [{ id: 3, error: { code: -32602 } }] }, 'an envelope without clientCapabilities');
  const notFound = await modernPost(gateway, 'resources/read', { uri: `coffer://${NS}/test://nothing-here` });
  t.match(notFound.messages[0].error, { code: -32602, data: { uri: `coffer://${NS}/test://nothing-here` } }, 'resource not found: -32602 with data.uri');
  t.match(await modernPost(gateway, 'tools/list', {}, { authorization: 'Bearer wrong' }), { status: 401 }, 'authenticated like every /mcp request');
  const notification = await mcpPost(gateway, { jsonrpc: '2.0', method: 'notifications/initialized', params: { _meta: envelope() } }, { 'mcp-protocol-version': MODERN, 'mcp-method': 'notifications/initialized' });
  t.equal(notification.status, 202, 'a modern notification: 202');
  const bare = await mcpPost(gateway, { jsonrpc: '2.0', method: 'notifications/initialized', params: { _meta: envelope() } }, { 'mcp-protocol-version': MODERN });
  t.equal(bare.status, 202, 'a notification is exempt from the standard headers: no Mcp-Method needed');
});

t.test("a call whose arguments nest too deep for coffer to hand to its upstream is refused as the caller's (-32602 BAD_REQUEST), not as an upstream failure with an internal error's text", async (t) => {
  // Parsed fine, but past what coffer can copy to the upstream's thread.
  const deep = deepText(20_000);
  const body = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"${NS}__test_simple_text","arguments":${deep},"_meta":${JSON.stringify(envelope())}}}`;
  const answer = await mcpPost(gateway, body, { 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call', 'mcp-name': `${NS}__test_simple_text` });
  t.match(answer.messages.at(-1), { id: 7, error: { code: -32602, message: /nests deeper than 128 levels/, data: { code: 'BAD_REQUEST' } } });
  t.notOk(answer.text.includes('call stack'), 'no internal error text');
  const after = await modernPost(gateway, 'tools/call', { name: `${NS}__test_simple_text`, arguments: {} });
  t.equal(textOf(after.messages.at(-1).result), 'This is a simple text response for testing.', 'the upstream is served as before');
});

t.test('a resources/read whose uri is not a string is refused as such (-32602 BAD_REQUEST), neither as an unknown resource nor with what was sent echoed back', async (t) => {
  for (const [label, uri] of [['a number', '5'], ['an object nested deep', deepText(20_000)]]) {
    const body = `{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":${uri},"_meta":${JSON.stringify(envelope())}}}`;
    const answer = await mcpPost(gateway, body, { 'mcp-protocol-version': MODERN, 'mcp-method': 'resources/read' });
    const error = (answer.messages.at(-1) as { error?: { data?: Record<string, unknown> } }).error;
    t.match(error, { code: -32602, message: /params\.uri.*string/, data: { code: 'BAD_REQUEST' } }, label);
    const named = await mcpPost(gateway, body, { 'mcp-protocol-version': MODERN, 'mcp-method': 'resources/read', 'mcp-name': '5' });
    t.match(named.messages.at(-1), { error: { code: -32602, data: { code: 'BAD_REQUEST' } } }, `${label}, with an Mcp-Name: still the uri's refusal, as the body names nothing for the header to disagree with`);
    t.notOk(error?.data && 'uri' in error.data, `${label}: not echoed`);
  }
});

t.test('an upstream request a modern caller did not declare (sampling, no capability) fails the call with -32021 naming it, HTTP 400', async (t) => {
  const answer = await modernPost(gateway, 'tools/call', { name: `${NS}__test_sampling`, arguments: { prompt: 'hi' } }, {}, 1, 20_000);
  t.equal(answer.status, 400);
  t.match(answer.messages.at(-1), { id: 1, error: { code: -32021, message: /sampling/, data: { requiredCapabilities: { sampling: {} } } } });
});

t.test('a daemon that stops ends an open listen gracefully (its result, not a dropped stream)', async (t) => {
  const own = await startGateway();
  const client = await modernClient(own, 'pin');
  const subscription = await client.listen({ toolsListChanged: true });
  const closing = own.close();
  // Bounded: a listen the daemon forgets keeps its stream (and the stop) open.
  const outcome = await Promise.race([subscription.closed, sleep(10_000).then(() => 'still open after 10 s')]);
  t.equal(outcome, 'graceful', 'the server ended it with the listen result');
  await Promise.race([closing, sleep(10_000)]);
});
