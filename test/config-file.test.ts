// Servers declared in a config file (coffer serve --config FILE): the published
// JSON Schema, refusals with line and column, a real daemon applying changes of
// the file as a diff, ownership, export and round trip, and no secret in clear.
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import t, { type Test } from 'tap';
import { connectAdmin } from '../src/admin/client.js';
import { EXIT } from '../src/cli/exit-codes.js';
import type { CofferEvent } from '../src/protocol/events.js';
import { runCli } from './helpers/cli.js';
import { FIXTURE } from './fixtures/fixture-servers.js';
import { startGateway, tempHome, waitFor, type Gateway } from './helpers/gateway.js';
import { waitReady } from './helpers/rest.js';
import { ConfigFileError, loadConfigFile, parseConfigText } from '../src/config-file/load.js';
import { othersControl } from '../src/config-file/file-trust.js';
import { ConfigFileSync, type ConfigFileStatus, type ConfigSyncDeps } from '../src/config-file/sync.js';
import { Logger } from '../src/log.js';
import type { ServerConfig } from '../src/protocol/server-config.js';
import { CONFIG_SCHEMA_PATH, configFileJsonSchemaText } from '../src/config-file/schema.js';
import { PROJECT_ROOT } from '../src/paths.js';

function refusal(path: string, text: string, env: NodeJS.ProcessEnv = {}): ConfigFileError {
  try {
    parseConfigText(path, text, env);
  } catch (error) {
    if (error instanceof ConfigFileError) return error;
    throw error;
  }
  throw new Error('the file was accepted');
}

t.test('the committed JSON Schema is the one generated from the zod schema the API validates with', async (t) => {
  const committed = readFileSync(join(PROJECT_ROOT, CONFIG_SCHEMA_PATH), 'utf8');
  t.equal(committed, configFileJsonSchemaText(), `${CONFIG_SCHEMA_PATH} is stale: run npm run build && npm run schema`);
  const schema = JSON.parse(committed) as { required: string[]; properties: { servers: { items: { required: string[] } } } };
  t.same(schema.required, ['version']);
  t.same(schema.properties.servers.items.required, ['name', 'transport'], 'an entry is a POST /servers body');
});

t.test('a file is refused with the line and column of each problem, in both formats', async (t) => {
  const yaml = refusal(
    'coffer.yaml',
    ['version: 1', 'servers:', '  - name: a', '    bogus: 2', '    transport:', '      type: stdio', '      command: ${CMD}', '      env:', '        TOKEN: ${NOT_SET}', 'toolsets: []', ''].join('\n'),
  );
  t.equal(yaml.code, 'CONFIG_FILE_INVALID');
  t.same(
    yaml.errors.map((issue) => [issue.line, issue.column, issue.field]),
    [
      [4, 5, 'servers[0].bogus'],
      [7, 16, 'servers[0].transport.command'],
      [9, 16, 'servers[0].transport.env.TOKEN'],
    ],
  );
  t.match(yaml.message, /^config file coffer\.yaml refused: line 4, column 5: servers\[0\]\.bogus: is not a known field \(and 2 more\); nothing was changed$/);
  t.match(yaml.errors[2]!.message, '${NOT_SET} is not set');

  const syntax = refusal('coffer.yaml', 'version: 1\nservers:\n  - name: [\n');
  t.same([syntax.errors[0]!.line, syntax.errors[0]!.column], [4, 1]);
  t.match(syntax.errors[0]!.message, /^not valid YAML: /);

  const json = refusal('coffer.json', '{\n  "version": 1,\n  "servers": [\n    {"name": "x" "transport": {}}\n  ]\n}\n');
  t.same([json.errors[0]!.line, json.errors[0]!.column], [4, 18]);
  t.equal(json.errors[0]!.message, 'not valid JSON: comma expected');

  const deep = refusal('coffer.json', `{"version": 1, "servers": ${'['.repeat(5_000)}${']'.repeat(5_000)}}`);
  t.match(deep.errors[0], { line: 1, message: 'nested deeper than 64 levels, more than any config file needs' }, 'nesting is refused, not a stack overflow');

  const laughs = ['version: 1', 'servers: []', 'a0: &a0 [1, 1, 1]', ...Array.from({ length: 20 }, (_, n) => `a${n + 1}: &a${n + 1} [*a${n}, *a${n}]`), ''].join('\n');
  t.match(refusal('coffer.yaml', laughs).errors[0], { line: 4, column: 10, message: /^not valid YAML: its aliases expand to more than 100 copies/ }, 'a billion-laughs file is a refusal at its first alias');

  const dir = configDir();
  const huge = join(dir, 'coffer.yaml');
  writeFileSync(huge, `version: 1\nservers: []\n${'# a comment line of the sort a generated file repeats\n'.repeat(40_000)}`);
  t.throws(() => loadConfigFile(huge, {}), { code: 'CONFIG_FILE_INVALID', errors: [{ line: 1, field: '(file)', message: /^is larger than 1 MiB, more than any config file needs/ }] }, 'a huge file is refused before it is parsed (on the daemon\'s one thread)');

  const twice = refusal('coffer.json', '{"version": 1,\n "version": 1}');
  t.match(twice.errors[0], { line: 2, column: 2, message: /"version" is written twice/ });
});

