// Property-based tests (fast-check, bounded runs): namespacing round trips over
// arbitrary unicode, and the JSON-RPC input path of /mcp — no JSON value, no
// string, no params object makes the daemon answer 500, crash or hang; from the
// upstream side, no nesting depth or size of an answer does either.
import fc from 'fast-check';
import t from 'tap';
import { namespaceName, namespaceUri, parseNamespacedName, parseNamespacedUri } from '../src/router/namespace.js';
import { isServerName } from '../src/protocol/server-config.js';
import { MAX_DEPTH } from '../src/protocol/message-limit.js';
import { nestsDeeperThan, textDepth } from '../src/protocol/nesting.js';
import { startGateway, tempHome, type Gateway } from './helpers/gateway.js';
import { faultSwitch, stdioFixture } from './fixtures/fixture-servers.js';
import { mcpPost, type McpAnswer } from './helpers/mcp-post.js';

const PROTOCOL = '2025-11-25';
const INIT = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: PROTOCOL, capabilities: {}, clientInfo: { name: 'property', version: '1' } } };

/** Every name the validator accepts (src/registry/server-config.ts). */
const serverName = fc.stringMatching(/^[A-Za-z0-9_.-]{1,64}$/).filter(isServerName);
const anyText = fc.oneof(fc.string({ unit: 'grapheme', minLength: 1 }), fc.string({ unit: 'binary', minLength: 1 }), fc.string({ minLength: 1 }));

t.test('namespaceName / parseNamespacedName round-trip over arbitrary unicode', async (t) => {
  fc.assert(
    fc.property(serverName, anyText, (server, name) => {
      const parsed = parseNamespacedName(namespaceName(server, name));
      return parsed !== null && parsed.server === server && parsed.original === name;
    }),
    { numRuns: 2000 },
  );
  // Whatever parses recomposes to exactly the input: no normalisation, no guessing.
  fc.assert(
    fc.property(fc.oneof(anyText, fc.tuple(serverName, anyText).map(([s, n]) => `${s}__${n}`)), (input) => {
      const parsed = parseNamespacedName(input);
      return parsed === null || (namespaceName(parsed.server, parsed.original) === input && isServerName(parsed.server));
    }),
    { numRuns: 2000 },
  );
  t.pass('round trips hold');
});

t.test('namespaceUri / parseNamespacedUri round-trip over arbitrary unicode', async (t) => {
  fc.assert(
    fc.property(serverName, anyText, (server, uri) => {
      const parsed = parseNamespacedUri(namespaceUri(server, uri));
      return parsed !== null && parsed.server === server && parsed.original === uri;
    }),
    { numRuns: 2000 },
  );
  fc.assert(
    fc.property(fc.oneof(anyText, anyText.map((rest) => `coffer://${rest}`), fc.tuple(serverName, anyText).map(([s, u]) => `coffer://${s}/${u}`)), (input) => {
      const parsed = parseNamespacedUri(input);
      return parsed === null || (namespaceUri(parsed.server, parsed.original) === input && isServerName(parsed.server));
    }),
    { numRuns: 2000 },
  );
  t.pass('round trips hold');
});

t.test('a trailing "_" is not a server name, so a___x has one reading: server "a", tool "_x"', async (t) => {
  t.same(parseNamespacedName('a___x'), { server: 'a', original: '_x' });
  t.same(parseNamespacedName(namespaceName('a', '_x')), { server: 'a', original: '_x' });
  t.notOk(isServerName('a_'));
  t.ok(isServerName('a_b'));
});

// ------------------------------------------------------------ the /mcp input path

function wellFormed(answer: McpAnswer): boolean {
  if (answer.status >= 500) return false;
  if (answer.status === 202) return answer.messages.length === 0;
  if (answer.messages.length === 0) return false;
  return answer.messages.every(
    (message) =>
      message?.jsonrpc === '2.0' &&
      ('result' in message ? typeof message.result === 'object' : typeof message.error?.code === 'number' && typeof message.error?.message === 'string'),
  );
}

let gateway: Gateway;
let session: Record<string, string>;

t.before(async () => {
  gateway = await startGateway();
  // Tools that answer at once (no slow / crash / mutate), resources and prompts.
  await gateway.addServer(stdioFixture('alpha', ['--tools', 'echo,whoami', '--resources', '--prompts']));
  const answer = await mcpPost(gateway, INIT);
  session = { 'mcp-session-id': answer.sessionId!, 'mcp-protocol-version': PROTOCOL };
});
t.teardown(() => gateway?.close());

