// What an upstream sends cannot kill or hang the daemon: values nested 1k…1M
// levels deep (a call result, one list item, a notification, a server→client
// request) fail only that result or item with a stable code, and everything
// else keeps working; a forward whose answer is lost between the threads still
// ends; concurrent maximum-size calls are refused past the in-flight cap
// instead of killing the actor.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { MAX_LIST_ITEMS } from '../workers/actor/limits.js';
import { MAX_DEPTH } from '../src/protocol/message-limit.js';
import { DIST_ROOT } from '../src/paths.js';
import { faultSwitch, networkConfig, spawnHello, startNetworkFixture, stdioFixture } from './fixtures/fixture-servers.js';
import { startActor } from './fixtures/actor-harness.js';
import { startGateway, tempHome, waitFor, type Gateway } from './helpers/gateway.js';

const DEPTHS = [1_000, 5_000, 12_000, 100_000, 1_000_000];
const CALL_TIMEOUT = { timeout: 60_000 };

/** The call's JSON-RPC error (data.code and message), or 'result'. */
async function outcome(client: Client, name: string, args: Record<string, unknown> = {}): Promise<string> {
  try {
    await client.callTool({ name, arguments: args }, undefined, CALL_TIMEOUT);
    return 'result';
  } catch (error) {
    const { code, data } = error as { code?: number; data?: { code?: string } };
    return `${code} ${data?.code ?? String(error)}`;
  }
}

let gateway: Gateway;
t.before(async () => {
  gateway = await startGateway();
});
t.teardown(() => gateway?.close());

t.test('a deep call result fails that call with UPSTREAM_RESPONSE_INVALID; the upstream keeps working', async (t) => {
  const control = faultSwitch(tempHome('coffer-deep-'), {});
  await gateway.addServer(stdioFixture('res', control.args));
  const client = await gateway.client('deep-results');
  await control.set({ fault: 'deep', deep: 'result', depth: MAX_DEPTH - 2 });
  t.equal(await outcome(client, 'res__echo'), 'result', `a result ${MAX_DEPTH} levels deep passes`);
  for (const depth of DEPTHS) {
    await control.set({ fault: 'deep', deep: 'result', depth });
    t.equal(await outcome(client, 'res__echo'), '-32011 UPSTREAM_RESPONSE_INVALID', `depth ${depth}: that call fails with a clear code`);
    await control.set({});
    t.equal(await outcome(client, 'res__echo', { after: depth }), 'result', `depth ${depth}: the next call works`);
  }
});

t.test('a deep list item is dropped from its list, not the list; a list too deep to parse fails alone', async (t) => {
  for (const depth of DEPTHS) {
    const control = faultSwitch(tempHome('coffer-deep-'), { fault: 'deep', deep: 'list', depth });
    await gateway.addServer(stdioFixture(`l${depth}`, [...control.args, '--tools', 'echo']));
  }
  const client = await gateway.client('deep-lists');
  const names = new Set((await client.listTools()).tools.map((tool) => tool.name));
  for (const depth of DEPTHS.filter((depth) => depth <= 100_000)) {
    t.ok(names.has(`l${depth}__echo`), `depth ${depth}: the upstream's other tools are listed`);
    t.notOk(names.has(`l${depth}__deep`), `depth ${depth}: the deep tool is not`);
    const dropped = `tools: item 1 (deep) nests deeper than ${MAX_DEPTH} levels and was dropped`;
    t.match(await gateway.actorLog(`l${depth}`, dropped), dropped, `depth ${depth}: the log says why`);
  }
  t.notOk(names.has('l1000000__echo'), 'a list 1M levels deep is refused whole (never parsed)');
  const refused = `the upstream answer nests deeper than ${MAX_DEPTH} levels and was refused`;
  t.match(await gateway.actorLog('l1000000', refused), refused, 'the log says why');
  t.equal(await outcome(client, 'l1000__echo'), 'result', 'calls still work');
  t.ok((await gateway.client('after-lists')).listTools(), 'a new client lists again');
});

t.test('a list of small pages that holds more than one message may in all is refused; the upstream keeps working', async (t) => {
  const control = faultSwitch(tempHome('coffer-pages-'), { fault: 'big', list: true, mb: 2, items: 40 });
  await gateway.addServer(stdioFixture('pages', [...control.args, '--page-size', '1', '--tools', 'echo']));
  const client = await gateway.client('paged-lists');
  t.notOk((await client.listTools()).tools.some((tool) => tool.name.startsWith('pages__')), 'its list is refused whole');
  const refused = 'tools/list pages hold more than 64 MB of text in all';
  t.match(await gateway.actorLog('pages', refused), refused, 'the log says why');
  t.equal(await outcome(client, 'pages__echo'), 'result', 'calls still work: the actor lives');
  await control.set({});
  t.ok(await waitFor('a list that fits', async () => (await client.listTools()).tools.some((tool) => tool.name === 'pages__echo'), 30_000, 500), 'once the upstream answers a list that fits, it is listed');
});

