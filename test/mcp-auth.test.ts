// /mcp is closed by default: a request presents a named client's token or the
// daemon's; sessions are bound to the credential that opened them; nothing
// published names a session by its id; tokens are stored only as hashes.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import t, { type Test } from 'tap';
import { connectAdmin } from '../src/admin/client.js';
import { clientConfig } from '../src/cli/commands/mcp-client-config.js';
import { EXIT } from '../src/cli/exit-codes.js';
import { BEARER_CHALLENGE, bearerToken } from '../src/http/bearer.js';
import { hashToken, McpAuth } from '../src/http/mcp-auth.js';
import type { CofferEvent } from '../src/protocol/events.js';
import { CONFORMANCE_FIXTURE, stdioFixture } from './fixtures/fixture-servers.js';
import { runCli } from './helpers/cli.js';
import { startGateway, tempHome, waitFor, type Gateway } from './helpers/gateway.js';
import { mcpPost, mcpTransport } from './helpers/mcp-post.js';
import { CAPABILITIES_KEY, modernPost } from './helpers/modern.js';
import { waitReady } from './helpers/rest.js';

const INIT = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'auth-test', version: '1' } } };
const LIST = { jsonrpc: '2.0', id: 2, method: 'tools/list' };
const CALL = { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'alpha__echo', arguments: { x: 1 } } };

async function addClient(gateway: Gateway, name: string): Promise<string> {
  const created = await gateway.api('POST', '/clients', { name });
  if (created.status !== 201) throw new Error(`client add failed: ${JSON.stringify(created.body)}`);
  return created.body.token as string;
}

/** Opens a session with `authorization` (a full header value) and returns its headers. */
async function openSession(gateway: Gateway, authorization: string): Promise<Record<string, string>> {
  const answer = await mcpPost(gateway, INIT, { authorization });
  if (answer.status !== 200 || !answer.sessionId) throw new Error(`initialize failed: ${answer.status} ${answer.text}`);
  const headers = { 'mcp-session-id': answer.sessionId, 'mcp-protocol-version': '2025-11-25', authorization };
  await mcpPost(gateway, { jsonrpc: '2.0', method: 'notifications/initialized' }, headers);
  return headers;
}

function expectUnauthenticated(t: Test, answer: Awaited<ReturnType<typeof mcpPost>>, label: string): void {
  t.equal(answer.status, 401, `${label}: 401`);
  t.match(answer.messages, [{ jsonrpc: '2.0', id: null, error: { code: -32013, message: /Authorization: Bearer/, data: { code: 'UNAUTHENTICATED' } } }], `${label}: a JSON-RPC error, data.code UNAUTHENTICATED`);
}

t.test('the one Bearer parser: case-insensitive scheme, nothing else taken', async (t) => {
  t.equal(bearerToken('Bearer abc'), 'abc');
  t.equal(bearerToken('bearer abc'), 'abc');
  t.equal(bearerToken('BEARER \tabc '), 'abc');
  for (const bad of [undefined, '', 'Bearer', 'Bearer ', 'Basic abc', 'Bearerabc', 'Bearer a b']) t.equal(bearerToken(bad), undefined, JSON.stringify(bad));
});

t.test('a check costs well under 0.05 ms: one SHA-256 and one map lookup, whatever the number of clients', async (t) => {
  const daemonToken = 'd'.repeat(43);
  const auth = new McpAuth('token', () => daemonToken);
  const tokens = Array.from({ length: 1000 }, (_, i) => `client-token-${i}-${'x'.repeat(30)}`);
  auth.load(tokens.map((token, i) => ({ name: `c${i}`, token_hash: hashToken(token), created_at: '', toolset: null })));
  for (const [label, header] of [['a client token', `Bearer ${tokens[500]}`], ['the daemon token', `Bearer ${daemonToken}`], ['a wrong token', 'Bearer wrong']] as const) {
    const checks = 20_000;
    const started = process.hrtime.bigint();
    for (let i = 0; i < checks; i++) auth.authenticate(header);
    const micros = Number(process.hrtime.bigint() - started) / 1000 / checks;
    t.ok(micros < 50, `${label}: ${micros.toFixed(2)} µs per check`);
  }
  t.equal(auth.authenticate(`Bearer ${tokens[7]}`)?.name, 'c7', 'and finds the right client');
  t.equal(auth.authenticate('Bearer wrong'), null);
});

