// The data plane under faults, through a real SDK client on /mcp: a hung
// upstream, one killed mid-call, one that changes its tools, one that comes up
// late; progress and cancellation across the gateway.
import { readFileSync } from 'node:fs';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { freePort } from '../bench/free-port.js';
import { upstreamLogDir } from '../src/paths.js';
import { startGateway, waitFor, type Gateway } from './helpers/gateway.js';
import { sleep } from './helpers/wait.js';
import { networkConfig, startNetworkFixture, stdioFixture } from './fixtures/fixture-servers.js';
import { mcpPost } from './helpers/mcp-post.js';

const text = (result: any): any => JSON.parse(result.content[0].text);

/** A gateway with the stdio fixture 'worker' and a raw 2025-11-25 session on it: the headers that use it. */
async function workerSession(t: Test): Promise<{ gateway: Gateway; headers: Record<string, string> }> {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  await gateway.addServer(stdioFixture('worker'));
  const init = await mcpPost(gateway, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'canceller', version: '1' } } });
  const headers = { 'mcp-session-id': init.sessionId!, 'mcp-protocol-version': '2025-11-25' };
  await mcpPost(gateway, { jsonrpc: '2.0', method: 'notifications/initialized' }, headers);
  return { gateway, headers };
}

t.test('two upstreams with the same tool: both listed, each call reaches its own', async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  await gateway.addServer(stdioFixture('alpha'));
  await gateway.addServer(stdioFixture('beta'));
  const client = await gateway.client();
  const names = (await client.listTools()).tools.map((tool) => tool.name);
  t.ok(names.includes('alpha__whoami') && names.includes('beta__whoami'));
  t.equal(text(await client.callTool({ name: 'alpha__whoami', arguments: {} })).name, 'alpha');
  t.equal(text(await client.callTool({ name: 'beta__whoami', arguments: {} })).name, 'beta');
  const echoed = await client.callTool({ name: 'beta__echo', arguments: { a: [1, 2], b: 'x' } });
  t.same(echoed.structuredContent, { a: [1, 2], b: 'x' }, 'arguments reach the upstream unchanged');
  t.same((echoed as any).fixture_extra, { kept: true }, 'unknown result fields pass through');
});

t.test('a hung upstream delays tools/list by its deadline at most; others unaffected', async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  await gateway.addServer(stdioFixture('good'));
  await gateway.addServer({ ...stdioFixture('stuck', ['--hang'], { list_deadline_ms: 400 }) });
  const client = await gateway.client();

  const started = Date.now();
  const { tools } = await client.listTools();
  const elapsed = Date.now() - started;
  t.ok(elapsed < 400 + 4_000, `tools/list answered in ${elapsed} ms (deadline 400 ms)`);
  t.ok(tools.some((tool) => tool.name === 'good__echo'), 'healthy upstream listed');
  t.notOk(tools.some((tool) => tool.name.startsWith('stuck__')), 'hung upstream left out');

  const status = await gateway.api('GET', '/daemon/status');
  t.ok(status.body.upstreams.degraded >= 1, 'the hung upstream counts as degraded');
  t.equal((await gateway.api('GET', '/servers/stuck')).body.health.degraded, true, 'and is named');

  // A second list while it still hangs: same bound; calls elsewhere stay fast.
  const [second, call] = await Promise.all([
    (async () => {
      const at = Date.now();
      await client.listTools();
      return Date.now() - at;
    })(),
    (async () => {
      const at = Date.now();
      await client.callTool({ name: 'good__whoami', arguments: {} });
      return Date.now() - at;
    })(),
  ]);
  t.ok(second < 400 + 1_000, `second list ${second} ms`);
  t.ok(call < 300, `call to a healthy upstream took ${call} ms while another hangs`);
});

