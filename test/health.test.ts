// /healthz and /readyz over real HTTP: liveness answers at once without a
// token; readiness follows a real upstream that hangs and recovers (switched
// through its fault file), names it and says why, and `coffer daemon status`
// shows the same.
import { request, Agent } from 'node:http';
import t from 'tap';
import { startGateway, tempHome, waitFor } from './helpers/gateway.js';
import { runCli } from './helpers/cli.js';
import { faultSwitch, stdioFixture } from './fixtures/fixture-servers.js';

async function get(url: string, token?: string): Promise<{ status: number; body: any }> {
  const response = await fetch(url, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  return { status: response.status, body: await response.json() };
}

/** One GET on a kept-alive connection, timed from the request to the last byte. */
function timedGet(agent: Agent, port: number, path: string): Promise<{ ms: number; body: string }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    request({ host: '127.0.0.1', port, path, agent }, (res) => {
      let body = '';
      res.on('data', (chunk) => (body += chunk));
      res.on('end', () => resolve({ ms: performance.now() - started, body }));
    })
      .on('error', reject)
      .end();
  });
}

t.test('/healthz: no token, stable body, answered at once', async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  t.teardown(() => agent.destroy());
  const times: number[] = [];
  for (let i = 0; i < 200; i++) {
    const { ms, body } = await timedGet(agent, gateway.daemon.port, '/healthz');
    t.equal(body, '{"status":"ok"}');
    times.push(ms);
  }
  times.sort((a, b) => a - b);
  const median = times[100]!;
  // Client, loopback and server together; the server's part is one fixed write. (Anything that waited
  // on an actor or the database would take tens of milliseconds; the bound leaves room for a loaded machine.)
  t.ok(median < 5, `median round trip ${median.toFixed(3)} ms`);
});

t.test('/readyz: 503 naming a hung upstream, 200 once it answers again; daemon status agrees', async (t) => {
  const gateway = await startGateway({}, tempHome());
  t.teardown(() => gateway.close());
  const fault = faultSwitch(gateway.home);
  await gateway.addServer(stdioFixture('good'));
  await gateway.addServer(stdioFixture('flaky', fault.args, { list_deadline_ms: 300, request_ms: 1_000 }));
  const readyz = (token?: string) => get(`${gateway.url}/readyz`, token);

  t.match(await readyz(), { status: 200, body: { status: 'ready', db_writer: 'up', not_ready: [], upstreams: { enabled: 2, ready: 2 } } });

  await fault.set({ fault: 'hang' });
  const client = await gateway.client();
  const { tools } = await client.listTools();
  t.notOk(tools.some((tool) => tool.name.startsWith('flaky__')), 'the hung upstream is left out');

  const hung = await readyz();
  t.equal(hung.status, 503);
  t.match(hung.body, { status: 'not_ready', db_writer: 'up', upstreams: { enabled: 2, ready: 1 } });
  t.match(hung.body.not_ready, [{ server: 'flaky', state: 'ready', degraded: true, ready: false, reason: /left out of tools lists/ }]);
  t.notOk('detail' in hung.body.not_ready[0], 'no upstream text without the token');
  t.match((await readyz(gateway.daemon.token)).body.not_ready[0].detail, /no answer within 300 ms/, 'the token holder sees the detail');

  const status = await runCli(gateway.home, 'daemon', 'status', '--json');
  t.equal(status.code, 0, status.stderr);
  t.same(JSON.parse(status.stdout).readiness, (await readyz(gateway.daemon.token)).body, '`coffer daemon status --json` shows the same readiness');
  const human = await runCli(gateway.home, 'daemon', 'status');
  t.match(human.stdout, /readiness:\s+not ready/);
  t.match(human.stdout, /flaky:\s+left out of tools lists until it answers again: no answer within 300 ms/);

  await fault.set({});
  await waitFor('readyz 200 again', async () => {
    await client.listTools();
    return (await readyz()).status === 200;
  }, 15_000, 200);
  t.match(await readyz(), { status: 200, body: { status: 'ready', not_ready: [] } });
});

t.test("/readyz: an upstream's list error reaches the detail bounded, its controls escaped", async (t) => {
  const gateway = await startGateway({}, tempHome());
  t.teardown(() => gateway.close());
  const fault = faultSwitch(gateway.home);
  await gateway.addServer(stdioFixture('loud', fault.args));
  await fault.set({ fault: 'error-text' });
  const client = await gateway.client();
  await client.listTools();
  const [entry] = (await get(`${gateway.url}/readyz`, gateway.daemon.token)).body.not_ready as { server: string; detail: string }[];
  t.equal(entry?.server, 'loud');
  t.ok(entry!.detail.length < 2_300, `the detail is cut (${entry!.detail.length} characters)`);
  t.notMatch(entry!.detail, /[\u0000-\u001f\u007f]/, 'no control character in it');
  t.match(entry!.detail, '\\x1b[31mxxx', 'the escape is shown, not obeyed');
});

t.test('/readyz while an upstream connects: not ready, with its state', async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  await gateway.api('POST', '/servers', stdioFixture('late', ['--garbage'], { connect_ms: 20_000 }));
  const answer = await get(`${gateway.url}/readyz`);
  t.equal(answer.status, 503);
  t.match(answer.body.not_ready, [{ server: 'late', state: 'connecting', ready: false, reason: 'connecting' }]);
});
