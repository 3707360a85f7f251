// ADR-004's state model through a running daemon: every rule R1–R10 proven
// with real upstreams; each test name starts with the rule it proves.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import t from 'tap';
import { PromptListChangedNotificationSchema, ResourceListChangedNotificationSchema, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { CLI_ENTRY } from '../src/paths.js';
import { startGateway, tempHome, waitFor, type Gateway } from './helpers/gateway.js';
import { homeApi, waitReady } from './helpers/rest.js';
import { everythingStdio } from './helpers/upstreams.js';
import { networkConfig, startNetworkFixture, stdioFixture } from './fixtures/fixture-servers.js';

const text = (result: any): any => JSON.parse(result.content[0].text);
const toolNames = async (client: Awaited<ReturnType<Gateway['client']>>) => (await client.listTools()).tools.map((tool) => tool.name);
const find = (view: any, kind: string, key: string) => view[kind].items.find((item: any) => item.key === key);

async function capabilities(gateway: Gateway, server: string) {
  const answer = await gateway.api('GET', `/servers/${server}/capabilities`);
  return answer;
}

async function toggle(gateway: Gateway, server: string, type: string, key: string, enabled: boolean) {
  const answer = await gateway.api('POST', `/servers/${server}/capabilities/${type}/${enabled ? 'enable' : 'disable'}`, { key });
  if (answer.status !== 200) throw new Error(`toggle failed: ${JSON.stringify(answer.body)}`);
  return answer.body;
}

async function listCount(client: Awaited<ReturnType<Gateway['client']>>, server: string): Promise<number> {
  return text(await client.callTool({ name: `${server}__stats`, arguments: {} })).lists.tools ?? 0;
}

t.test('R1 only preferences persist: no description or schema text in the database', async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  await gateway.addServer(stdioFixture('fx', ['--resources', '--prompts']));
  await gateway.addServer(everythingStdio('ev'));
  const client = await gateway.client();
  await client.listTools();
  await client.listPrompts();
  await client.listResources();
  t.equal((await capabilities(gateway, 'fx')).status, 200);
  t.ok(find((await capabilities(gateway, 'ev')).body, 'tools', 'echo'), 'keys are known');
  await gateway.daemon.stop();
  const bytes = ['coffer.db', 'coffer.db-wal'].map((file) => {
    try {
      return readFileSync(join(gateway.home, file)).toString('latin1');
    } catch {
      return '';
    }
  }).join('');
  t.ok(bytes.includes('echo'), 'capability keys are stored');
  for (const needle of ['Reports progress, sleeps, answers.', 'Echoes back the input string', 'Greets someone.', '"additionalProperties"', 'Message to echo']) {
    t.notOk(bytes.includes(needle), `no ${needle} in the database`);
  }
});

t.test('R2 lists are live through a per-upstream cache with a TTL', async (t) => {
  const gateway = await startGateway({ tuning: { cacheTtlMs: 400 } });
  t.teardown(() => gateway.close());
  await gateway.addServer(stdioFixture('live'));
  const client = await gateway.client();
  await client.listTools();
  const first = await listCount(client, 'live');
  await client.listTools();
  await client.listTools();
  t.equal(await listCount(client, 'live'), first, 'within the TTL the cache answers');
  await new Promise((resolve) => setTimeout(resolve, 500));
  await client.listTools();
  t.equal(await listCount(client, 'live'), first + 1, 'after the TTL the upstream is asked again');
});

t.test('R3 invalidation: list_changed, refresh and reconnect drop the cache', async (t) => {
  const gateway = await startGateway({ tuning: { backoffInitialMs: 50 } });
  t.teardown(() => gateway.close());
  await gateway.addServer(stdioFixture('inv'));
  const client = await gateway.client();
  let notified = 0;
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => void notified++);
  await client.listTools();
  const before = await listCount(client, 'inv');

  const refreshed = await gateway.api('POST', '/servers/inv/refresh');
  t.equal(refreshed.status, 200);
  t.equal(refreshed.body.tools.state, 'live');
  t.equal(await listCount(client, 'inv'), before + 1, 'refresh lists the upstream again');

  await client.callTool({ name: 'inv__mutate', arguments: { kind: 'tools' } });
  await waitFor('list_changed forwarded', () => notified > 0);
  t.ok((await toolNames(client)).includes('inv__added_1'), 'list_changed dropped the cache');

  const { pid } = text(await client.callTool({ name: 'inv__whoami', arguments: {} }));
  process.kill(pid, 'SIGKILL');
  await waitFor('the new session', async () => {
    try {
      return text(await client.callTool({ name: 'inv__whoami', arguments: {} })).pid !== pid;
    } catch {
      return false;
    }
  });
  const names = await toolNames(client);
  t.notOk(names.includes('inv__added_1'), 'a new upstream session is listed afresh (its mutation is gone)');
});

