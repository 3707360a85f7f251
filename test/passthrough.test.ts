// What passes through coffer besides lists and calls — upstream
// requests for the client (sampling, elicitation) reaching only the client
// whose call caused them, from a stdio and a Streamable HTTP upstream, with
// two clients at once; subscriptions, completion, logging, progress; the
// namespace option and session_mode.
import { execFileSync } from 'node:child_process';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  LATEST_PROTOCOL_VERSION,
  LoggingMessageNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import t, { type Test } from 'tap';
import { CONFORMANCE_FIXTURE, startNetworkFixture } from './fixtures/fixture-servers.js';
import { modernPost } from './helpers/modern.js';
import { startGateway, waitFor, type Gateway } from './helpers/gateway.js';
import { exposeResultUris } from '../src/router/expose-results.js';
import { mcpPost } from './helpers/mcp-post.js';
import { directEverything, everythingStdio } from './helpers/upstreams.js';
import { deepText } from './fixtures/fault-control.js';

const stdioTransport = { type: 'stdio', command: process.execPath, args: [CONFORMANCE_FIXTURE, '--transport', 'stdio'] };

async function httpUpstream(t: Test): Promise<string> {
  const fixture = await startNetworkFixture('http', [], CONFORMANCE_FIXTURE);
  t.teardown(() => fixture.kill());
  return fixture.url;
}

/** A client that answers sampling and elicitation with its own label, and records what it was asked. */
async function labelledClient(gateway: Gateway, label: string, capabilities: Record<string, unknown> = { sampling: {}, elicitation: {} }) {
  const asked: string[] = [];
  const client = await gateway.client(label, capabilities);
  if (capabilities.sampling) {
    client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
      const content = request.params.messages[0]?.content;
      asked.push(`sampling:${content && 'text' in content ? content.text : '?'}`);
      await new Promise((resolve) => setTimeout(resolve, 100)); // both clients' calls are in flight at once
      return { model: 'test-model', role: 'assistant', content: { type: 'text', text: `answer from ${label}` } };
    });
  }
  if (capabilities.elicitation) {
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(`elicitation:${request.params.message}`);
      return { action: 'accept', content: { username: label, email: `${label}@example.test` } };
    });
  }
  return { client, asked };
}

const textOf = (result: Awaited<ReturnType<Client['callTool']>>) => (result.content as Array<{ text?: string }>)[0]?.text;