t.test('${VAR} is read from the environment in env, headers, oauth and args only; $${ is a literal', async (t) => {
  const loaded = parseConfigText(
    'c.yaml',
    [
      'version: 1',
      'servers:',
      '  - name: a',
      '    transport: {type: stdio, command: node, args: ["--token=${TOKEN}", "plain"], env: {KEY: "${TOKEN}", LIT: "$${HOME}"}}',
      '  - name: b',
      '    transport: {type: http, url: "http://127.0.0.1:1/mcp", headers: {Authorization: "Bearer ${TOKEN}"}, oauth: {client_id: coffer, client_secret: "${TOKEN}"}}',
    ].join('\n'),
    { TOKEN: 'tok-1' },
  );
  const [a, b] = loaded.servers;
  t.match(a!.transport, { args: ['--token=tok-1', 'plain'], env: { KEY: 'tok-1', LIT: '${HOME}' } });
  t.match(b!.transport, { headers: { Authorization: 'Bearer tok-1' }, oauth: { client_id: 'coffer', client_secret: 'tok-1' } });
  t.same(loaded.declared.get('a'), { env: { KEY: '${TOKEN}', LIT: '$${HOME}' }, headers: {}, oauth: {}, args: ['--token=${TOKEN}', null] });
  t.same(loaded.declared.get('b')!.oauth, { client_secret: '${TOKEN}' });
  const url = refusal('c.yaml', 'version: 1\nservers:\n  - name: a\n    transport: {type: http, url: "http://h/?key=${KEY}"}\n', { KEY: 'k' });
  t.match(url.errors[0], { line: 4, field: 'servers[0].transport.url', message: /only read in transport env, headers, oauth and args/ });
});

// ---- a real daemon with --config ----

const SECRET = `sek-${randomBytes(12).toString('hex')}`;
process.env.CF_TEST_TOKEN = SECRET;

interface Entry {
  name: string;
  args?: string[];
  extra?: string[];
}

/** A fixture upstream entry in YAML: env and an argument read the secret from the environment. */
const entry = ({ name, args = [], extra = [] }: Entry): string[] => [
  `  - name: ${name}`,
  ...extra.map((line) => `    ${line}`),
  '    transport:',
  '      type: stdio',
  `      command: ${JSON.stringify(process.execPath)}`,
  `      args: ${JSON.stringify([FIXTURE, '--name', name, '--tools', 'whoami,getenv', ...args, '--instructions=${CF_TEST_TOKEN}'])}`,
  '      env: {FIXTURE_TOKEN: "${CF_TEST_TOKEN}"}',
];

const yamlFile = (...entries: Entry[]): string => ['version: 1', 'servers:', ...entries.flatMap(entry), ''].join('\n');

function configDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'coffer-config-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function pidOf(client: Client, server: string): Promise<number> {
  const result = (await client.callTool({ name: `${server}__whoami`, arguments: {} })) as { content: { text: string }[] };
  return (JSON.parse(result.content[0]!.text) as { pid: number }).pid;
}