t.test('R4 reconcile: new keys follow the policy and are audited; vanished keys stay', async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  await gateway.addServer(stdioFixture('auto'));
  await gateway.addServer({ ...stdioFixture('manual'), auto_enable_new_capabilities: false });
  const client = await gateway.client();
  const names = await toolNames(client);
  t.ok(names.includes('auto__echo'), 'auto-enabled server: tools exposed');
  t.notOk(names.some((name) => name.startsWith('manual__')), 'policy off: new tools are disabled on the very first list');

  await client.callTool({ name: 'auto__mutate', arguments: { kind: 'tools' } });
  await waitFor('the new tool', async () => (await toolNames(client)).includes('auto__added_1'));
  // Reconciliation runs beside the list answer: the audit entry follows shortly.
  await waitFor('first seen audited', async () => {
    const audit = await gateway.api('GET', '/audit?server=auto&event_type=capability_first_seen&limit=100');
    return audit.body.entries.some((entry: any) => entry.payload.key === 'added_1' && entry.payload.enabled === true);
  });
  t.pass('first seen is audited');

  const view = (await capabilities(gateway, 'manual')).body;
  t.equal(find(view, 'tools', 'echo').enabled, false, 'manual: stored disabled');

  await toggle(gateway, 'auto', 'tool', 'whoami', false);
  // The upstream is "upgraded" to offer fewer tools: the vanished keys stay, not live.
  const patched = await gateway.api('PATCH', '/servers/auto', { transport: { args: [...(stdioFixture('auto').transport as { args: string[] }).args, '--tools', 'echo'] } });
  t.equal(patched.status, 200);
  await waitFor('auto ready again', async () => (await gateway.api('GET', '/servers/auto')).body.health.state === 'ready');
  const after = (await capabilities(gateway, 'auto')).body;
  t.equal(find(after, 'tools', 'echo').live, true);
  t.match(find(after, 'tools', 'whoami'), { live: false, enabled: false }, 'vanished key kept with its flag');
  t.ok(find(after, 'tools', 'whoami').last_seen_at, 'and when it was last seen');
  t.match(find(after, 'tools', 'stats'), { live: false, enabled: true });

  // ... and comes back: the user's choice is still there.
  t.equal((await gateway.api('PATCH', '/servers/auto', { transport: { args: (stdioFixture('auto').transport as { args: string[] }).args } })).status, 200);
  await waitFor('auto ready with all tools', async () => (await gateway.api('GET', '/servers/auto')).body.health.state === 'ready');
  const back = (await capabilities(gateway, 'auto')).body;
  t.match(find(back, 'tools', 'whoami'), { live: true, enabled: false }, 'the tool came back still disabled');
  t.notOk((await toolNames(client)).includes('auto__whoami'));
});

t.test('R5 the name is the identity: a schema change keeps the preference', async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  await gateway.addServer(stdioFixture('up'));
  const client = await gateway.client();
  const before = (await client.listTools()).tools.find((tool) => tool.name === 'up__echo')!;
  await toggle(gateway, 'up', 'tool', 'echo', false);
  // "Upgrade": the same server name now runs another program whose echo has another schema and description.
  const upgraded = everythingStdio('up') as { transport: unknown };
  t.equal((await gateway.api('PATCH', '/servers/up', { transport: upgraded.transport })).status, 200);
  await waitFor('up ready again', async () => (await gateway.api('GET', '/servers/up')).body.health.state === 'ready');
  const view = (await capabilities(gateway, 'up')).body;
  const echo = find(view, 'tools', 'echo');
  t.not(JSON.stringify(echo.inputSchema), JSON.stringify(before.inputSchema), 'the schema changed');
  t.equal(echo.enabled, false, 'the preference did not');
  t.notOk((await toolNames(client)).includes('up__echo'));
});

