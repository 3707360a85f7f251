// Toolsets declared in a config file (coffer serve --config FILE): served at
// /mcp/<toolset> to a real SDK client, narrowed and removed live by editing the
// file, owned by the file (the API refuses to change them), refused with line
// and column when invalid or when a bound client would lose its set, and kept
// by export → serve.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import t from 'tap';
import { connectAdmin } from '../src/admin/client.js';
import type { ConfigFileStatus } from '../src/config-file/sync.js';
import type { CofferEvent } from '../src/protocol/events.js';
import { runCli } from './helpers/cli.js';
import { FIXTURE } from './fixtures/fixture-servers.js';
import { startGateway, waitFor, type Gateway } from './helpers/gateway.js';
import { waitReady } from './helpers/rest.js';

const dir = mkdtempSync(join(tmpdir(), 'coffer-config-toolsets-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

const server = (name: string): string =>
  `  - {name: ${name}, transport: {type: stdio, command: ${JSON.stringify(process.execPath)}, args: ${JSON.stringify([FIXTURE, '--name', name, '--tools', 'whoami,getenv'])}}}`;

/** Servers alpha and beta, then the given toolsets section lines. */
const file = (...toolsets: string[]): string => ['version: 1', 'servers:', server('alpha'), server('beta'), ...(toolsets.length > 0 ? ['toolsets:', ...toolsets] : []), ''].join('\n');

const ro = (include: string): string => `  - {name: ro, description: read only, servers: [{server: alpha, include: ["${include}"]}]}`;

const tools = async (client: Client): Promise<string[]> => (await client.listTools()).tools.map((tool) => tool.name).sort();

async function rewrite(gateway: Gateway, path: string, text: string): Promise<ConfigFileStatus['last']> {
  const before = ((await gateway.api('GET', '/config')).body as { file: ConfigFileStatus }).file.last.at;
  writeFileSync(path, text);
  return waitFor('the config file change to be handled', async () => {
    const { file: status } = (await gateway.api('GET', '/config')).body as { file: ConfigFileStatus };
    return status.last.at > before ? status.last : null;
  });
}

const toolsetNames = async (gateway: Gateway): Promise<string[]> => ((await gateway.api('GET', '/toolsets')).body.toolsets as { name: string }[]).map((set) => set.name).sort();

t.test('a toolset in the file is served, owned by the file, changed and removed with it', async (t) => {
  const path = join(dir, 'coffer.yaml');
  writeFileSync(path, file(ro('tool:whoami')));
  const gateway = await startGateway({ configFile: path });
  t.teardown(() => gateway.close());
  await waitReady(gateway.api, 'alpha');
  await waitReady(gateway.api, 'beta');
  const inSet = await gateway.client('in-set', {}, undefined, '/mcp/ro');
  t.same(await tools(inSet), ['alpha__whoami'], '/mcp/ro serves the narrowed list');
  t.same(((await gateway.api('GET', '/config')).body.file as ConfigFileStatus).toolsets, ['ro']);
  t.equal((await gateway.api('POST', '/toolsets', { name: 'api-set', servers: [{ server: 'beta' }] })).status, 201, 'a toolset made through the API');

  t.test('the API may not change a toolset the file declares', async (t) => {
    const patch = await gateway.api('PATCH', '/toolsets/ro', { servers: [{ server: 'beta' }] });
    t.equal(patch.status, 409);
    t.equal(patch.body.error.code, 'TOOLSET_MANAGED_BY_FILE');
    t.match(patch.body.error.message, path, 'the message names the file');
    t.equal((await gateway.api('DELETE', '/toolsets/ro')).body.error.code, 'TOOLSET_MANAGED_BY_FILE');
    t.equal((await gateway.api('POST', '/toolsets', { name: 'ro', servers: [] })).body.error.code, 'TOOLSET_MANAGED_BY_FILE');
    t.same(await tools(inSet), ['alpha__whoami'], 'unchanged');
  });

  t.test('an invalid toolset entry is refused with line and column, and nothing changes', async (t) => {
    const unknown = await rewrite(gateway, path, file('  - name: ro', '    servers:', '      - {server: nope}'));
    t.equal(unknown.status, 'refused');
    t.match(unknown.errors, [{ line: 8, column: 18, field: 'toolsets[0].servers[0].server', message: /no server named "nope"/ }]);
    const pattern = await rewrite(gateway, path, file('  - name: ro', '    servers:', '      - {server: alpha, include: ["whoami"]}'));
    t.equal(pattern.status, 'refused');
    t.match(pattern.errors, [{ line: 8, column: 35, field: 'toolsets[0].servers[0].include[0]', message: /must be tool:<glob>/ }]);
    const twice = await rewrite(gateway, path, file(ro('tool:whoami'), ro('tool:getenv')));
    t.match(twice.errors, [{ line: 7, column: 12, field: 'toolsets[1].name', message: /repeats the toolset name "ro"/ }]);
    t.same(await tools(inSet), ['alpha__whoami'], 'the running toolset is kept');
    t.same(await toolsetNames(gateway), ['api-set', 'ro']);
  });

  t.test('editing the toolset in the file narrows it live', async (t) => {
    t.equal((await rewrite(gateway, path, file(ro('tool:getenv')))).status, 'applied');
    t.same(await tools(inSet), ['alpha__getenv'], 'the open session sees the new set');
    t.equal((await gateway.api('GET', '/toolsets/ro')).body.description, 'read only');
  });

  t.test('removing a toolset a client is bound to is refused whole; unbound, it goes', async (t) => {
    t.equal((await gateway.api('POST', '/clients', { name: 'agent', toolset: 'ro' })).status, 201);
    const refused = await rewrite(gateway, path, file());
    t.equal(refused.status, 'refused');
    t.match(refused.message, /toolset "ro" is no longer declared, but client\(s\) agent are bound to it/);
    t.same(await toolsetNames(gateway), ['api-set', 'ro'], 'the running state is kept');
    t.equal((await gateway.api('PATCH', '/clients/agent', { toolset: null })).status, 200);
    t.equal((await rewrite(gateway, path, file())).status, 'applied', 'the refused text saved again is retried');
    t.same(await toolsetNames(gateway), ['api-set'], 'the file toolset is removed, the API one left alone');
    await t.rejects(tools(inSet), { code: 404 }, 'the endpoint of a removed toolset is gone');
    t.same(((await gateway.api('GET', '/config')).body.file as ConfigFileStatus).toolsets, []);
  });
});

t.test('the config_file event and its audit entry list the toolsets a change added, updated and removed', async (t) => {
  const path = join(dir, 'events.yaml');
  const wide = `  - {name: wide, servers: [{server: beta}]}`;
  writeFileSync(path, file(ro('tool:whoami'), wide));
  const gateway = await startGateway({ configFile: path });
  t.teardown(() => gateway.close());
  const admin = await connectAdmin({ port: gateway.daemon.port, token: gateway.daemon.token });
  t.teardown(() => admin.close());
  const events: Extract<CofferEvent, { type: 'config_file' }>[] = [];
  admin.onEvent((event) => event.type === 'config_file' && events.push(event));
  await admin.request({ type: 'subscribe', types: ['config_file'] });

  const renamed = `  - {name: all, servers: [{server: alpha}, {server: beta}]}`;
  t.equal((await rewrite(gateway, path, file(ro('tool:getenv'), renamed))).status, 'applied');
  const event = await waitFor('the applied event', () => events.find((seen) => seen.status === 'applied'));
  t.same(event.toolsets, { added: ['all'], updated: ['ro'], removed: ['wide'] }, 'the event names each toolset by what happened to it');
  t.same([event.added, event.updated, event.removed], [[], [], []], 'no server changed');
  const audit = (await gateway.api('GET', '/audit?event_type=config_file_applied')).body.entries as { payload: unknown }[];
  t.match(audit[0], { payload: { path, added: [], updated: [], removed: [], toolsets: { added: ['all'], updated: ['ro'], removed: ['wide'] } } }, 'a change of toolsets only is audited too');

  events.length = 0;
  t.equal((await rewrite(gateway, path, file(ro('tool:getenv'), renamed).replace('whoami,getenv', 'whoami'))).status, 'applied');
  const servers = await waitFor('the second applied event', () => events.find((seen) => seen.status === 'applied'));
  t.same(servers.toolsets, { added: [], updated: [], removed: [] }, 'a change of servers only lists no toolset');
  t.same(servers.updated, ['alpha']);
});

t.test('export → serve --config keeps the toolsets', async (t) => {
  const path = join(dir, 'source.yaml');
  writeFileSync(path, file(ro('tool:whoami'), '  - {name: both, mode: search, servers: [{server: alpha}, {server: beta, exclude: ["tool:getenv"]}]}'));
  const a = await startGateway({ configFile: path });
  t.teardown(() => a.close());
  const exported = await runCli(a.home, 'config', 'export');
  t.match(exported.stdout, /toolsets:/);
  const copy = join(dir, 'exported.yaml');
  writeFileSync(copy, exported.stdout);
  const b = await startGateway({ configFile: copy });
  t.teardown(() => b.close());
  await waitReady(b.api, 'alpha');
  t.same(await tools(await b.client('copy', {}, undefined, '/mcp/ro')), ['alpha__whoami']);
  t.match((await b.api('GET', '/toolsets/both')).body, { mode: 'search', servers: [{ server: 'alpha' }, { server: 'beta', exclude: ['tool:getenv'] }] });
  t.equal((await runCli(b.home, 'config', 'export')).stdout, exported.stdout, 'the round trip is exact');
  t.same(readFileSync(copy, 'utf8'), exported.stdout);
});