for (const [transportName, sessionMode] of [
  ['stdio', 'per_session'],
  ['http', 'shared'],
] as const) {
  t.test(`sampling and elicitation from a ${transportName} upstream (${sessionMode}) reach only the client that called`, async (t) => {
    const gateway = await startGateway();
    t.teardown(() => gateway.close());
    const transport = transportName === 'stdio' ? stdioTransport : { type: 'http', url: await httpUpstream(t) };
    await gateway.addServer({ name: 'conf', transport, session_mode: sessionMode });
    const a = await labelledClient(gateway, 'alice');
    const b = await labelledClient(gateway, 'bob');
    const [fromA, fromB] = await Promise.all([
      a.client.callTool({ name: 'conf__test_sampling', arguments: { prompt: 'prompt of alice' } }),
      b.client.callTool({ name: 'conf__test_sampling', arguments: { prompt: 'prompt of bob' } }),
    ]);
    t.equal(textOf(fromA), 'LLM response: answer from alice', 'alice got her own sampling answer back through the upstream');
    t.equal(textOf(fromB), 'LLM response: answer from bob');
    const [elicitA, elicitB] = await Promise.all([
      a.client.callTool({ name: 'conf__test_elicitation', arguments: { message: 'who is alice?' } }),
      b.client.callTool({ name: 'conf__test_elicitation', arguments: { message: 'who is bob?' } }),
    ]);
    t.match(textOf(elicitA), /action=accept, content=\{"username":"alice"/);
    t.match(textOf(elicitB), /action=accept, content=\{"username":"bob"/);
    t.same(a.asked, ['sampling:prompt of alice', 'elicitation:who is alice?'], 'alice was asked only her own questions');
    t.same(b.asked, ['sampling:prompt of bob', 'elicitation:who is bob?'], 'bob was asked only his own questions');

    const plain = await labelledClient(gateway, 'carol', {});
    const refused = await plain.client.callTool({ name: 'conf__test_sampling', arguments: { prompt: 'no sampling here' } }).catch((error: Error) => ({ isError: true, content: [{ text: error.message }] }));
    t.ok(refused.isError, 'a client without the sampling capability: the upstream got an error, the call fails cleanly');
    t.match(textOf(refused as never), /sampling/i, `says why: ${textOf(refused as never)}`);
  });
}

t.test('shared stdio upstream: calls of two clients one after the other each reach their caller; concurrent ones are refused, not misrouted', async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  await gateway.addServer({ name: 'conf', transport: stdioTransport });
  const a = await labelledClient(gateway, 'alice');
  const b = await labelledClient(gateway, 'bob');
  t.equal(textOf(await a.client.callTool({ name: 'conf__test_sampling', arguments: { prompt: 'one' } })), 'LLM response: answer from alice');
  t.equal(textOf(await b.client.callTool({ name: 'conf__test_sampling', arguments: { prompt: 'two' } })), 'LLM response: answer from bob');
  // Both in flight on one stdio connection: the wire does not say whose request it is.
  const slowA = a.client.callTool({ name: 'conf__test_sampling', arguments: { prompt: 'three' } });
  const slowB = b.client.callTool({ name: 'conf__test_sampling', arguments: { prompt: 'four' } });
  const results = await Promise.allSettled([slowA, slowB]);
  const texts = results.map((r) => (r.status === 'fulfilled' ? (r.value.isError ? `error: ${textOf(r.value)}` : textOf(r.value)) : `error: ${(r.reason as Error).message}`));
  for (const [index, text] of texts.entries()) {
    const own = index === 0 ? 'alice' : 'bob';
    t.ok(text === `LLM response: answer from ${own}` || /per_session|cannot tell/.test(text ?? ''), `never another client's answer: ${text}`);
  }
  t.same([...a.asked, ...b.asked].filter((q) => q === 'sampling:four' && a.asked.includes(q)), [], 'alice never saw bob\'s prompt');
});

t.test('subscriptions, completion, logging and progress pass through with namespaced URIs and names', async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  await gateway.addServer({ name: 'conf', transport: stdioTransport });
  const client = await gateway.client('sub');
  const updates: string[] = [];
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => void updates.push(notification.params.uri));
  const watched = 'coffer://conf/test://watched-resource';
  t.same(await client.subscribeResource({ uri: watched }), {});
  await waitFor('an update', () => updates.length >= 2, 10_000);
  t.same([...new Set(updates)], [watched], 'updates carry the URI the client subscribed with');
  await client.unsubscribeResource({ uri: watched });
  await new Promise((resolve) => setTimeout(resolve, 300));
  const settled = updates.length;
  await new Promise((resolve) => setTimeout(resolve, 1_200));
  t.equal(updates.length, settled, 'no updates after unsubscribe');
  t.equal((await gateway.api('POST', '/servers/conf/capabilities/resource/disable', { key: 'test://watched-resource' })).status, 200);
  await t.rejects(client.subscribeResource({ uri: watched }), /disabled in coffer/, 'a disabled resource cannot be subscribed to');

  const prompt = await client.complete({ ref: { type: 'ref/prompt', name: 'conf__test_prompt_with_arguments' }, argument: { name: 'arg1', value: 'par' } });
  t.ok(prompt.completion.values.includes('paris'), `prompt argument completed: ${prompt.completion.values.join(',')}`);
  const template = await client.complete({ ref: { type: 'ref/resource', uri: 'coffer://conf/test://template/{id}/data' }, argument: { name: 'id', value: '' } });
  t.ok(template.completion.values.length > 0, `template variable completed: ${template.completion.values.join(',')}`);
  await t.rejects(client.complete({ ref: { type: 'ref/prompt', name: 'nobody__prompt' }, argument: { name: 'a', value: '' } }), /unknown prompt/);

  const logs: string[] = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => void logs.push(String(notification.params.data)));
  await client.callTool({ name: 'conf__test_tool_with_logging', arguments: {} });
  t.same(logs, ['Tool execution started', 'Tool processing data', 'Tool execution completed'], 'log messages of the call reach its client');
  await client.setLoggingLevel('error');
  logs.length = 0;
  await client.callTool({ name: 'conf__test_tool_with_logging', arguments: {} });
  t.same(logs, [], 'after setLevel error, info messages are filtered');

  const progress: number[] = [];
  await client.callTool({ name: 'conf__test_tool_with_progress', arguments: {} }, undefined, { onprogress: (p) => void progress.push(p.progress) });
  t.same(progress, [0, 50, 100], 'progress of the call reaches its client');
});

