// A hostile upstream with the empty namespace (test/fixtures/impostor-upstream.ts)
// next to the servers whose names it claims: a name or URI in a registered
// server's prefix form is that server's whatever its state (live, disabled,
// down, past its list deadline), and the impostor's copies are hidden. The same
// upstream sends server→client requests: only sampling, elicitation and roots
// are relayed, each only to a client that declared it.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { CallToolResultSchema, ListRootsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { JSONRPC } from '../src/protocol/errors.js';
import { DEFAULT_NAME_BUDGET, fitName } from '../src/router/names.js';
import { serverConfig, stdioFixture } from './fixtures/fixture-servers.js';
import { startGateway, type Gateway } from './helpers/gateway.js';
import { everythingStdio } from './helpers/upstreams.js';

const IMPOSTOR = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'impostor-upstream.js');
const impostor = (claims: string[], names: string[] = []) => ({ ...serverConfig('imp', { type: 'stdio', command: process.execPath, args: [IMPOSTOR, '--claim', claims.join(','), '--names', names.join(',')], env: {}, cwd: null }), namespace: '' });

type Client = Awaited<ReturnType<Gateway['client']>>;
const textOf = (result: unknown): string => ((result as { content?: Array<{ text?: string }> }).content ?? []).map((item) => item.text ?? '').join('');

/** What a call answers: its text, or its JSON-RPC error's code and data.code. */
async function outcome(client: Client, name: string): Promise<{ text: string } | { code: number; data: unknown }> {
  return client.callTool({ name, arguments: {} }).then(
    (result) => ({ text: textOf(result) }),
    (error: McpError) => ({ code: error.code, data: error.data }),
  );
}

t.test("an empty-namespace server cannot take over another server's names or URIs, whatever that server's state", async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  await gateway.addServer(impostor(['everything', 'down', 'late', 'off']));
  await gateway.addServer(everythingStdio('everything'));
  await gateway.addServer(stdioFixture('late', ['--hang'], { list_deadline_ms: 300 }));
  // Registered but disabled, and registered but never ready (its process exits at start).
  t.equal((await gateway.api('POST', '/servers', { ...stdioFixture('off'), enabled: false })).status, 201);
  t.equal((await gateway.api('POST', '/servers', stdioFixture('down', ['--exit-at-start']))).status, 201);
  const client = await gateway.client();

  const tools = (await client.listTools()).tools;
  t.same(tools.filter((tool) => tool.description === 'impostor'), [], "none of the impostor's claimed tools is listed");
  t.equal(tools.filter((tool) => tool.name === 'everything__echo').length, 1, 'everything__echo listed once: the real one');
  t.ok(tools.some((tool) => tool.name === 'ask'), "the impostor's own tool is listed unprefixed");
  t.same((await client.listResources()).resources.filter((item) => item.name === 'impostor'), [], 'no claimed resource listed');
  t.same((await client.listResourceTemplates()).resourceTemplates.filter((item) => item.name === 'impostor'), [], 'no claimed template listed');

  t.notMatch(await outcome(client, 'everything__echo'), { text: 'impostor' }, 'live: the real server answers');
  const read = await client.readResource({ uri: 'coffer://everything/demo://resource/dynamic/text/1' });
  t.notMatch(JSON.stringify(read), 'impostor', "live: a URI of the real server's template reads from the real server");
  const shouted = await client.readResource({ uri: 'COFFER://everything/demo://resource/dynamic/text/1' });
  t.notMatch(JSON.stringify(shouted), 'impostor', 'so does its prefix form with the scheme in capitals');

  t.equal((await gateway.api('POST', '/servers/everything/capabilities/tool/disable', { key: 'get-env' })).status, 200);
  t.match(await outcome(client, 'everything__get-env'), { code: JSONRPC.TOOL_DISABLED, data: { code: 'TOOL_DISABLED' } }, 'a disabled tool is refused, not routed to the impostor');

  t.match(await outcome(client, 'off__echo'), { code: JSONRPC.TOOL_DISABLED, data: { code: 'TOOL_DISABLED' } }, 'a disabled server: refused as disabled');
  await t.rejects(client.readResource({ uri: 'coffer://off/demo://resource/dynamic/text/1' }), { code: JSONRPC.TOOL_DISABLED }, 'its URIs too');

  const down = await outcome(client, 'down__echo');
  t.notMatch(down, { text: 'impostor' }, `a server that is down: its own error, not the impostor (${JSON.stringify(down)})`);
  t.match(down, { data: { code: 'UPSTREAM_UNAVAILABLE' } });

  const late = await outcome(client, 'late__echo');
  t.notMatch(late, { text: 'impostor' }, 'a server past its list deadline: the call still goes to it');

  t.equal((await gateway.api('POST', '/servers/everything/disable')).status, 200);
  t.match(await outcome(client, 'everything__echo'), { code: JSONRPC.TOOL_DISABLED }, 'disabled at runtime: refused, not rerouted');
  t.same((await client.listTools()).tools.filter((tool) => tool.description === 'impostor'), [], 'and the impostor items stay hidden');
});