t.test('R6 upstream offline: known keys with flags, still switchable', async (t) => {
  const fixture = await startNetworkFixture('http', ['--name', 'remote']);
  const gateway = await startGateway({ tuning: { backoffInitialMs: 50, backoffMaxMs: 200 } });
  t.teardown(async () => {
    await gateway.close();
    await fixture.kill();
  });
  await gateway.addServer(networkConfig('remote', 'http', fixture.url, { connect_ms: 500, request_ms: 1_000 }));
  t.equal((await capabilities(gateway, 'remote')).status, 200);
  await fixture.kill();
  const down = await waitFor('503 once it is down', async () => {
    const answer = await capabilities(gateway, 'remote');
    return answer.status === 503 ? answer : null;
  });
  t.equal(down.body.error.code, 'UPSTREAM_UNAVAILABLE');
  const known = down.body.error.details.known as any[];
  t.match(known.find((row) => row.capability_key === 'echo'), { capability_type: 'tool', enabled: true });
  t.ok(known.every((row) => row.last_seen_at && !('description' in row) && !('inputSchema' in row)), 'names, flags, last seen; no schema');
  await toggle(gateway, 'remote', 'tool', 'echo', false);
  const again = await capabilities(gateway, 'remote');
  t.equal(again.body.error.details.known.find((row: any) => row.capability_key === 'echo').enabled, false, 'switched off while offline');
});

t.test('R7 discovery self-heals a connection killed behind the actor; R8 unsupported is not failed', async (t) => {
  let fixture = await startNetworkFixture('http', ['--name', 'heal', '--no-get-stream']);
  const port = new URL(fixture.url).port;
  const gateway = await startGateway();
  t.teardown(async () => {
    await gateway.close();
    await fixture.kill();
  });
  await gateway.addServer(networkConfig('heal', 'http', fixture.url, { connect_ms: 2_000, request_ms: 2_000 }));
  t.equal((await capabilities(gateway, 'heal')).status, 200);
  await fixture.kill();
  fixture = await startNetworkFixture('http', ['--name', 'heal', '--no-get-stream', '--port', port]);
  const healed = await gateway.api('POST', '/servers/heal/refresh');
  t.equal(healed.status, 200, 'one request heals the stale session');
  t.equal(healed.body.tools.state, 'live');
  t.ok(healed.body.tools.items.length > 0, 'and it is not silently empty');
  t.equal(healed.body.prompts.state, 'unsupported', 'R8: a tools-only upstream has unsupported prompts');
  t.equal(healed.body.resources.state, 'unsupported', 'R8: and unsupported resources, not failed');

  await fixture.kill();
  const down = await gateway.api('POST', '/servers/heal/refresh');
  t.equal(down.status, 503, 'really down: 503, never 500 or empty');
  t.equal(down.body.error.code, 'UPSTREAM_UNAVAILABLE');
  t.ok(down.body.error.details.known.length > 0, 'with the known keys');
});

t.test('R7 -32601 is an empty kind, cached, not an error; a timeout is 504', async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  await gateway.addServer(stdioFixture('mnf', ['--prompts', '--method-not-found', 'prompts']));
  await gateway.addServer(stdioFixture('slowlist', ['--hang'], { request_ms: 500, list_deadline_ms: 200 }));
  const view = await capabilities(gateway, 'mnf');
  t.equal(view.status, 200);
  t.equal(view.body.prompts.state, 'unsupported');
  t.same(view.body.prompts.items, []);
  const client = await gateway.client();
  t.same((await client.listPrompts()).prompts, [], 'downstream prompts: empty, no error');
  const hung = await capabilities(gateway, 'slowlist');
  t.equal(hung.status, 504, 'a list that times out is 504');
  t.equal(hung.body.error.code, 'UPSTREAM_TIMEOUT');
});

t.test('R8 failed is not empty: a failing upstream is an error with its keys, an empty kind is unsupported', async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  await gateway.addServer(stdioFixture('broken', ['--fail-lists=-1']));
  await gateway.addServer(stdioFixture('toolsonly'));
  const failing = await capabilities(gateway, 'broken');
  t.equal(failing.status, 503, 'could not load: 503, not an empty 200');
  t.equal(failing.body.error.code, 'UPSTREAM_UNAVAILABLE');
  t.match(failing.body.error.message, /test the connection/);
  const empty = await capabilities(gateway, 'toolsonly');
  t.equal(empty.status, 200);
  t.same([empty.body.prompts.state, empty.body.resources.state, empty.body.tools.state], ['unsupported', 'unsupported', 'live']);
  const client = await gateway.client();
  t.ok((await toolNames(client)).includes('toolsonly__echo'));
  t.equal((await gateway.api('GET', '/servers/broken')).body.health.degraded, true, 'on /mcp the failing upstream is left out and named');
});