t.test('a subscription outlives the switch or toolset that allowed it: updates stop while they refuse the resource', async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  await gateway.addServer({ name: 'conf', transport: stdioTransport });
  t.equal((await gateway.api('POST', '/toolsets', { name: 'watch', servers: [{ server: 'conf', include: ['resource:test://watched-resource'] }] })).status, 201);
  const watched = 'coffer://conf/test://watched-resource';
  const whole = await gateway.client('whole');
  const narrow = await gateway.client('narrow', {}, undefined, '/mcp/watch');
  const updates = { whole: 0, narrow: 0 };
  whole.setNotificationHandler(ResourceUpdatedNotificationSchema, () => void updates.whole++);
  narrow.setNotificationHandler(ResourceUpdatedNotificationSchema, () => void updates.narrow++);
  await whole.subscribeResource({ uri: watched });
  await narrow.subscribeResource({ uri: watched });
  await waitFor('updates to both', () => updates.whole >= 1 && updates.narrow >= 1, 10_000);
  /** The updates each client gets over a quiet second, once those already on their way have arrived. */
  const over = async () => {
    await new Promise((resolve) => setTimeout(resolve, 300));
    const before = { ...updates };
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    return { whole: updates.whole - before.whole, narrow: updates.narrow - before.narrow };
  };

  t.equal((await gateway.api('PATCH', '/toolsets/watch', { servers: [{ server: 'conf', include: ['tool:*'] }] })).status, 200);
  const outOfSet = await over();
  t.equal(outOfSet.narrow, 0, 'the toolset no longer holds it: no update reaches its client');
  t.ok(outOfSet.whole > 0, `the whole surface still hears it (${outOfSet.whole})`);

  t.equal((await gateway.api('POST', '/servers/conf/capabilities/resource/disable', { key: 'test://watched-resource' })).status, 200);
  t.same(await over(), { whole: 0, narrow: 0 }, 'switched off: no update reaches anyone');

  t.equal((await gateway.api('POST', '/servers/conf/capabilities/resource/enable', { key: 'test://watched-resource' })).status, 200);
  t.equal((await gateway.api('PATCH', '/toolsets/watch', { servers: [{ server: 'conf', include: ['resource:test://watched-resource'] }] })).status, 200);
  const back = await over();
  t.ok(back.whole > 0 && back.narrow > 0, `allowed again, the subscriptions still stand (${back.whole}, ${back.narrow})`);
});

t.test('namespace "" passes names through; collisions fall back to the prefixed form; prefixes stay unique', async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  await gateway.addServer({ name: 'solo', namespace: '', transport: stdioTransport });
  const client = await gateway.client();
  const tools = (await client.listTools()).tools.map((tool) => tool.name);
  t.ok(tools.includes('test_simple_text'), 'unprefixed tool name');
  t.equal(textOf(await client.callTool({ name: 'test_simple_text', arguments: {} })), 'This is a simple text response for testing.');
  const resource = await client.readResource({ uri: 'test://static-text' });
  t.equal(resource.contents[0]?.uri, 'test://static-text', 'unprefixed URI, read through');
  const templated = await client.readResource({ uri: 'test://template/42/data' });
  t.match(JSON.stringify(templated.contents), /42/, 'a URI of an unprefixed template routes to the only unprefixed server');

  const clash = await gateway.api('POST', '/servers', { name: 'other', namespace: 'solo', transport: stdioTransport });
  t.equal(clash.status, 422, 'a namespace that is another server\'s prefix is refused');
  t.match(clash.body.error.message, /already the prefix of server 'solo'/);

  await gateway.addServer({ name: 'twin', namespace: '', transport: stdioTransport });
  await waitFor('both servers listed', async () => (await client.listTools()).tools.some((tool) => tool.name === 'twin__test_simple_text'));
  const merged = (await client.listTools()).tools.map((tool) => tool.name);
  t.ok(merged.includes('solo__test_simple_text') && merged.includes('twin__test_simple_text'), 'colliding names fall back to <server>__<name>');
  t.notOk(merged.includes('test_simple_text'), 'the ambiguous unprefixed name is not exposed');
  t.equal(textOf(await client.callTool({ name: 'twin__test_simple_text', arguments: {} })), 'This is a simple text response for testing.');
  const ambiguous = await client.callTool({ name: 'test_simple_text', arguments: {} }).catch((error: Error) => error);
  t.match((ambiguous as Error).message, /coffer never guesses/, 'a call is never routed ambiguously');
});