t.test("nor a server's shortened names (`<prefix>-_<head>-<hash>`), while it is live or switched off", async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  const namespace = 'mirror-production-us-east-1-replica';
  const shortened = fitName(`${namespace}__trigger-long-running-operation`, DEFAULT_NAME_BUDGET);
  await gateway.addServer({ ...everythingStdio('mirror'), namespace });
  await gateway.addServer(impostor([], [shortened]));
  const client = await gateway.client();
  const listed = (await client.listTools()).tools.filter((tool) => tool.name === shortened);
  t.equal(listed.length, 1, `${shortened} is listed once`);
  t.not(listed[0]?.description, 'impostor', "and it is the real server's");
  t.equal((await gateway.api('POST', '/servers/mirror/disable')).status, 200);
  t.same((await client.listTools()).tools.filter((tool) => tool.name === shortened), [], 'switched off: not listed, not even the copy');
  t.notMatch(await outcome(client, shortened), { text: 'impostor' }, 'and a call by the name is not the impostor’s');
});

t.test("the prefix `coffer` is coffer's own: no server may take it, and an empty-namespace server's names in its form are hidden", async (t) => {
  const gateway = await startGateway({ toolsMode: 'search' });
  t.teardown(() => gateway.close());
  for (const [config, field] of [[stdioFixture('coffer'), 'name'], [{ ...stdioFixture('mine'), namespace: 'coffer' }, 'namespace']] as const) {
    const refused = await gateway.api('POST', '/servers', config);
    t.equal(refused.status, 422, `a server whose prefix is coffer (its ${field}) is refused`);
    t.match(refused.body, { error: { code: 'NAMESPACE_INVALID', message: /coffer__search_tools/, details: { suggestion: 'coffer-upstream' } } }, 'saying why, with a namespace that can be used');
  }
  t.equal((await gateway.api('POST', '/servers', { ...stdioFixture('coffer'), namespace: 'coffer-upstream' })).status, 201, 'the name coffer under the suggested namespace is accepted');
  t.equal((await gateway.api('PATCH', '/servers/coffer', { namespace: 'coffer' })).status, 422, 'and cannot be changed to the prefix coffer');
  await gateway.addServer(impostor([], ['coffer__search_tools', 'coffer__call_tool', 'coffer__add_tools', 'coffer__wipe']));
  const client = await gateway.client();
  const listed = (await client.listTools()).tools;
  t.same(listed.map((tool) => tool.name).sort(), ['coffer__add_tools', 'coffer__call_tool', 'coffer__search_tools'], 'search mode lists each meta-tool once');
  t.same(listed.filter((tool) => tool.description === 'impostor'), [], 'and none of them is the impostor’s');
  const answer = await client.callTool({ name: 'coffer__search_tools', arguments: { query: 'impostor wipe', limit: 50 } });
  t.notMatch(textOf(answer), 'coffer__', 'a search finds none of the impostor’s copies');
  t.match(await outcome(client, 'coffer__wipe'), { code: JSONRPC.INVALID_PARAMS }, 'a call of a name in coffer’s prefix form that coffer does not have is refused, not forwarded');
  t.notMatch(await outcome(client, 'coffer__wipe'), { text: 'impostor' });
  t.match(await outcome(client, 'coffer__echo'), { code: JSONRPC.INVALID_PARAMS }, 'nor is one reaching the server named coffer, whose prefix is coffer-upstream');
  t.match(await outcome(client, 'coffer-upstream__echo'), { text: '{}' }, 'which answers under its own');
});

t.test('server→client requests: only sampling, elicitation and roots are relayed, each only if the client declared it', async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  await gateway.addServer(impostor([]));
  const client = await gateway.client('roots-client', { roots: {} });
  const received: string[] = [];
  client.fallbackRequestHandler = async (request) => (received.push(request.method), {});
  client.setRequestHandler(ListRootsRequestSchema, async () => (received.push('roots/list'), { roots: [{ uri: 'file:///tmp', name: 'tmp' }] }));

  const ask = async (method: string) => JSON.parse(textOf(await client.callTool({ name: 'ask', arguments: { method } }, CallToolResultSchema)));
  for (const method of ['tools/list', 'resources/read', 'x/custom', 'notifications/whatever']) {
    t.match(await ask(method), { error: { code: JSONRPC.METHOD_NOT_FOUND, message: /coffer relays only/ } }, `${method}: -32601 to the upstream`);
  }
  t.same(received, [], 'none of them reached the client');
  t.same(await ask('roots/list'), { result: { roots: [{ uri: 'file:///tmp', name: 'tmp' }] } }, 'roots/list is relayed to a client that declared roots');
  t.match(await ask('sampling/createMessage'), { error: { code: JSONRPC.METHOD_NOT_FOUND, message: /did not declare the sampling capability/ } }, 'sampling is refused for a client without it');
  t.same(await ask('ping'), { result: {} }, 'a ping is answered by coffer');
  t.same(received, ['roots/list'], 'the client saw only the roots request');
});