async function lastChange(gateway: Gateway, after: string): Promise<ConfigFileStatus['last']> {
  return waitFor('the config file change to be handled', async () => {
    const { file } = (await gateway.api('GET', '/config')).body as { file: ConfigFileStatus };
    return file.last.at > after ? file.last : null;
  });
}

/** Rewrites the file and waits until the daemon has handled it. */
async function rewrite(gateway: Gateway, path: string, text: string): Promise<ConfigFileStatus['last']> {
  const before = ((await gateway.api('GET', '/config')).body as { file: ConfigFileStatus }).file.last.at;
  writeFileSync(path, text);
  return lastChange(gateway, before);
}

const names = async (gateway: Gateway): Promise<string[]> => ((await gateway.api('GET', '/servers')).body.servers as { name: string }[]).map((server) => server.name).sort();

t.test('a change of the file is applied as a diff: only the changed server restarts, a removed one goes, an added one comes', async (t) => {
  const dir = configDir();
  const path = join(dir, 'coffer.yaml');
  writeFileSync(path, yamlFile({ name: 'alpha' }, { name: 'beta' }, { name: 'gamma' }));
  const gateway = await startGateway({ configFile: path });
  t.teardown(() => gateway.close());
  for (const name of ['alpha', 'beta', 'gamma']) await waitReady(gateway.api, name);
  const admin = await connectAdmin({ port: gateway.daemon.port, token: gateway.daemon.token });
  t.teardown(() => admin.close());
  const events: CofferEvent[] = [];
  admin.onEvent((event) => events.push(event));
  await admin.request({ type: 'subscribe', types: ['config_file', 'server'] });
  const client = await gateway.client();
  const before = { alpha: await pidOf(client, 'alpha'), beta: await pidOf(client, 'beta') };

  const last = await rewrite(
    gateway,
    path,
    yamlFile({ name: 'alpha', extra: ['description: only the description changed'] }, { name: 'beta', args: ['--prompts'] }, { name: 'delta' }),
  );
  t.equal(last.status, 'applied');
  await waitReady(gateway.api, 'beta');
  await waitReady(gateway.api, 'delta');
  t.same(await names(gateway), ['alpha', 'beta', 'delta'], 'gamma removed, delta added');
  t.equal(await pidOf(client, 'alpha'), before.alpha, 'alpha (description only) kept its process');
  t.not(await pidOf(client, 'beta'), before.beta, 'beta (arguments changed) restarted');
  t.equal((await gateway.api('GET', '/servers/alpha')).body.description, 'only the description changed');
  const applied = await waitFor('the applied event', () => events.find((event) => event.type === 'config_file'));
  t.match(applied, { type: 'config_file', status: 'applied', added: ['delta'], updated: ['alpha', 'beta'], removed: ['gamma'], path });
  t.ok(events.some((event) => event.type === 'server' && event.action === 'removed' && event.server === 'gamma'), 'the registry announced the removal as for the API');
  const audit = (await gateway.api('GET', '/audit?event_type=config_file_applied')).body.entries as { actor: string; payload: unknown }[];
  t.match(audit[0], { actor: 'system', payload: { path, added: ['delta'], updated: ['alpha', 'beta'], removed: ['gamma'] } });
  const removal = (await gateway.api('GET', '/audit?server=gamma&event_type=server_removed')).body.entries as unknown[];
  t.equal(removal.length, 1, 'each server change is audited by the registry');

  t.test('an invalid file is refused with line and column, and nothing changes', async (t) => {
    const pids = { alpha: await pidOf(client, 'alpha'), beta: await pidOf(client, 'beta') };
    const valid = readFileSync(path, 'utf8');
    events.length = 0;
    const syntax = await rewrite(gateway, path, valid.replace('description: only the', 'description: only: the'));
    t.equal(syntax.status, 'refused');
    t.same(syntax.errors, [{ field: '(file)', line: 4, column: 18, message: 'not valid YAML: nested mappings are not allowed in compact mappings' }]);
    const schema = await rewrite(gateway, path, valid.replace('    description: only', '    colour: blue\n    description: only'));
    t.same(schema.errors, [{ line: 4, column: 5, field: 'servers[0].colour', message: 'is not a known field' }]);
    const unset = await rewrite(gateway, path, valid.replace('${CF_TEST_TOKEN}"}', '${CF_NOT_SET}"}'));
    t.match(unset.errors[0], { line: 9, field: 'servers[0].transport.env.FIXTURE_TOKEN', message: '${CF_NOT_SET} is not set' });
    t.same(await names(gateway), ['alpha', 'beta', 'delta']);
    t.same({ alpha: await pidOf(client, 'alpha'), beta: await pidOf(client, 'beta') }, pids, 'no server restarted');
    const refused = events.filter((event) => event.type === 'config_file');
    t.same(refused.map((event) => event.type === 'config_file' && [event.status, event.errors[0]?.line]), [['refused', 4], ['refused', 4], ['refused', 9]]);
    t.notOk(events.some((event) => event.type === 'server'), 'no server event');
    const log = await waitFor('the refusal in the daemon log', () => {
      const text = readFileSync(join(gateway.home, 'logs', 'daemon.log'), 'utf8');
      return text.includes('servers[0].colour') ? text : null;
    });
    t.match(log, /config file refused; the running servers are unchanged.*line 4, column 5: servers\[0\]\.colour: is not a known field/);
    t.equal((await rewrite(gateway, path, valid)).status, 'applied', 'the file fixed again applies (nothing to change)');
    t.same({ alpha: await pidOf(client, 'alpha'), beta: await pidOf(client, 'beta') }, pids);
  });

  t.test('servers the file declares are changed in the file only; the API keeps the rest and the capability switches', async (t) => {
    for (const [method, route, body] of [
      ['PATCH', '/servers/alpha', { description: 'x' }],
      ['DELETE', '/servers/beta', undefined],
      ['POST', '/servers/alpha/disable', undefined],
      ['POST', '/servers', { name: 'delta', transport: { type: 'stdio', command: 'x' } }],
    ] as const) {
      const refused = await gateway.api(method, route, body);
      t.equal(refused.status, 409, `${method} ${route}`);
      t.equal(refused.body.error.code, 'SERVER_MANAGED_BY_FILE');
      t.match(refused.body.error.message, path);
    }
    const cli = await runCli(gateway.home, 'mcp', 'remove', 'alpha');
    t.equal(cli.code, EXIT.CONFLICT, 'the CLI exits 5');
    t.match(cli.stderr, `declared in the config file ${path}`);
    const view = (await gateway.api('GET', '/servers/alpha')).body;
    t.equal(view.managed_by, path);
    t.equal(view.transport.args.at(-1), '--instructions=${CF_TEST_TOKEN}', 'an argument read from the environment shows as written');
    const off = await gateway.api('POST', '/servers/alpha/capabilities/tool/disable', { key: 'getenv' });
    t.equal(off.status, 200, 'capability switches stay in the database (R1)');

    await gateway.addServer({ name: 'api-made', transport: { type: 'stdio', command: process.execPath, args: [FIXTURE, '--name', 'api-made'] } });
    t.equal((await gateway.api('PATCH', '/servers/api-made', { description: 'mine' })).status, 200, 'a server of the API stays the API\'s');
    t.equal((await rewrite(gateway, path, yamlFile({ name: 'alpha' }, { name: 'beta', args: ['--prompts'] }))).status, 'applied');
    t.same(await names(gateway), ['alpha', 'api-made', 'beta'], 'the file removes only what it declared');
    t.same(
      ((await gateway.api('GET', '/servers/alpha/capabilities')).body.tools.items as { key: string; enabled: boolean }[]).find((item) => item.key === 'getenv')?.enabled,
      false,
      'the switch survived the file change',
    );
  });
});