t.test('an upstream killed mid-call: the call fails promptly, the next one succeeds', async (t) => {
  const gateway = await startGateway({ tuning: { backoffInitialMs: 50 } });
  t.teardown(() => gateway.close());
  await gateway.addServer(stdioFixture('fragile'));
  const client = await gateway.client();
  const { pid } = text(await client.callTool({ name: 'fragile__whoami', arguments: {} }));

  const inflight = client.callTool({ name: 'fragile__slow', arguments: { ms: 30_000, steps: 1 } });
  await new Promise((resolve) => setTimeout(resolve, 300));
  const killedAt = Date.now();
  process.kill(pid, 'SIGKILL');
  const error = await inflight.then(
    () => null,
    (caught: Error & { code?: number; data?: any }) => caught,
  );
  t.ok(error, 'the in-flight call is answered with an error');
  t.equal(error?.code, -32010);
  t.equal(error?.data?.code, 'UPSTREAM_UNAVAILABLE');
  t.ok(Date.now() - killedAt < 3_000, `error within ${Date.now() - killedAt} ms of the kill`);

  const again = await waitFor('a call after reconnect', async () => {
    try {
      return text(await client.callTool({ name: 'fragile__whoami', arguments: {} }));
    } catch {
      return null;
    }
  });
  t.not(again.pid, pid, 'a new upstream process serves the next call');

  const crash = await client.callTool({ name: 'fragile__crash', arguments: {} }).then(
    () => null,
    (caught: Error & { code?: number }) => caught,
  );
  t.equal(crash?.code, -32010, 'an upstream that exits mid-call gives an error, not a hang');
});

t.test('upstream list_changed reaches the client and the next list shows the change', async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  await gateway.addServer(stdioFixture('shifty'));
  const client = await gateway.client();
  const before = (await client.listTools()).tools.map((tool) => tool.name);
  let notified = 0;
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    notified++;
  });
  await client.callTool({ name: 'shifty__mutate', arguments: { kind: 'tools' } });
  await waitFor('tools/list_changed at the client', () => notified > 0);
  const after = (await client.listTools()).tools.map((tool) => tool.name);
  const added = after.filter((name) => !before.includes(name));
  t.equal(added.length, 1, `one new tool: ${added.join(', ')}`);
  t.match(added[0], /^shifty__/);
});

t.test('an upstream that comes up late: sessions are told to list again', async (t) => {
  const port = await freePort();
  const gateway = await startGateway({ tuning: { backoffInitialMs: 100, backoffMaxMs: 300 } });
  let fixture: Awaited<ReturnType<typeof startNetworkFixture>> | undefined;
  t.teardown(async () => {
    await gateway.close();
    await fixture?.kill();
  });
  const created = await gateway.api('POST', '/servers', networkConfig('late', 'http', `http://127.0.0.1:${port}/mcp`, { connect_ms: 1_000 }));
  t.equal(created.status, 201);
  const client = await gateway.client();
  let notified = 0;
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    notified++;
  });
  t.notOk((await client.listTools()).tools.some((tool) => tool.name.startsWith('late__')), 'not listed while down');
  fixture = await startNetworkFixture('http', ['--name', 'late', '--port', String(port)]);
  await waitFor('tools/list_changed once it is up', () => notified > 0, 20_000);
  t.ok((await client.listTools()).tools.some((tool) => tool.name === 'late__whoami'), 'listed once up');
});

t.test('progress reaches the calling client; a cancel reaches the upstream', async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  await gateway.addServer(stdioFixture('worker'));
  const client = await gateway.client();
  const progress: number[] = [];
  const result = await client.callTool({ name: 'worker__slow', arguments: { ms: 300, steps: 3 } }, undefined, {
    onprogress: (update) => progress.push(update.progress),
  });
  t.ok(result.content, 'the call answers');
  t.ok(progress.length >= 2, `progress updates received: ${progress.join(',')}`);

  const controller = new AbortController();
  const cancelled = client.callTool({ name: 'worker__slow', arguments: { ms: 20_000, steps: 2 } }, undefined, { signal: controller.signal });
  await new Promise((resolve) => setTimeout(resolve, 300));
  controller.abort('user gave up');
  await t.rejects(cancelled);
  await waitFor('the upstream to see notifications/cancelled', () => readFileSync(join(upstreamLogDir(gateway.home), 'worker.log'), 'utf8').includes('cancelled slow'));
});

t.test('a notifications/cancelled whose reason is not a string still cancels the call (202 and an answer), as a string one does', async (t) => {
  const { gateway, headers } = await workerSession(t);
  const call = mcpPost(gateway, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'worker__slow', arguments: { ms: 20_000, steps: 40 } } }, headers);
  await new Promise((resolve) => setTimeout(resolve, 500));
  // JSON can make an object that String() cannot convert: its toString is not a function.
  const cancel = await mcpPost(gateway, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 2, reason: { toString: 'not a function' } } }, headers);
  t.equal(cancel.status, 202, `the cancel is taken: ${cancel.text}`);
  const started = Date.now();
  const answer = await call;
  t.ok(Date.now() - started < 10_000, 'the call ends once cancelled, not at its own pace');
  t.equal(answer.messages[0]?.id, 2, 'the call is answered');
  await waitFor('the upstream to see notifications/cancelled', () => readFileSync(join(upstreamLogDir(gateway.home), 'worker.log'), 'utf8').includes('cancelled slow'));
});