/** Request-shaped values with arbitrary parts: these get past the transport's schema more often than fc.jsonValue alone. */
const requestish = fc.record(
  {
    jsonrpc: fc.oneof(fc.constant('2.0'), fc.jsonValue()),
    id: fc.oneof(fc.integer(), fc.string(), fc.jsonValue()),
    method: fc.oneof(fc.constantFrom('ping', 'tools/list', 'tools/call', 'resources/read', 'prompts/get', 'resources/templates/list', 'initialize', 'notifications/cancelled'), fc.string(), fc.jsonValue()),
    params: fc.oneof(fc.object(), fc.jsonValue()),
  },
  { requiredKeys: [] },
);

/** Valid envelopes with arbitrary params: these reach the dispatcher. */
const wellTyped = fc.record({
  jsonrpc: fc.constant('2.0'),
  id: fc.oneof(fc.integer(), fc.string({ maxLength: 8 })),
  method: fc.constantFrom('ping', 'tools/list', 'resources/list', 'prompts/list', 'resources/templates/list', 'tools/call', 'resources/read', 'prompts/get', 'completion/complete', 'logging/setLevel', 'no/such'),
  params: fc.object(),
});

t.test('arbitrary JSON values and strings POSTed to /mcp: never a 500, always a well-formed answer', async (t) => {
  let runs = 0;
  const statuses: Record<number, number> = {};
  for (const [label, headers] of [['no session', {}], ['session', () => session]] as const) {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.jsonValue().map((value) => JSON.stringify(value)),
          fc.string(),
          fc.string({ unit: 'binary' }),
          requestish.map((value) => JSON.stringify(value)),
          fc.array(requestish, { maxLength: 5 }).map((value) => JSON.stringify(value)),
          { arbitrary: wellTyped.map((value) => JSON.stringify(value)), weight: 3 },
          { arbitrary: fc.uniqueArray(wellTyped, { maxLength: 5, selector: (value) => JSON.stringify(value.id) }).map((value) => JSON.stringify(value)), weight: 2 },
        ),
        async (body) => {
        runs++;
        const answer = await mcpPost(gateway, body, typeof headers === 'function' ? headers() : headers);
        statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
        if (!wellFormed(answer)) throw new Error(`${label}: ${answer.status} ${JSON.stringify(answer.messages).slice(0, 300)} for ${body.slice(0, 200)}`);
        return true;
      }),
      { numRuns: 300 },
    );
  }
  t.comment(`${runs} bodies; statuses ${JSON.stringify(statuses)}`);
  const ping = await mcpPost(gateway, JSON.stringify({ jsonrpc: '2.0', id: 'alive', method: 'ping' }), session);
  t.match(ping, { status: 200, messages: [{ id: 'alive', result: {} }] }, 'the session still answers');
});

t.test('arbitrary params of tools/call, resources/read, prompts/get: a result or a JSON-RPC error, never a hang', async (t) => {
  let id = 0;
  const outcomes: Record<string, number> = {};
  const internal = new Set<string>();
  const name = fc.oneof(fc.constantFrom('alpha__echo', 'alpha__whoami', 'alpha__greet', 'alpha__nope', 'beta__echo', 'alpha__'), fc.string(), fc.jsonValue());
  const uri = fc.oneof(fc.constantFrom('coffer://alpha/fixture://static', 'coffer://alpha/fixture://items/1', 'coffer://alpha/nope', 'coffer://a/../alpha/x'), fc.string(), fc.jsonValue());
  const params = fc.record(
    {
      name,
      uri,
      arguments: fc.oneof(fc.object(), fc.jsonValue()),
      _meta: fc.oneof(fc.object(), fc.record({ progressToken: fc.oneof(fc.string(), fc.integer(), fc.jsonValue()) })),
      extra: fc.jsonValue(),
    },
    { requiredKeys: [] },
  );
  await fc.assert(
    fc.asyncProperty(fc.constantFrom('tools/call', 'resources/read', 'prompts/get'), params, async (method, p) => {
      const requestId = ++id;
      const answer = await mcpPost(gateway, JSON.stringify({ jsonrpc: '2.0', id: requestId, method, params: p }), session);
      if (!wellFormed(answer)) throw new Error(`${answer.status} ${JSON.stringify(answer.messages).slice(0, 300)}`);
      if (answer.status === 200) {
        const reply = answer.messages.find((message) => message.id === requestId);
        if (!reply) throw new Error(`no reply to ${requestId}: ${JSON.stringify(answer.messages).slice(0, 300)}`);
        if (reply.error && /internal error in coffer/.test(reply.error.message)) throw new Error(`coffer failed internally on ${JSON.stringify(p).slice(0, 300)}`);
        const outcome = reply.result ? 'result' : `error ${reply.error.code}`;
        if (reply.error?.code === -32603) internal.add(String(reply.error.message).replace(/\s+/g, ' ').slice(0, 80));
        outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
      } else outcomes[`http ${answer.status}`] = (outcomes[`http ${answer.status}`] ?? 0) + 1;
      return true;
    }),
    { numRuns: 250 },
  );
  t.comment(`outcomes: ${JSON.stringify(outcomes)}`);
  // -32603 here is the upstream's own answer (its SDK rejecting bad arguments), passed through unchanged.
  if (internal.size > 0) t.comment(`-32603 messages (from the upstream): ${[...internal].slice(0, 5).join(' | ')}`);
  t.ok(outcomes['result'], 'some calls were routed and answered');
  const client = await gateway.client('after-properties');
  t.ok((await client.listTools()).tools.some((tool) => tool.name === 'alpha__echo'), 'a normal client still works');
});