t.test('a list of more items than coffer keeps switches for is refused whole, and no switch is made', async (t) => {
  const host = await spawnHello<{ port: number }>(join(DIST_ROOT, 'bench', 'synthetic', 'http-host.js'), ['--tools', String(MAX_LIST_ITEMS + 1)]);
  t.teardown(host.kill);
  await gateway.addServer({ name: 'crowd', transport: { type: 'http', url: `http://127.0.0.1:${host.hello.port}/s/0/mcp` }, timeouts: { request_ms: 60_000 } });
  const client = await gateway.client('crowded-lists');
  t.notOk((await client.listTools({}, CALL_TIMEOUT)).tools.some((tool) => tool.name.startsWith('crowd__')), 'its list is refused whole');
  const refused = `tools/list lists more than ${MAX_LIST_ITEMS} items in all`;
  t.match(await gateway.actorLog('crowd', refused), refused, 'the log says why');
  const view = await gateway.api('GET', '/servers/crowd/capabilities');
  t.match(view, { status: 503, body: { error: { code: 'UPSTREAM_UNAVAILABLE', details: { known: [] } } } }, 'the management view says it could not load, and no switch was made for any of them');
});

t.test('deep notifications and server→client requests are refused; the call they came with is answered', async (t) => {
  const control = faultSwitch(tempHome('coffer-deep-'), {});
  await gateway.addServer(stdioFixture('msgs', control.args));
  const client = await gateway.client('deep-messages', { sampling: {} });
  for (const deep of ['notification', 'request'] as const) {
    for (const depth of DEPTHS) {
      await control.set({ fault: 'deep', deep, depth });
      t.equal(await outcome(client, 'msgs__echo', { depth }), 'result', `${deep} ${depth} levels deep: the call is answered`);
    }
  }
  // The last request's note: the deepest one, past the parse limit.
  const log = await gateway.actorLog('msgs', /sampling\/createMessage nest deeper[^]*nests deeper than 200000 levels/);
  t.match(log, `notifications/message: params nest deeper than ${MAX_DEPTH} levels, dropped`);
  t.match(log, `the params of sampling/createMessage nest deeper than ${MAX_DEPTH} levels`);
  t.match(log, 'an upstream message nests deeper than 200000 levels and was refused', 'past the parse limit: refused unparsed');
});

t.test('a forward whose answer is lost between the threads still ends, with UPSTREAM_TIMEOUT', async (t) => {
  const actor = startActor(t, stdioFixture('lost', [], { connect_ms: 10_000, request_ms: 500 }));
  await actor.waitForState('ready');
  // Every answer from the worker now goes nowhere, as one that fails to deserialise does.
  const calls = (actor.handle as unknown as { calls: NodeJS.EventEmitter }).calls;
  calls.removeAllListeners('message');
  const started = Date.now();
  const answer = await actor.handle.forward({ id: 'f1', method: 'tools/call', params: { name: 'echo', arguments: {} }, progress: false });
  t.match(answer, { ok: false, error: { code: -32001, data: { code: 'UPSTREAM_TIMEOUT', server: 'lost' } } });
  t.ok(Date.now() - started < 20_000, `settled by the main side's own bound after ${Date.now() - started} ms`);
});

t.test('four concurrent 60 MB calls: refused past the in-flight cap with UPSTREAM_BUSY, nothing dies', async (t) => {
  // Over HTTP: the SDK's stdio server joins a long line chunk by chunk, quadratically (minutes for 60 MB).
  const upstream = await startNetworkFixture('http', ['--name', 'huge', '--tools', 'echo,whoami']);
  t.teardown(() => upstream.kill());
  await gateway.addServer(networkConfig('huge', 'http', upstream.url, { request_ms: 60_000 }));
  const client = await gateway.client('huge-calls');
  const payload = 'x'.repeat(60 * 1024 * 1024);
  const outcomes = await Promise.all(Array.from({ length: 4 }, () => outcome(client, 'huge__whoami', { payload })));
  t.comment(`outcomes: ${JSON.stringify(outcomes)}`);
  t.equal(outcomes.filter((o) => o === '-32012 UPSTREAM_BUSY').length, 3, 'past the first, each is refused at once');
  // The admitted one is the fixture's business (under load its HTTP server may drop a 60 MB body): answered, either way.
  t.match(outcomes.find((o) => o !== '-32012 UPSTREAM_BUSY'), /^(result|-320\d\d UPSTREAM_\w+)$/, 'the admitted call is answered');
  t.equal(await outcome(client, 'huge__whoami'), 'result', 'the upstream still answers');
  t.equal((await gateway.api('GET', '/servers/huge')).body.health.state, 'ready');
  t.notMatch(readFileSync(join(gateway.home, 'logs', 'daemon.log'), 'utf8'), 'actor worker died', 'no actor died');
});

t.test('four concurrent 60 MB answers over HTTP (SSE, as the SDK server sends them): each a result or UPSTREAM_BUSY, nothing dies', async (t) => {
  const control = faultSwitch(tempHome('coffer-big-'), { fault: 'big', mb: 60 });
  const upstream = await startNetworkFixture('http', ['--name', 'bigs', ...control.args]);
  t.teardown(() => upstream.kill());
  await gateway.addServer(networkConfig('bigs', 'http', upstream.url, { request_ms: 60_000 }));
  const client = await gateway.client('big-answers');
  const outcomes = await Promise.all(Array.from({ length: 4 }, () => outcome(client, 'bigs__whoami')));
  t.comment(`outcomes: ${JSON.stringify(outcomes)}`);
  t.ok(outcomes.every((o) => o === 'result' || o === '-32012 UPSTREAM_BUSY'), 'each is a result or UPSTREAM_BUSY');
  t.ok(outcomes.includes('result'), 'a call cut off gives its share back: at least one is answered');
  await control.set({});
  t.equal(await outcome(client, 'bigs__whoami'), 'result', 'the upstream still answers');
  t.notMatch(readFileSync(join(gateway.home, 'logs', 'daemon.log'), 'utf8'), 'actor worker died', 'no actor died');
});