t.test('a field taken out of the file goes from the server: the oauth block removed is no longer stored or sent', async (t) => {
  const dir = configDir();
  const path = join(dir, 'coffer.yaml');
  const web = (oauth: string[]) => ['version: 1', 'servers:', '  - name: web', '    enabled: false', '    transport:', '      type: http', '      url: "http://127.0.0.1:9/mcp"', ...oauth, ''].join('\n');
  writeFileSync(path, web(['      oauth: {client_id: coffer-web, client_secret: web-client-secret}']));
  const gateway = await startGateway({ configFile: path });
  t.teardown(() => gateway.close());
  t.match((await gateway.api('GET', '/servers/web')).body.transport.oauth, { client_id: '[redacted]' }, 'the client is stored');
  t.equal((await rewrite(gateway, path, web([]))).status, 'applied');
  t.equal((await gateway.api('GET', '/servers/web')).body.transport.oauth, undefined, 'the client taken out of the file is gone');
  const again = await rewrite(gateway, path, `${web([])}# saved again\n`);
  t.match(again, { status: 'applied' });
  const audit = (await gateway.api('GET', '/audit?event_type=config_file_applied')).body.entries as { payload: { updated: string[] } }[];
  t.same(audit.map((entry) => entry.payload.updated), [['web'], []], 'the file and the registry agree: saving it again changes nothing');
});