// ------------------------------------------------------------ the upstream side

t.test('nesting measured on JSON text agrees with the parsed value, whatever the strings hold', async (t) => {
  const tricky = fc.oneof(fc.string(), fc.constantFrom('[', ']', '{', '}', '"', '\\', '\\"', '\\\\', '"]}'));
  const value = fc.letrec<{ node: unknown }>((tie) => ({
    node: fc.oneof({ depthSize: 'medium', withCrossShrink: true }, tricky, fc.integer(), fc.array(tie('node'), { maxLength: 3 }), fc.dictionary(tricky, tie('node'), { maxKeys: 3 })),
  })).node;
  fc.assert(
    fc.property(value, fc.integer({ min: 0, max: 12 }), (v, max) => {
      const depth = textDepth(JSON.stringify(v), Number.MAX_SAFE_INTEGER);
      return nestsDeeperThan(v, max) === depth > max && nestsDeeperThan(v, depth) === false;
    }),
    { numRuns: 3000 },
  );
  t.pass('textDepth and nestsDeeperThan agree');
});

t.test('an upstream answering at any nesting depth and size: a result or a clear error, never a hang', async (t) => {
  const control = faultSwitch(tempHome('coffer-property-'), {});
  await gateway.addServer(stdioFixture('hostile', [...control.args, '--tools', 'echo,whoami'], { request_ms: 5_000 }));
  const client = await gateway.client('upstream-side');
  const outcomes: Record<string, number> = {};
  const depth = fc.oneof(fc.integer({ min: 1, max: MAX_DEPTH + 8 }), fc.integer({ min: 1, max: 300_000 }));
  const fault = fc.oneof(
    fc.record({ fault: fc.constant('deep' as const), deep: fc.constantFrom('result' as const, 'notification' as const, 'request' as const), depth }),
    fc.record({ fault: fc.constant('big' as const), mb: fc.integer({ min: 1, max: 8 }) }),
  );
  await fc.assert(
    fc.asyncProperty(fault, async (switchTo) => {
      await control.set(switchTo);
      let seen: string;
      try {
        await client.callTool({ name: 'hostile__whoami', arguments: {} }, undefined, { timeout: 30_000 });
        seen = 'result';
      } catch (error) {
        const { code, data } = error as { code?: number; data?: { code?: string } };
        seen = `${code} ${data?.code}`;
      }
      outcomes[seen] = (outcomes[seen] ?? 0) + 1;
      const deepResult = switchTo.fault === 'deep' && switchTo.deep === 'result' && switchTo.depth + 2 > MAX_DEPTH;
      if (seen !== (deepResult ? '-32011 UPSTREAM_RESPONSE_INVALID' : 'result')) throw new Error(`${JSON.stringify(switchTo)} gave ${seen}`);
      return true;
    }),
    { numRuns: 40 },
  );
  t.comment(`outcomes: ${JSON.stringify(outcomes)}`);
  await control.set({});
  t.ok((await client.listTools()).tools.some((tool) => tool.name === 'alpha__echo'), 'everything else still works');
});
