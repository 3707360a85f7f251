// The registry over REST: token on every management route, validation,
// conflicts, and changes that take effect on /mcp without a restart.
import t from 'tap';
import { startGateway } from './helpers/gateway.js';
import { MCP_HEADERS, mcpAuthHeader } from './helpers/mcp-post.js';
import { stdioFixture } from './fixtures/fixture-servers.js';

t.test('management routes need the token; status does not', async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  t.equal((await gateway.api('GET', '/daemon/status', undefined, null)).status, 200);
  for (const token of [null, 'wrong', `${gateway.daemon.token}x`]) {
    const answer = await gateway.api('GET', '/servers', undefined, token);
    t.equal(answer.status, 401, `token ${String(token)}`);
    t.equal(answer.body.error.code, 'UNAUTHENTICATED');
  }
  const viaHeader = await fetch(`${gateway.url}/api/v1/servers`, { headers: { 'x-coffer-token': gateway.daemon.token } });
  t.equal(viaHeader.status, 200, 'X-Coffer-Token works too');
  t.equal((await gateway.api('GET', '/nowhere')).body.error.code, 'RESOURCE_NOT_FOUND');
  t.equal((await gateway.api('PUT', '/servers')).status, 405);
});

t.test('register, list, show, remove; errors persist nothing', async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  const invalid = await gateway.api('POST', '/servers', { name: 'bad__name', transport: { type: 'http', url: 'ftp://x' } });
  t.equal(invalid.status, 422);
  t.equal(invalid.body.error.code, 'CONFIG_INVALID');
  const fields = invalid.body.error.details.errors.map((error: { field: string }) => error.field);
  t.ok(fields.includes('name') && fields.includes('transport.url'), `every problem named: ${fields.join(', ')}`);
  t.equal((await gateway.api('POST', '/servers', 'not an object')).status, 422);
  const raw = await fetch(`${gateway.url}/api/v1/servers`, { method: 'POST', headers: { authorization: `Bearer ${gateway.daemon.token}` }, body: '{oops' });
  t.equal(raw.status, 400, 'malformed JSON is 400');
  t.same((await gateway.api('GET', '/servers')).body, { servers: [] }, 'nothing persisted');

  const config = { ...stdioFixture('files'), transport: { ...stdioFixture('files').transport, env: { API_KEY: 'sk-planted-secret' } } };
  const created = await gateway.api('POST', '/servers', config);
  t.equal(created.status, 201);
  t.equal(created.body.name, 'files');
  t.equal(created.body.transport.env.API_KEY, '[redacted]', 'secret values are never echoed');
  t.equal((await gateway.api('POST', '/servers', config)).status, 409, 'duplicate name');

  const listed = await gateway.api('GET', '/servers');
  t.equal(listed.body.servers.length, 1);
  t.ok(['connecting', 'ready'].includes(listed.body.servers[0].health.state));
  t.equal((await gateway.api('GET', '/servers/files')).body.name, 'files');
  t.equal((await gateway.api('GET', '/servers/nope')).status, 404);
  t.equal((await gateway.api('DELETE', '/servers/nope')).status, 404);
});

t.test('adding and removing a server takes effect on /mcp without a restart', async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  const client = await gateway.client();
  t.same((await client.listTools()).tools, [], 'no servers, no tools');
  await gateway.addServer(stdioFixture('live'));
  t.ok((await client.listTools()).tools.some((tool) => tool.name === 'live__echo'), 'listed after add');
  const removed = await gateway.api('DELETE', '/servers/live');
  t.equal(removed.status, 204);
  t.same((await client.listTools()).tools, [], 'gone after remove');
  await t.rejects(client.callTool({ name: 'live__echo', arguments: {} }), /unknown tool/);
});

t.test('a namespace change takes effect on /mcp at once and keeps the upstream process (the router\'s business, not the actor\'s)', async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  await gateway.addServer(stdioFixture('ns'));
  const client = await gateway.client();
  const pidOf = async (name: string): Promise<number> => {
    const answer = (await client.callTool({ name, arguments: {} })) as { content: Array<{ text: string }> };
    return JSON.parse(answer.content[0]!.text).pid;
  };
  const before = await pidOf('ns__whoami');
  t.equal((await gateway.api('PATCH', '/servers/ns', { namespace: 'renamed' })).status, 200);
  const names = (await client.listTools()).tools.map((tool) => tool.name);
  t.ok(names.includes('renamed__whoami') && !names.some((name) => name.startsWith('ns__')), 'listed under the new prefix at once');
  t.equal(await pidOf('renamed__whoami'), before, 'the same upstream process answers: no restart');
  await t.rejects(client.callTool({ name: 'ns__whoami', arguments: {} }), /unknown tool/, 'the old name is gone');
});

t.test('/mcp refuses a foreign Host or Origin (DNS rebinding)', async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  const init = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } } });
  const headers = { ...MCP_HEADERS, ...mcpAuthHeader(gateway) };
  const { request } = await import('node:http');
  const send = (extra: Record<string, string>) =>
    new Promise<number>((resolve, reject) => {
      const req = request(`${gateway.url}/mcp`, { method: 'POST', headers: { ...headers, ...extra } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end(init);
    });
  t.equal(await send({ host: 'evil.example:80' }), 403, 'foreign Host');
  t.equal(await send({ origin: 'http://evil.example' }), 403, 'foreign Origin');
  t.equal(await send({ host: `localhost:${gateway.daemon.port}` }), 200, 'localhost is fine');
  t.equal(await send({}), 200, 'no Origin is fine');
  t.equal(await send({ 'mcp-session-id': 'no-such-session' }), 404, 'unknown session');
});