t.test('every content type arrives unchanged but for its resource URIs, exposed: the same call direct and through coffer gives the same result', async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  await gateway.addServer(everythingStdio('every'));
  const viaCoffer = await gateway.client('content');
  const direct = await directEverything();
  t.teardown(() => direct.close());
  const calls: Array<[string, Record<string, unknown>]> = [
    ['get-annotated-message', { messageType: 'error', includeImage: true }], // annotations
    ['get-resource-links', { count: 2 }], // resource_link
    ['get-resource-reference', { resourceType: 'Text', resourceId: 1 }], // embedded resource
    ['get-structured-content', { location: 'Chicago' }], // structuredContent with outputSchema
    ['get-tiny-image', {}], // image
    ['get-sum', { a: 2, b: 3 }],
  ];
  // The demo server stamps its text resources with the clock ("created at 12:41:01 PM"): the two calls may straddle a second.
  const unclocked = (result: unknown) => JSON.parse(JSON.stringify(result).replace(/\d{1,2}:\d\d:\d\d [AP]M/g, '<time>'));
  for (const [tool, args] of calls) {
    const [mine, theirs] = await Promise.all([viaCoffer.callTool({ name: `every__${tool}`, arguments: args }), direct.callTool({ name: tool, arguments: args })]);
    t.same(unclocked(mine), unclocked(exposeResultUris('tools', theirs, 'every')), `${tool}: identical once the direct result's URIs are exposed`);
  }
  const schema = (await viaCoffer.listTools()).tools.find((tool) => tool.name === 'every__get-structured-content');
  const directSchema = (await direct.listTools()).tools.find((tool) => tool.name === 'get-structured-content');
  t.same(schema?.outputSchema, directSchema?.outputSchema, 'outputSchema passes through');
});

t.test('protocol version negotiation: old clients get their version, unknown ones the latest', async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  for (const [asked, expected] of [
    ['2024-11-05', '2024-11-05'],
    ['2025-03-26', '2025-03-26'],
    ['2025-06-18', '2025-06-18'],
    ['2025-11-25', '2025-11-25'],
    ['1999-01-01', LATEST_PROTOCOL_VERSION],
  ]) {
    const answer = await mcpPost(gateway, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: asked, capabilities: {}, clientInfo: { name: 'old', version: '1' } } });
    t.equal(answer.messages[0].result.protocolVersion, expected, `asked ${asked}`);
  }
});

t.test('per_session: each client gets its own upstream connection, opened on its first call and closed with its session', async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  await gateway.addServer({ name: 'conf', transport: stdioTransport, session_mode: 'per_session' });
  const children = () => execFileSync('ps', ['-o', 'args=', '--ppid', String(process.pid)], { encoding: 'utf8' }).split('\n').filter((line) => line.includes('conformance-upstream')).length;
  const shared = children();
  t.equal(shared, 1, 'the shared connection (for lists) only');
  const a = await gateway.client('a');
  const b = await gateway.client('b');
  t.equal(children(), shared, 'no connection before a call');
  await a.setLoggingLevel('error');
  t.equal(children(), shared, 'logging/setLevel is remembered for the session, it opens no connection');
  await a.callTool({ name: 'conf__test_simple_text', arguments: {} });
  await b.callTool({ name: 'conf__test_simple_text', arguments: {} });
  await a.callTool({ name: 'conf__test_simple_text', arguments: {} });
  t.equal(children(), shared + 2, 'one connection per client session');
  await (a.transport as StreamableHTTPClientTransport).terminateSession();
  await waitFor('the closed session\'s upstream to exit', () => children() === shared + 1, 10_000);
  t.pass('closing a session stops its upstream connection');
  // A 2026-07-28 caller's request is its own session: its connection ends with the request.
  for (let i = 0; i < 3; i++) t.equal((await modernPost(gateway, 'tools/call', { name: 'conf__test_simple_text', arguments: {} })).messages[0]?.result?.resultType, 'complete');
  await waitFor('the modern requests\' upstream connections to exit with them', () => children() === shared + 1, 10_000);
  t.pass('no connection outlives its modern request');
});