t.test('R9 test connection is separate and leaves the live connection alone', async (t) => {
  let fixture = await startNetworkFixture('http', ['--name', 'tc', '--no-get-stream']);
  const port = new URL(fixture.url).port;
  const gateway = await startGateway();
  t.teardown(async () => {
    await gateway.close();
    await fixture.kill();
  });
  await gateway.addServer(networkConfig('tc', 'http', fixture.url, { connect_ms: 3_000 }));
  // Lists over the live connection: once they answered, its GET stream attempt (sent right after initialize,
  // answered 405) is over too. Killing the upstream while that GET is in flight would rightly end the connection.
  t.equal((await gateway.api('GET', '/servers/tc/capabilities')).status, 200);
  const before = (await gateway.api('GET', '/servers/tc')).body.health;
  // Wedge the live connection: the upstream restarts behind the actor's back.
  await fixture.kill();
  fixture = await startNetworkFixture('http', ['--name', 'tc', '--no-get-stream', '--port', port]);
  const report = await gateway.api('POST', '/servers/tc/test');
  t.equal(report.status, 200);
  t.match(report.body, { ok: true, server_info: { name: 'tc' } });
  t.ok(report.body.protocol_version, 'protocol version reported');
  t.ok(report.body.latency_ms >= 0);
  t.same((await gateway.api('GET', '/servers/tc')).body.health, before, 'the live connection was not touched');
  t.equal((await gateway.api('POST', '/servers/nope/test')).status, 404);

  const dead = await gateway.api('POST', '/servers', networkConfig('dead', 'http', 'http://127.0.0.1:9/mcp', { connect_ms: 1_000 }));
  t.equal(dead.status, 201);
  const failed = await gateway.api('POST', '/servers/dead/test');
  t.equal(failed.body.ok, false);
  t.ok(failed.body.error.message, 'with the reason');
});

t.test('R10 disabled means rejected: tool, prompt, resource, server', async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  await gateway.addServer(stdioFixture('gate', ['--resources', '--prompts']));
  const early = await gateway.client('early');
  const seen = { tools: 0, prompts: 0, resources: 0 };
  early.setNotificationHandler(ToolListChangedNotificationSchema, () => void seen.tools++);
  early.setNotificationHandler(PromptListChangedNotificationSchema, () => void seen.prompts++);
  early.setNotificationHandler(ResourceListChangedNotificationSchema, () => void seen.resources++);
  t.ok((await toolNames(early)).includes('gate__echo'));

  await toggle(gateway, 'gate', 'tool', 'echo', false);
  await toggle(gateway, 'gate', 'prompt', 'greet', false);
  await toggle(gateway, 'gate', 'resource', 'fixture://static', false);
  await waitFor('list_changed for each kind', () => seen.tools > 0 && seen.prompts > 0 && seen.resources > 0);
  const late = await gateway.client('late');
  for (const client of [early, late]) {
    t.notOk((await toolNames(client)).includes('gate__echo'), 'tool absent');
    t.notOk((await client.listPrompts()).prompts.some((prompt) => prompt.name === 'gate__greet'), 'prompt absent');
    t.notOk((await client.listResources()).resources.some((resource) => resource.uri === 'coffer://gate/fixture://static'), 'resource absent');
  }
  const denied = async (call: Promise<unknown>, label: string) => {
    const error = await call.then(() => null, (caught: any) => caught);
    t.equal(error?.code, -32000, `${label}: -32000`);
    t.equal(error?.data?.code, 'TOOL_DISABLED', `${label}: TOOL_DISABLED`);
  };
  await denied(early.callTool({ name: 'gate__echo', arguments: {} }), 'tools/call from a stale list');
  await denied(early.getPrompt({ name: 'gate__greet', arguments: { name: 'x' } }), 'prompts/get');
  await denied(early.readResource({ uri: 'coffer://gate/fixture://static' }), 'resources/read');
  t.equal((await gateway.api('POST', '/servers/gate/capabilities/tool/disable', { key: 'no-such-tool' })).status, 404, 'unknown key is 404');
  t.equal((await gateway.api('PATCH', '/servers/gate/capabilities', { changes: [{ capability_type: 'tool', capability_key: 'whoami', enabled: false }, { capability_type: 'tool', capability_key: 'nope', enabled: false }] })).status, 404);
  t.ok((await toolNames(late)).includes('gate__whoami'), 'all-or-nothing: whoami untouched');

  t.equal((await gateway.api('POST', '/servers/gate/disable')).status, 200);
  t.same(await toolNames(late), [], 'a disabled server has no capabilities');
  await denied(late.callTool({ name: 'gate__whoami', arguments: {} }), 'call to a disabled server');
  t.equal((await gateway.api('POST', '/servers/gate/enable')).status, 200);
  await waitFor('gate back', async () => (await toolNames(late)).includes('gate__whoami'));
  t.notOk((await toolNames(late)).includes('gate__echo'), 'and its tool switches survived');
});