t.test('a namespace the registry refuses refuses the whole file, with its line: nothing is removed first', async (t) => {
  const dir = configDir();
  const path = join(dir, 'coffer.yaml');
  const off = (name: string, namespace?: string) => [`  - name: ${name}`, ...(namespace === undefined ? [] : [`    namespace: ${namespace}`]), '    enabled: false', '    transport: {type: stdio, command: x}'];
  writeFileSync(path, ['version: 1', 'servers:', ...off('keep'), ...off('gone'), ''].join('\n'));
  const gateway = await startGateway({ configFile: path });
  t.teardown(() => gateway.close());
  const last = await rewrite(gateway, path, ['version: 1', 'servers:', ...off('keep'), ...off('mine', 'coffer'), ''].join('\n'));
  t.match(last, { status: 'refused', errors: [{ line: 7, column: 16, field: 'servers[1].namespace', message: /"coffer" is coffer's own prefix/ }] });
  t.same(await names(gateway), ['gone', 'keep'], 'the running servers are unchanged');

  const home = tempHome();
  t.teardown(() => rmSync(home, { recursive: true, force: true }));
  const long = join(dir, 'long.yaml');
  writeFileSync(long, ['version: 1', 'servers:', ...off('mine', 'n'.repeat(61)), ''].join('\n'));
  const start = await runCli(home, 'serve', '--config', long);
  t.equal(start.code, EXIT.INVALID_INPUT, 'coffer serve exits 6');
  t.match(start.stderr, /line 4, column 16: servers\[0\]\.namespace: namespace "n+" is 61 characters/);
});

t.test('a config file another user owns or could write (or swap) is refused: coffer would run the commands they put in it', async (t) => {
  const dir = configDir();
  const me = statSync(dir).uid;
  const path = join(dir, 'coffer.yaml');
  writeFileSync(path, 'version: 1\nservers: []\n', { mode: 0o644 });
  t.same(loadConfigFile(path, {}).servers, [], "the user's own file, writable by the user only, is read");
  const refusedWith = (message: RegExp, why: string) => t.throws(() => loadConfigFile(path, {}), { code: 'CONFIG_FILE_INVALID', errors: [{ field: '(file)', message }] }, why);
  chmodSync(path, 0o666);
  refusedWith(/^can be written by other users \(mode 0666\)/, 'writable by others');
  chmodSync(path, 0o644);
  chownSync(path, me + 1, me + 1);
  refusedWith(/^belongs to uid \d+, not to you/, "another user's file");
  chownSync(path, 0, 0);
  t.equal(othersControl(path, me + 1), null, "root's file is trusted like the user's own (root could change any file of the user's anyway)");
  chownSync(path, me, me);
  chmodSync(dir, 0o777);
  refusedWith(/can be written by other users \(mode 0777, not sticky\)/, 'in a directory others may write to (they could put their own file in its place)');
  chmodSync(dir, 0o700);

  // Also invalid otherwise: a file read despite its mode is refused all the same, and no daemon stays running.
  writeFileSync(path, 'version: 2\n');
  chmodSync(path, 0o646);
  const home = tempHome();
  t.teardown(() => rmSync(home, { recursive: true, force: true }));
  const served = await runCli(home, 'serve', '--config', path);
  t.equal(served.code, EXIT.INVALID_INPUT, 'coffer serve exits 6');
  t.match(served.stderr, 'can be written by other users (mode 0646)');
});

/**
 * A ConfigFileSync of the file at `path` (written with `text`) over an in-memory registry whose
 * add fails while `down()` says so, watching with a short debounce; `handled` runs a change
 * of the file and answers how it was handled.
 */
async function watchedSync(t: Test, text: string, down: () => boolean = () => false) {
  const dir = configDir();
  const path = join(dir, 'coffer.yaml');
  writeFileSync(path, text);
  const running = new Map<string, ServerConfig>();
  const registry = {
    all: () => [...running.values()],
    async add(config: ServerConfig) {
      if (down()) throw new Error('the database writer is down');
      running.set(config.name, config);
    },
    async update() {},
    async remove(name: string) {
      running.delete(name);
    },
    namespaceIssue: () => null,
  };
  const toolsets = { list: () => [], add: async () => {}, update: async () => {}, remove: async () => {} };
  const sync = new ConfigFileSync(loadConfigFile(path, {}), {
    home: dir,
    registry: registry as unknown as ConfigSyncDeps['registry'],
    toolsets: toolsets as unknown as ConfigSyncDeps['toolsets'],
    clients: async () => [],
    log: new Logger(null, 'error'),
    publish: () => {},
    audit: async () => {},
    env: {},
    debounceMs: 10,
  });
  await sync.start();
  sync.watch();
  t.teardown(() => sync.close());
  const handled = async (change: () => void): Promise<ConfigFileStatus['last'] | null> => {
    const before = sync.status().last.at;
    change();
    return waitFor('the change to be handled', async () => (sync.status().last.at > before ? sync.status().last : null), 3_000).catch(() => null);
  };
  return { path, running, sync, handled };
}

t.test('a change that stopped part-way is applied when the same text is saved again', async (t) => {
  let down = true;
  const { path, running, handled } = await watchedSync(t, 'version: 1\nservers: []\n', () => down);
  const text = 'version: 1\nservers:\n  - {name: late, transport: {type: stdio, command: x}}\n';
  t.match(await handled(() => writeFileSync(path, text)), { status: 'failed', message: /the database writer is down/ });
  down = false;
  t.match(await handled(() => writeFileSync(path, text)), { status: 'applied' }, 'the same text saved again is retried');
  t.same([...running.keys()], ['late']);
});

t.test('a file that could not be read for a moment, then is back as it was, is applied again (the status does not stay refused)', async (t) => {
  const text = 'version: 1\nservers:\n  - {name: one, transport: {type: stdio, command: x}}\n';
  const { path, running, sync, handled } = await watchedSync(t, text);
  t.match(await handled(() => rmSync(path)), { status: 'refused', errors: [{ message: /^cannot be read/ }] });
  t.match(await handled(() => writeFileSync(path, text)), { status: 'applied' }, 'the same text back: applied (nothing to change)');
  t.same(sync.status().last.errors, []);
  t.same([...running.keys()], ['one']);
});

t.test('ownership survives a restart: a server taken out of the file while the daemon was stopped is removed at the next start', async (t) => {
  const dir = configDir();
  const path = join(dir, 'coffer.yaml');
  writeFileSync(path, yamlFile({ name: 'one' }, { name: 'two' }));
  const home = tempHome();
  const first = await startGateway({ configFile: path }, home);
  await first.addServer({ name: 'api-made', transport: { type: 'stdio', command: process.execPath, args: [FIXTURE, '--name', 'api-made'] } });
  await first.daemon.stop();
  writeFileSync(path, yamlFile({ name: 'one' }));
  const second = await startGateway({ configFile: path }, home);
  t.same(await names(second), ['api-made', 'one']);
  await second.daemon.stop();
  const third = await startGateway({}, home);
  t.teardown(() => third.close());
  t.equal((await third.api('PATCH', '/servers/one', { description: 'now the API\'s' })).status, 200, 'without --config the file owns nothing');
});

t.test('coffer serve --config refuses an invalid file with its line and column (exit 6) and starts nothing', async (t) => {
  const dir = configDir();
  const path = join(dir, 'coffer.json');
  writeFileSync(path, '{\n  "version": 1,\n  "servers": [\n    {"name": "x", "transport": {"type": "carrier-pigeon"}}\n  ]\n}\n');
  const home = tempHome();
  t.teardown(() => rmSync(home, { recursive: true, force: true }));
  const result = await runCli(home, 'serve', '--config', path);
  t.equal(result.code, EXIT.INVALID_INPUT);
  t.match(result.stderr, `config file ${path} refused; the daemon did not start`);
  t.match(result.stderr, 'line 4, column 41: servers[0].transport.type: must be one of "stdio", "http", "sse"');
  t.notOk(existsSync(join(home, 'coffer.db')), 'no database was opened');
});

/** Every file under `dir`, as text. */
function filesUnder(dir: string): { path: string; text: string }[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((item) => item.isFile())
    .map((item) => join(item.parentPath, item.name))
    .map((path) => ({ path, text: readFileSync(path).toString('latin1') }));
}

t.test('config export writes secrets as ${VAR} references, never in clear; the exported file starts an equal registry', async (t) => {
  const WEB_SECRET = `web-${randomBytes(12).toString('hex')}`;
  const API_SECRET = `ghp_${randomBytes(18).toString('hex')}`;
  const REMOTE_SECRET = `remote-${randomBytes(12).toString('hex')}`;
  const OAUTH_SECRET = `oauth-${randomBytes(12).toString('hex')}`;
  process.env.CF_WEB_TOKEN = WEB_SECRET;
  process.env.CF_REMOTE_CLIENT = 'coffer-remote';
  process.env.CF_REMOTE_SECRET = REMOTE_SECRET;
  const dir = configDir();
  const path = join(dir, 'coffer.yaml');
  writeFileSync(
    path,
    yamlFile({ name: 'alpha' }) +
      [
        '  - name: web',
        '    enabled: false',
        '    transport: {type: http, url: "http://127.0.0.1:9/mcp", headers: {Authorization: "Bearer ${CF_WEB_TOKEN}"}}',
        '  - name: remote',
        '    enabled: false',
        '    transport: {type: http, url: "http://127.0.0.1:9/mcp", oauth: {client_id: "${CF_REMOTE_CLIENT}", client_secret: "${CF_REMOTE_SECRET}"}}',
        '',
      ].join('\n'),
  );
  const a = await startGateway({ configFile: path });
  t.teardown(() => a.close());
  const admin = await connectAdmin({ port: a.daemon.port, token: a.daemon.token });
  t.teardown(() => admin.close());
  const events: CofferEvent[] = [];
  admin.onEvent((event) => events.push(event));
  await admin.request({ type: 'subscribe' });
  await a.addServer({
    name: 'api-made',
    transport: { type: 'stdio', command: process.execPath, args: [FIXTURE, '--name', 'api-made', `--instructions=${API_SECRET}`], env: { API_KEY: API_SECRET } },
  });
  const apiRemoteAdded = await a.api('POST', '/servers', {
    name: 'api-remote',
    enabled: false,
    transport: { type: 'http', url: 'http://127.0.0.1:9/mcp', oauth: { client_id: 'coffer-api', client_secret: OAUTH_SECRET, grant_type: 'client_credentials' } },
  });
  t.equal(apiRemoteAdded.status, 201);
  await waitReady(a.api, 'alpha');

  const yaml = await runCli(a.home, 'config', 'export');
  t.equal(yaml.code, EXIT.OK, yaml.stderr);
  const json = await runCli(a.home, 'config', 'export', '--format', 'json');
  const exported = JSON.parse(json.stdout) as { version: number; servers: { name: string; transport: Record<string, any> }[] };
  t.same(exported.servers.map((server) => server.name), ['alpha', 'api-made', 'api-remote', 'remote', 'web']);
  const [alpha, apiMade, apiRemote, remote, web] = exported.servers.map((server) => server.transport);
  t.same(alpha!.env, { FIXTURE_TOKEN: '${CF_TEST_TOKEN}' }, "the file's own references");
  t.equal(alpha!.args.at(-1), '--instructions=${CF_TEST_TOKEN}');
  t.same(web!.headers, { Authorization: 'Bearer ${CF_WEB_TOKEN}' });
  t.same(remote!.oauth, { client_id: '${CF_REMOTE_CLIENT}', client_secret: '${CF_REMOTE_SECRET}' }, 'the OAuth client as the file wrote it');
  t.same(apiRemote!.oauth, { client_id: '${API_REMOTE_CLIENT_ID}', client_secret: '${API_REMOTE_CLIENT_SECRET}', grant_type: '${API_REMOTE_GRANT_TYPE}' }, 'every sealed OAuth value as a reference');
  t.same(apiMade!.env, { API_KEY: '${API_MADE_API_KEY}' }, 'a server of the API gets references named after it');
  t.equal(apiMade!.args.at(-1), '--instructions=${API_MADE_ARG_4}', 'a secret-looking argument too');
  t.match(
    yaml.stderr,
    'reads these environment variables: API_MADE_API_KEY, API_MADE_ARG_4, API_REMOTE_CLIENT_ID, API_REMOTE_CLIENT_SECRET, API_REMOTE_GRANT_TYPE, CF_REMOTE_CLIENT, CF_REMOTE_SECRET, CF_TEST_TOKEN, CF_WEB_TOKEN',
  );

  t.test('no secret in clear: database, logs, REST answers, audit, admin-WS events, exported file', async (t) => {
    const rest = JSON.stringify([(await a.api('GET', '/servers')).body, (await a.api('GET', '/audit?limit=1000')).body, (await a.api('GET', '/config')).body]);
    const places = [
      ...filesUnder(a.home).filter((file) => !file.path.endsWith('secret.key')),
      { path: 'REST answers', text: rest },
      { path: 'admin-WS events', text: JSON.stringify(events) },
      { path: 'export (yaml)', text: yaml.stdout + yaml.stderr },
      { path: 'export (json)', text: json.stdout + json.stderr },
    ];
    t.ok(places.some((place) => place.path.endsWith('coffer.db')), 'the database is scanned');
    t.ok(events.some((event) => event.type === 'audit'), 'events were seen');
    for (const place of places) {
      for (const [what, secret] of [['file env/arg', SECRET], ['file header', WEB_SECRET], ['API env/arg', API_SECRET], ['file OAuth client', REMOTE_SECRET], ['API OAuth client', OAUTH_SECRET]] as const) {
        t.notOk(place.text.includes(secret), `${what} secret not in ${place.path}`);
      }
    }
  });

  t.test('export → serve --config → export: the same file, and the values reach the upstreams', async (t) => {
    process.env.API_MADE_API_KEY = API_SECRET;
    process.env.API_MADE_ARG_4 = API_SECRET;
    Object.assign(process.env, { API_REMOTE_CLIENT_ID: 'coffer-api', API_REMOTE_CLIENT_SECRET: OAUTH_SECRET, API_REMOTE_GRANT_TYPE: 'client_credentials' });
    const copy = join(configDir(), 'exported.yaml');
    writeFileSync(copy, yaml.stdout);
    const b = await startGateway({ configFile: copy });
    t.teardown(() => b.close());
    const again = await runCli(b.home, 'config', 'export');
    t.equal(again.stdout, yaml.stdout, 'the round trip is exact');
    await waitReady(b.api, 'alpha');
    await waitReady(b.api, 'api-made');
    const client = await b.client();
    const getenv = async (tool: string, name: string) => {
      const result = (await client.callTool({ name: tool, arguments: { name } })) as { content: { text: string }[] };
      return (JSON.parse(result.content[0]!.text) as { value: string | null }).value;
    };
    t.equal(await getenv('alpha__getenv', 'FIXTURE_TOKEN'), SECRET);
    t.equal(await getenv('api-made__getenv', 'API_KEY'), API_SECRET);
    t.match(client.getInstructions(), API_SECRET, 'the argument read from ${API_MADE_ARG_4} reached the upstream');
    t.same(((await b.api('GET', '/config')).body.file as ConfigFileStatus).servers, ['alpha', 'api-made', 'api-remote', 'remote', 'web']);
    t.same(Object.keys((await b.api('GET', '/servers/api-remote')).body.transport.oauth).sort(), ['client_id', 'client_secret', 'grant_type'], 'the OAuth client came through the file');
  });
});