t.test('progress the other way: a client reporting progress on an upstream\'s sampling request reaches that upstream', async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  await gateway.addServer({ name: 'conf', transport: stdioTransport });
  const client = await gateway.client('progressing', { sampling: {} });
  client.setRequestHandler(CreateMessageRequestSchema, async (request, extra) => {
    const progressToken = request.params._meta?.progressToken;
    if (progressToken !== undefined) {
      for (const progress of [1, 2]) await extra.sendNotification({ method: 'notifications/progress', params: { progressToken, progress, total: 2 } });
      // Progress and the answer take different paths through coffer; progress sent in the same instant as the answer may land after it.
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return { model: 'm', role: 'assistant', content: { type: 'text', text: 'done' } };
  });
  const result = await client.callTool({ name: 'conf__test_sampling_with_progress', arguments: {} });
  t.equal(textOf(result), 'client progress: 1,2');
});

t.test("another session's progress on an upstream's sampling request never reaches that upstream, even with its token", async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  await gateway.addServer({ name: 'conf', transport: stdioTransport });
  const client = await gateway.client('progressing', { sampling: {} });
  const intruder = await gateway.client('intruder');
  client.setRequestHandler(CreateMessageRequestSchema, async (request, extra) => {
    const progressToken = request.params._meta?.progressToken;
    if (progressToken !== undefined) {
      // The worst case: the other session knows the token the relayed request carries.
      await intruder.notification({ method: 'notifications/progress', params: { progressToken, progress: 99, total: 2 } });
      await new Promise((resolve) => setTimeout(resolve, 200));
      for (const progress of [1, 2]) await extra.sendNotification({ method: 'notifications/progress', params: { progressToken, progress, total: 2 } });
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return { model: 'm', role: 'assistant', content: { type: 'text', text: 'done' } };
  });
  const result = await client.callTool({ name: 'conf__test_sampling_with_progress', arguments: {} });
  t.equal(textOf(result), 'client progress: 1,2', 'only the asked session reports progress');
});

t.test("a client's progress on a relayed request nested too deep to hand to the upstream's thread is dropped: the rest of its POST is answered", async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  await gateway.addServer({ name: 'conf', transport: stdioTransport });
  const client = await gateway.client('progressing', { sampling: {} });
  const headers = { 'mcp-session-id': (client.transport as StreamableHTTPClientTransport).sessionId!, 'mcp-protocol-version': LATEST_PROTOCOL_VERSION };
  const deep = deepText(20_000);
  const posted: Array<{ status: number; text: string }> = [];
  client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
    const progressToken = JSON.stringify(request.params._meta?.progressToken);
    const body = `[{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":${progressToken},"progress":1,"total":2,"deep":${deep}}},{"jsonrpc":"2.0","id":"after","method":"ping"}]`;
    posted.push(await mcpPost(gateway, body, headers, 10_000));
    return { model: 'm', role: 'assistant', content: { type: 'text', text: 'done' } };
  });
  const result = await client.callTool({ name: 'conf__test_sampling_with_progress', arguments: {} });
  t.equal(textOf(result), 'client progress: ', 'the call completes without the progress');
  t.match(posted, [{ status: 200, text: /"id":"after","result":\{\}/ }], 'the ping beside it is answered');
  const again = await mcpPost(gateway, { jsonrpc: '2.0', id: 'after', method: 'ping' }, headers);
  t.match(again, { status: 200, text: /"result":\{\}/ }, 'and its id is free again');
});