t.test('the client-config snippets carry the URL and the header', async (t) => {
  const headers = { Authorization: 'Bearer T' };
  t.same(clientConfig('claude-code', 'http://127.0.0.1:7077/mcp', 'T'), { mcpServers: { coffer: { type: 'http', url: 'http://127.0.0.1:7077/mcp', headers } } });
  t.same(clientConfig('cursor', 'http://127.0.0.1:7077/mcp', 'T'), { mcpServers: { coffer: { url: 'http://127.0.0.1:7077/mcp', headers } } });
  t.same(clientConfig('vscode', 'http://127.0.0.1:7077/mcp', 'T'), { servers: { coffer: { type: 'http', url: 'http://127.0.0.1:7077/mcp', headers } } });
});

t.test('without a valid credential /mcp lists and calls nothing', async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  await gateway.addServer(stdioFixture('alpha'));
  const valid = await openSession(gateway, `Bearer ${gateway.daemon.token}`);

  for (const [label, authorization] of [
    ['no Authorization', ''],
    ['a wrong token', 'Bearer not-the-token'],
    ['a token one byte short', `Bearer ${gateway.daemon.token.slice(0, -1)}`],
    ['Basic', `Basic ${Buffer.from(`x:${gateway.daemon.token}`).toString('base64')}`],
  ] as const) {
    const headers = authorization === '' ? { authorization: '' } : { authorization };
    const init = await mcpPost(gateway, INIT, headers);
    expectUnauthenticated(t, init, `initialize with ${label}`);
    t.equal(init.sessionId, null, `${label}: no session`);
    // With a live session id: the id alone opens nothing.
    expectUnauthenticated(t, await mcpPost(gateway, LIST, { ...valid, ...headers }), `tools/list on a live session with ${label}`);
    expectUnauthenticated(t, await mcpPost(gateway, CALL, { ...valid, ...headers }), `tools/call on a live session with ${label}`);
  }
  const response = await fetch(`${gateway.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify(INIT) });
  t.equal(response.status, 401, 'a request with no Authorization header at all: 401');
  t.equal(response.headers.get('www-authenticate'), BEARER_CHALLENGE, 'with WWW-Authenticate: Bearer realm="coffer"');
  t.equal(response.headers.get('content-type'), 'application/json');
  for (const method of ['GET', 'DELETE']) {
    t.equal((await fetch(`${gateway.url}/mcp`, { method, headers: { 'mcp-session-id': valid['mcp-session-id']! } })).status, 401, `${method} with only the session id: 401`);
  }
  const sdk = new Client({ name: 'anonymous', version: '1' });
  await t.rejects(sdk.connect(mcpTransport(gateway.url, 'wrong')), 'the SDK client with a wrong token cannot connect');
  t.match(await mcpPost(gateway, CALL, valid), { status: 200, messages: [{ id: 3, result: {} }] }, 'the valid session still works');
  t.match(await mcpPost(gateway, CALL, { ...valid, authorization: `bearer ${gateway.daemon.token}` }), { status: 200 }, 'the scheme is case-insensitive');
});

t.test('a client token: works, survives a daemon restart, refused at once when revoked; stored only as its hash', async (t) => {
  const home = tempHome();
  let gateway = await startGateway({}, home);
  t.teardown(() => gateway.close());
  await gateway.addServer(stdioFixture('alpha'));
  const token = await addClient(gateway, 'ide');
  t.match(token, /^[A-Za-z0-9_-]{43}$/, '256 random bits, base64url');
  t.equal((await gateway.api('POST', '/clients', { name: 'ide' })).status, 409, 'a second client of that name: 409');
  t.equal((await gateway.api('POST', '/clients', { name: '../x' })).status, 422, 'a bad name: 422');
  const listed = await gateway.api('GET', '/clients');
  t.same(listed.body.clients.map((client: { name: string }) => client.name), ['ide']);
  t.notOk(JSON.stringify(listed.body).includes(hashToken(token)), 'the list shows no hash');

  const client = await gateway.client('ide', {}, token);
  t.match(await client.callTool({ name: 'alpha__echo', arguments: { x: 1 } }), { content: [{ type: 'text' }] }, 'the client token calls a tool');
  await client.close();

  // A real restart on the same home: the daemon token changes, the client token does not.
  const firstDaemonToken = gateway.daemon.token;
  await gateway.daemon.stop();
  const restarted = await startGateway({}, home);
  gateway = restarted;
  t.not(restarted.daemon.token, firstDaemonToken, 'the daemon token changed with the restart');
  await waitReady(restarted.api, 'alpha');
  const again = await restarted.client('ide-again', {}, token);
  t.match(await again.callTool({ name: 'alpha__echo', arguments: { x: 2 } }), { content: [{ type: 'text' }] }, 'the same client token works after the restart');
  const session = await openSession(restarted, `Bearer ${token}`);

  t.equal((await restarted.api('DELETE', '/clients/ide')).status, 204, 'revoked');
  expectUnauthenticated(t, await mcpPost(restarted, CALL, session), 'the revoked token on its open session');
  expectUnauthenticated(t, await mcpPost(restarted, INIT, { authorization: `Bearer ${token}` }), 'the revoked token on a new session');
  await t.rejects(again.callTool({ name: 'alpha__echo', arguments: { x: 3 } }), 'the SDK client of the revoked token is refused');
  t.equal((await restarted.api('DELETE', '/clients/ide')).status, 404, 'revoking twice: 404');

  const audit = await restarted.api('GET', '/audit?limit=100');
  const events = audit.body.entries.map((entry: { event_type: string }) => entry.event_type);
  t.ok(events.includes('client_added') && events.includes('client_revoked'), 'add and revoke are audited');
  const secondToken = await addClient(restarted, 'later');
  await restarted.daemon.stop();
  // Everything the daemon wrote on disk: the database (checkpointed at stop), logs, daemon.json.
  const files = [join(home, 'coffer.db'), ...readdirSync(join(home, 'logs'), { recursive: true, encoding: 'utf8' }).map((file) => join(home, 'logs', file)).filter((file) => statSync(file).isFile())];
  for (const secret of [token, secondToken]) {
    for (const file of files) t.notOk(readFileSync(file).includes(secret), `the token is not in ${file.slice(home.length)}`);
    t.notOk(JSON.stringify(audit.body).includes(secret), 'nor in the audit log');
  }
  t.ok(readFileSync(join(home, 'coffer.db')).includes(hashToken(secondToken)), 'the database holds the hash');
  gateway = await startGateway({}, home);
});

t.test('a session answers only the credential that opened it', async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  await gateway.addServer(stdioFixture('alpha'));
  const mine = await openSession(gateway, `Bearer ${gateway.daemon.token}`);
  const other = await addClient(gateway, 'other');
  const hijack = await mcpPost(gateway, CALL, { ...mine, authorization: `Bearer ${other}` });
  t.match(hijack, { status: 404, messages: [{ error: { code: -32001 } }] }, "another credential presenting the session's id: 404, as if unknown");
  t.equal((await fetch(`${gateway.url}/mcp`, { method: 'DELETE', headers: { ...mine, authorization: `Bearer ${other}` } })).status, 404, 'nor can it DELETE the session');
  const theirs = await openSession(gateway, `Bearer ${other}`);
  t.equal((await mcpPost(gateway, LIST, { ...theirs, authorization: `Bearer ${gateway.daemon.token}` })).status, 404, 'and the other way round');
  t.match(await mcpPost(gateway, CALL, mine), { status: 200, messages: [{ id: 3, result: {} }] }, 'the owner is served');
});

t.test("rotating the daemon's token ends the sessions opened with the old one", async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  await gateway.addServer(stdioFixture('alpha'));
  const old = await openSession(gateway, `Bearer ${gateway.daemon.token}`);
  t.equal((await mcpPost(gateway, LIST, old)).status, 200, 'served before');
  const rotated = await gateway.api('POST', '/daemon/rotate-token');
  const token = rotated.body.token as string;
  t.equal(rotated.status, 200);
  expectUnauthenticated(t, await mcpPost(gateway, LIST, old), 'the old token');
  // The new token is the daemon's credential too: only an ended session tells the stream opened with the old one is gone.
  t.match(await mcpPost(gateway, LIST, { ...old, authorization: `Bearer ${token}` }), { status: 404 }, 'the session opened with the old token is over');
  const fresh = await openSession(gateway, `Bearer ${token}`);
  t.equal((await mcpPost(gateway, LIST, fresh)).status, 200, 'a session with the new token is served');
});

t.test("a 2026-07-28 call parked for its client's answers ends when the credential goes (revoked, or the daemon's token rotated): the upstream call is given up at once, the old state refused", async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  // A connection per caller: each parked call is asked its own question whatever else is in flight.
  await gateway.addServer({ name: 'conf', transport: { type: 'stdio', command: process.execPath, args: [CONFORMANCE_FIXTURE, '--transport', 'stdio'] }, session_mode: 'per_session' });
  const call = (authorization: string, id: number, retry: Record<string, unknown> = {}) =>
    modernPost(gateway, 'tools/call', { name: 'conf__test_input_required_result_elicitation', arguments: {}, _meta: { [CAPABILITIES_KEY]: { elicitation: {} } }, ...retry }, { authorization }, id);
  const parked = async (authorization: string, id: number) => {
    const answer = await call(authorization, id);
    const result = (answer.messages.at(-1) as { result?: { resultType?: string; requestState?: string } }).result;
    t.equal(result?.resultType, 'input_required', 'the call waits for its client');
    return result!.requestState!;
  };
  // The call is recorded when it ends: a row is the upstream call given up, not left running until its state expires.
  const rows = async () => (await gateway.api('GET', '/invocations')).body.invocations as Array<{ key: string; status: string }>;
  const endedWithin = async (count: number) => waitFor('the parked call to end', async () => (await rows()).length >= count, 5_000).then(() => true, () => false);
  const inputResponses = { user_name: { action: 'accept', content: { name: 'Late' } } };

  const token = await addClient(gateway, 'parker');
  const state = await parked(`Bearer ${token}`, 1);
  t.equal((await gateway.api('DELETE', '/clients/parker')).status, 204);
  t.ok(await endedWithin(1), "revoking ends the client's parked call");
  t.match(await rows(), [{ key: 'test_input_required_result_elicitation', status: 'error' }]);
  expectUnauthenticated(t, await call(`Bearer ${token}`, 2, { inputResponses, requestState: state }), 'the retry with the revoked token');

  const daemonState = await parked(`Bearer ${gateway.daemon.token}`, 3);
  const rotated = (await gateway.api('POST', '/daemon/rotate-token')).body.token as string;
  t.ok(await endedWithin(2), "rotating the daemon's token ends the call parked with the old one");
  const retried = await call(`Bearer ${rotated}`, 4, { inputResponses, requestState: daemonState });
  t.match(retried.messages.at(-1), { error: { code: -32602, data: { code: 'REQUEST_STATE_INVALID' } } }, "the old token's state is not the new token's");
});

t.test('a credential revoked while its request body is still arriving is refused when the body is complete: no listen or call is opened with it', async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  const token = await addClient(gateway, 'uploader');
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'subscriptions/listen',
    params: { notifications: { toolsListChanged: true }, _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', [CAPABILITIES_KEY]: {} } },
  });
  const half = Math.floor(body.length / 2);
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'content-length': String(body.length), 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'subscriptions/listen', authorization: `Bearer ${token}` };
  const req = request(`${gateway.url}/mcp`, { method: 'POST', headers });
  const answered = new Promise<{ status: number; text: string }>((resolve, reject) => {
    req.on('error', reject);
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      // A listen's stream stays open: its first event is enough to tell it was opened.
      res.on('data', (chunk: string) => ((text += chunk), res.statusCode === 200 && resolve({ status: 200, text })));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
  });
  t.teardown(() => req.destroy());
  req.write(body.slice(0, half));
  await new Promise((resolve) => setTimeout(resolve, 100));
  t.equal((await gateway.api('DELETE', '/clients/uploader')).status, 204, 'revoked while the body is on its way');
  req.end(body.slice(half));
  const answer = await answered;
  t.equal(answer.status, 401, 'the request of the revoked credential is refused');
  t.match(JSON.parse(answer.text || '{}'), { error: { code: -32013, data: { code: 'UNAUTHENTICATED' } } });
});

t.test('a 2026-07-28 caller has no session: its calls carry the tag of its credential, one per client, never the credential', async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  await gateway.addServer(stdioFixture('alpha'));
  const other = await addClient(gateway, 'other');
  const call = (authorization: string) => modernPost(gateway, 'tools/call', { name: 'alpha__whoami', arguments: {} }, { authorization });
  for (const authorization of [`Bearer ${gateway.daemon.token}`, `Bearer ${gateway.daemon.token}`, `Bearer ${other}`]) t.equal((await call(authorization)).status, 200);
  const { body } = await gateway.api('GET', '/invocations');
  const sessions = (body.invocations as Array<{ session: string; at: string }>).map((row) => row.session);
  t.equal(sessions.length, 3);
  for (const tag of sessions) t.match(tag, /^[0-9a-f]{12}$/, 'a short opaque tag');
  t.equal(new Set(sessions).size, 2, "the daemon credential's two calls share a tag; the other client's call has its own");
  t.notOk(JSON.stringify(body).includes(other) || JSON.stringify(body).includes(gateway.daemon.token), 'no credential in the rows');
});

t.test('relayed request ids are unguessable; no session id in invocations, REST or admin WS events', async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  await gateway.addServer({ name: 'conf', transport: { type: 'stdio', command: process.execPath, args: [CONFORMANCE_FIXTURE, '--transport', 'stdio'] } });
  const admin = await connectAdmin({ port: gateway.daemon.port, token: gateway.daemon.token });
  t.teardown(() => admin.close());
  const events: CofferEvent[] = [];
  admin.onEvent((event) => events.push(event));

  const client = await gateway.client('elicited', { elicitation: {} });
  const ids: unknown[] = [];
  client.setRequestHandler(ElicitRequestSchema, async (_request, extra) => {
    ids.push(extra.requestId);
    return { action: 'accept', content: { username: 'u', email: 'u@example.test' } };
  });
  for (let i = 0; i < 2; i++) await client.callTool({ name: 'conf__test_elicitation', arguments: { message: `q${i}` } });
  t.equal(ids.length, 2);
  for (const id of ids) t.match(id, /^coffer-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/, 'a random UUID, not a counter');

  const sessionId = (client.transport as { sessionId?: string }).sessionId!;
  t.ok(sessionId, 'the client has a session id');
  const { body } = await gateway.api('GET', '/invocations');
  t.equal(body.invocations.length, 2);
  const tags = new Set(body.invocations.map((row: { session: string }) => row.session));
  t.equal(tags.size, 1, 'both calls carry the same tag');
  const [tag] = [...tags] as string[];
  t.match(tag, /^[0-9a-f]{12}$/, 'a short opaque tag');
  t.notOk(JSON.stringify(body).includes(sessionId), 'REST /invocations never names the session id');
  await waitFor('two invocation events', () => events.filter((event) => event.type === 'invocation').length === 2, 5_000);
  const published = events.filter((event) => event.type === 'invocation');
  t.same(published.map((event) => event.type === 'invocation' && event.invocation.session), [tag, tag], 'the admin WS publishes the tag');
  t.notOk(JSON.stringify(events).includes(sessionId), 'no admin WS event names the session id');
  await gateway.daemon.stop();
  t.notOk(readFileSync(join(gateway.home, 'coffer.db')).includes(sessionId), 'nor does the database');
});

t.test('--mcp-auth none: the documented opt-out lets anyone in and says so in the log', async (t) => {
  const gateway = await startGateway({ mcpAuth: 'none' });
  t.teardown(() => gateway.close());
  const init = await mcpPost(gateway, INIT, { authorization: '' });
  t.equal(init.status, 200, 'initialize without a credential: 200');
  const headers = { 'mcp-session-id': init.sessionId!, 'mcp-protocol-version': '2025-11-25', authorization: '' };
  t.match(await mcpPost(gateway, { jsonrpc: '2.0', id: 2, method: 'ping' }, headers), { status: 200, messages: [{ result: {} }] }, 'and the session is served');
  await gateway.daemon.stop();
  t.match(readFileSync(join(gateway.home, 'logs', 'daemon.log'), 'utf8'), /MCP AUTHENTICATION IS OFF/, 'the daemon log warns');
});

t.test('coffer client add|list|revoke and coffer mcp client-config', async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  await gateway.addServer(stdioFixture('alpha'));
  const added = await runCli(gateway.home, 'client', 'add', 'laptop');
  t.equal(added.code, EXIT.OK, added.stderr);
  const token = added.stdout.trim();
  t.match(token, /^[A-Za-z0-9_-]{43}$/, 'add prints the token alone on stdout');
  t.match(added.stderr, /shown only now/);
  t.equal((await runCli(gateway.home, 'client', 'add', 'laptop')).code, EXIT.CONFLICT, 'a taken name: exit 5');
  t.match((await runCli(gateway.home, 'client', 'list')).stdout, /^laptop +\d{4}-/m, 'list names it');

  const config = await runCli(gateway.home, 'mcp', 'client-config', 'vscode');
  t.equal(config.code, EXIT.OK, config.stderr);
  const snippet = JSON.parse(config.stdout);
  t.equal(snippet.servers.coffer.url, `${gateway.url}/mcp`, 'the snippet points at this daemon');
  const header = snippet.servers.coffer.headers.Authorization as string;
  const client = await gateway.client('vscode', {}, bearerToken(header));
  t.match(await client.callTool({ name: 'alpha__echo', arguments: {} }), { content: [{ type: 'text' }] }, 'its header opens /mcp');
  const again = await runCli(gateway.home, 'mcp', 'client-config', 'vscode');
  t.equal(again.code, EXIT.CONFLICT, 'a second config for the same client: exit 5');
  t.match(again.stderr, /--replace/, 'naming the way out');
  const replaced = await runCli(gateway.home, 'mcp', 'client-config', 'vscode', '--replace');
  t.equal(replaced.code, EXIT.OK, replaced.stderr);
  expectUnauthenticated(t, await mcpPost(gateway, INIT, { authorization: header }), 'the replaced token');

  t.equal((await runCli(gateway.home, 'client', 'revoke', 'laptop')).code, EXIT.OK);
  expectUnauthenticated(t, await mcpPost(gateway, INIT, { authorization: `Bearer ${token}` }), 'the revoked CLI token');
  t.equal((await runCli(gateway.home, 'client', 'revoke', 'laptop')).code, EXIT.NOT_FOUND, 'revoking an unknown client: exit 4');
});