t.test('a call cancelled before coffer has sent it upstream is not sent: a batch of the call and its cancel ends at once', async (t) => {
  const { gateway, headers } = await workerSession(t);
  const started = Date.now();
  const answer = await mcpPost(
    gateway,
    [
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'worker__slow', arguments: { ms: 8_000, steps: 2 } } },
      { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 2, reason: 'changed my mind' } },
    ],
    headers,
  );
  t.ok(Date.now() - started < 4_000, `answered in ${Date.now() - started} ms, not after the 8 s call ran`);
  t.match(answer.messages, [{ id: 2, error: { code: -32800 } }], 'the call is answered as cancelled');
});

t.test('merged lists paginate with cursors', async (t) => {
  const gateway = await startGateway({ pageSize: 3 });
  t.teardown(() => gateway.close());
  await gateway.addServer(stdioFixture('one'));
  await gateway.addServer(stdioFixture('two'));
  const client = await gateway.client();
  const first = await client.listTools();
  t.equal(first.tools.length, 3);
  t.ok(first.nextCursor, 'a cursor to the next page');
  const all = [...first.tools];
  let cursor = first.nextCursor;
  while (cursor) {
    const page = await client.listTools({ cursor });
    all.push(...page.tools);
    cursor = page.nextCursor;
  }
  const names = all.map((tool) => tool.name);
  t.equal(new Set(names).size, names.length, 'no tool twice');
  t.ok(names.includes('one__echo') && names.includes('two__stats'));
  await t.rejects(client.listTools({ cursor: 'bogus' }), /invalid cursor/);
});

t.test('a server disabled or removed while its actor waits in backoff, or while it connects, stays stopped: no attempt after, shown disabled', async (t) => {
  /** A TCP upstream that counts its connections: `hangUp` false holds each open and silent (a connect in progress), true hangs up at once (a failed attempt). */
  const upstream = async (hangUp: boolean) => {
    const sockets = new Set<Socket>();
    let connections = 0;
    const server = createNetServer((socket) => {
      connections += 1;
      if (hangUp) return void socket.destroy();
      sockets.add(socket);
      // Read (and drop) what comes, so the client's end is seen.
      socket.resume();
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    t.teardown(() => {
      for (const socket of sockets) socket.destroy();
      server.close();
    });
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, connections: () => connections, open: () => sockets.size };
  };
  const gateway = await startGateway({ tuning: { backoffInitialMs: 200, backoffMaxMs: 400, crashLoopLimit: 100 } });
  t.teardown(() => gateway.close());
  const health = async (name: string) => (await gateway.api('GET', `/servers/${name}`)).body?.health;

  const failing = await upstream(true);
  const silent = await upstream(false);
  for (const name of ['waiting', 'removed']) t.equal((await gateway.api('POST', '/servers', networkConfig(name, 'http', failing.url, { connect_ms: 2_000 }))).status, 201);
  t.equal((await gateway.api('POST', '/servers', networkConfig('connecting', 'http', silent.url, { connect_ms: 20_000 }))).status, 201);
  await waitFor('both in backoff', async () => (await health('waiting'))?.state === 'backoff' && (await health('removed'))?.state === 'backoff', 20_000);
  await waitFor('a connect under way', () => silent.open() > 0, 20_000);

  t.equal((await gateway.api('POST', '/servers/waiting/disable')).body?.health?.state, 'disabled', 'disabled in backoff');
  t.equal((await gateway.api('POST', '/servers/connecting/disable')).body?.health?.state, 'disabled', 'disabled while connecting');
  t.equal((await gateway.api('DELETE', '/servers/removed')).status, 204, 'removed in backoff');
  const failedBefore = failing.connections();
  const silentBefore = silent.connections();
  // Several backoff rounds (at most 400 ms each) and a connect's worth of time.
  await sleep(2_500);
  t.equal(failing.connections(), failedBefore, 'no attempt after the disable or the removal');
  t.equal(silent.connections(), silentBefore, 'no new connect after the disable');
  t.equal(silent.open(), 0, 'the connect under way was closed');
  t.equal((await health('waiting'))?.state, 'disabled');
  t.equal((await health('connecting'))?.state, 'disabled');
  t.equal((await gateway.api('GET', '/servers/removed')).status, 404);
});