t.test('the audit names who changed what: X-Coffer-Actor cli/ui, anything else is api', async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  const post = (name: string, actor: string | null) =>
    fetch(`${gateway.url}/api/v1/servers`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gateway.daemon.token}`, 'content-type': 'application/json', ...(actor ? { 'x-coffer-actor': actor } : {}) },
      body: JSON.stringify({ ...stdioFixture(name), enabled: false }),
    });
  t.equal((await post('viacli', 'cli')).status, 201);
  t.equal((await post('viaui', 'ui')).status, 201);
  t.equal((await post('forged', 'system')).status, 201);
  t.equal((await post('plain', null)).status, 201);
  const { entries } = (await gateway.api('GET', '/audit?event_type=server_added')).body;
  const actorOf = (server: string) => entries.find((entry: any) => entry.server === server)?.actor;
  t.same([actorOf('viacli'), actorOf('viaui'), actorOf('forged'), actorOf('plain')], ['cli', 'ui', 'api', 'api']);
  t.notOk(JSON.stringify(entries).includes('sk-'), 'no secret in audit payloads');
});

t.test('every routed call is in the invocation log, without its arguments', async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  await gateway.addServer(stdioFixture('logged'));
  const client = await gateway.client();
  await client.callTool({ name: 'logged__echo', arguments: { password: 'sk-planted-in-arguments' } });
  await gateway.api('POST', '/servers/logged/capabilities/tool/disable', { key: 'whoami' });
  await client.callTool({ name: 'logged__whoami', arguments: {} }).catch(() => undefined);
  // Read your own calls: the answer includes calls made a moment ago, still waiting for their batch on the main thread.
  const { invocations } = (await gateway.api('GET', '/invocations?server=logged')).body;
  t.equal(invocations.length, 2, 'both calls, at once');
  t.match(invocations.find((row: any) => row.key === 'echo'), { server: 'logged', kind: 'tool', status: 'ok' });
  t.match(invocations.find((row: any) => row.key === 'whoami'), { status: 'denied', error_code: -32000 });
  t.notOk(JSON.stringify(invocations).includes('sk-planted'), 'arguments are never recorded');
  const retention = await gateway.api('GET', '/retention');
  t.same(retention.body.policies.map((policy: any) => policy.table).sort(), ['audit', 'invocations']);
});

t.test('servers registered or renamed at the same moment never end up sharing a prefix', async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  const added = await Promise.all(['first', 'second'].map((name) => gateway.api('POST', '/servers', { ...stdioFixture(name), namespace: 'shared', enabled: false })));
  t.same(added.map((answer) => answer.status).sort(), [201, 422], 'one registered, the other refused: its prefix is taken');
  t.equal((await gateway.api('GET', '/servers')).body.servers.length, 1, 'one server persisted');

  for (const name of ['third', 'fourth']) t.equal((await gateway.api('POST', '/servers', { ...stdioFixture(name), enabled: false })).status, 201);
  const renamed = await Promise.all(['third', 'fourth'].map((name) => gateway.api('PATCH', `/servers/${name}`, { namespace: 'target' })));
  t.same(renamed.map((answer) => answer.status).sort(), [200, 422], 'one renamed, the other refused');
  const prefixes = (await gateway.api('GET', '/servers')).body.servers.map((server: { name: string; namespace: string }) => server.namespace || server.name);
  t.equal(new Set(prefixes).size, prefixes.length, `every prefix its own: ${prefixes.join(', ')}`);
});

t.test('a server removed while an update restarts it stays removed: no actor is left running for it', async (t) => {
  const gateway = await startGateway({ metrics: 'token' });
  t.teardown(() => gateway.close());
  const names = ['race0', 'race1', 'race2', 'race3'];
  for (const name of names) await gateway.addServer(stdioFixture(name));
  // Each update changes the command line (a restart); its remove comes a little later each time, landing while the old actor stops.
  await Promise.all(
    names.map(async (name, index) => {
      const transport = stdioFixture(name).transport as { args: string[] };
      const updated = gateway.api('PATCH', `/servers/${name}`, { transport: { ...transport, args: [...transport.args, '--restarted'] } });
      await new Promise((resolve) => setTimeout(resolve, index * 15));
      const removed = await gateway.api('DELETE', `/servers/${name}`);
      t.equal(removed.status, 204, `${name} removed`);
      await updated;
    }),
  );
  t.same((await gateway.api('GET', '/servers')).body.servers, [], 'no server registered');
  const scrape = await fetch(`${gateway.url}/metrics`, { headers: { authorization: `Bearer ${gateway.daemon.token}` } });
  const ghosts = (await scrape.text()).split('\n').filter((line) => line.startsWith('coffer_upstream_state{'));
  t.same(ghosts, [], 'no actor of a removed server');
});