t.test('R10 a name its upstream does not list is not forwarded (a switched-off tool under another spelling stays off); R8 with no list to tell, it is', async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  await gateway.addServer(stdioFixture('alias', ['--alias', 'ECHO=echo,hidden=whoami']));
  const client = await gateway.client('alias-client');
  t.ok((await toolNames(client)).includes('alias__echo'));
  t.same(text(await client.callTool({ name: 'alias__echo', arguments: { a: 1 } })), { a: 1 }, 'a listed tool is called');
  await toggle(gateway, 'alias', 'tool', 'echo', false);
  const refused = async (name: string, label: string) => {
    const error = await client.callTool({ name, arguments: {} }).then(() => null, (caught: any) => caught);
    t.equal(error?.code, -32602, `${label}: -32602`);
    t.equal(error?.data?.code, 'RESOURCE_NOT_FOUND', `${label}: RESOURCE_NOT_FOUND`);
    t.match(error?.message, /server 'alias' does not list it/, `${label}: says why`);
  };
  await refused('alias__ECHO', 'the switched-off tool under a spelling the upstream also answers to');
  await refused('alias__hidden', 'a name no list shows');
  // A client that never listed (nothing merged for it) is held to the same list.
  const fresh = await gateway.client('alias-fresh');
  const error = await fresh.callTool({ name: 'alias__hidden', arguments: {} }).then(() => null, (caught: any) => caught);
  t.equal(error?.data?.code, 'RESOURCE_NOT_FOUND', 'and for a client that never listed');

  await gateway.addServer(stdioFixture('failing', ['--fail-lists=-1']));
  t.equal(text(await fresh.callTool({ name: 'failing__whoami', arguments: {} })).name, 'failing', 'R8: a server whose lists fail still gets calls to its names');
  const invocations = await gateway.api('GET', '/invocations?server=alias');
  t.ok(invocations.body.invocations.some((row: any) => row.key === 'hidden' && row.status === 'error' && row.error_code === -32602), 'the refusal is recorded');
});

t.test('R1 R4 choices survive a daemon restart and kill -9 right after the API answered', async (t) => {
  const fixture = await startNetworkFixture('http', ['--name', 'keep']);
  const home = tempHome();
  t.teardown(() => fixture.kill());
  const child = spawn(process.execPath, [CLI_ENTRY, 'serve', '--port', '0', '--home', home], { stdio: ['ignore', 'pipe', 'pipe'] });
  t.teardown(() => {
    child.kill('SIGKILL');
  });
  await once(createInterface({ input: child.stdout! }), 'line');
  const api = homeApi(home);
  t.equal((await api('POST', '/servers', networkConfig('keep', 'http', fixture.url))).status, 201);
  await waitReady(api, 'keep');
  t.equal((await api('GET', '/servers/keep/capabilities')).status, 200);
  t.equal((await api('POST', '/servers/keep/capabilities/tool/disable', { key: 'echo' })).status, 200);
  child.kill('SIGKILL');
  await once(child, 'exit');

  const gateway = await startGateway({}, home);
  t.teardown(() => gateway.close());
  await waitFor('keep ready after restart', async () => (await gateway.api('GET', '/servers/keep')).body.health.state === 'ready');
  const client = await gateway.client();
  const names = await toolNames(client);
  t.ok(names.includes('keep__whoami'));
  t.notOk(names.includes('keep__echo'), 'the disable acknowledged before kill -9 is there');
});
