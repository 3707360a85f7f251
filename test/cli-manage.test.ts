// The management CLI beyond add/list/show/remove: update, enable/disable, cap,
// refresh, test, import, audit, rotate-token. Pure parts first (ref parsing,
// client config files), then the real binary as a child process against a
// real daemon in a temporary COFFER_HOME with real fixture upstreams.
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import t from 'tap';
import { homeMcpTransport } from './helpers/mcp-post.js';
import { parseBooleanValue, parsePositiveInt, splitAction } from '../src/cli/args.js';
import { parseCapabilityRef, parseCapabilityRefs } from '../src/cli/cap-ref.js';
import { parseSince } from '../src/cli/commands/audit.js';
import { EXIT } from '../src/cli/exit-codes.js';
import { parseClientConfig, parseJsonc, projectDirOf, sanitiseServerName, type ImportEntry } from '../src/cli/import-config.js';
import { FIXTURE } from './fixtures/fixture-servers.js';
import { fixtureLine, runCli, startCliDaemon, tempDir, usageCode } from './helpers/cli.js';

/** A port nothing listens on (1: privileged, refused at once on loopback). */
const DEAD_URL = 'http://127.0.0.1:1/mcp';

// ---------------------------------------------------------------- pure parts

t.test('capability refs: split at the first ":" only, every ref checked first', async (t) => {
  t.same(parseCapabilityRef('tool:echo'), { capability_type: 'tool', capability_key: 'echo' });
  t.same(parseCapabilityRef('prompt:greet'), { capability_type: 'prompt', capability_key: 'greet' });
  t.same(parseCapabilityRef('resource:fixture://items/{id}'), { capability_type: 'resource', capability_key: 'fixture://items/{id}' });
  t.same(parseCapabilityRef('resource:file:///tmp/a:b'), { capability_type: 'resource', capability_key: 'file:///tmp/a:b' });
  t.same(parseCapabilityRef('tool:a:b'), { capability_type: 'tool', capability_key: 'a:b' });
  for (const bad of ['echo', 'tool:', 'tools:echo', ':echo', 'Tool:echo', '']) {
    t.equal(usageCode(() => parseCapabilityRef(bad)), EXIT.USAGE, `'${bad}' is a usage error`);
  }
  t.equal(usageCode(() => parseCapabilityRefs([])), EXIT.USAGE, 'no ref at all');
  t.equal(usageCode(() => parseCapabilityRefs(['tool:a', 'nope'])), EXIT.USAGE, 'one bad ref fails the lot');
  t.same(parseCapabilityRefs(['tool:a', 'tool:a', 'prompt:a']).length, 2, 'repeats collapse');
});

t.test('argument helpers: action word, booleans, limits, --since', async (t) => {
  t.same(splitAction(['cap', 'list', 'x'], []), { action: 'cap', rest: ['list', 'x'] });
  t.same(splitAction(['--home', '/h', 'list', '--json'], []), { action: 'list', rest: ['--home', '/h', '--json'] });
  t.same(splitAction(['--description', 'x', 'add', 'n'], ['description']), { action: 'add', rest: ['--description', 'x', 'n'] });
  t.same(splitAction(['--description=x', 'add'], ['description']), { action: 'add', rest: ['--description=x'] });
  t.same(splitAction(['--json'], []), { action: undefined, rest: ['--json'] });
  t.equal(parseBooleanValue('true', '--enabled'), true);
  t.equal(parseBooleanValue('No', '--enabled'), false);
  t.equal(usageCode(() => parseBooleanValue('maybe', '--enabled')), EXIT.USAGE);
  t.equal(parsePositiveInt('5', '--limit'), 5);
  t.equal(parsePositiveInt(undefined, '--limit'), undefined);
  for (const bad of ['0', '-1', '1.5', 'x', '']) t.equal(usageCode(() => parsePositiveInt(bad, '--limit')), EXIT.USAGE, `--limit ${bad}`);
  const now = Date.parse('2025-01-31T12:00:00Z');
  t.equal(parseSince('2h', now), '2025-01-31T10:00:00.000Z');
  t.equal(parseSince('7d', now), '2025-01-24T12:00:00.000Z');
  t.equal(parseSince('2025-01-02T03:04:05Z'), '2025-01-02T03:04:05.000Z');
  t.equal(parseSince('2025-01-02'), '2025-01-02T00:00:00.000Z');
  for (const bad of ['yesterday', '12', '2h ago']) t.equal(usageCode(() => parseSince(bad)), EXIT.USAGE, `--since ${bad}`);
});

t.test('import: JSONC and names', async (t) => {
  const jsonc = `{
    // a comment, "with quotes"
    "servers": { /* block */ "a": { "command": "x", "args": ["//not a comment", "a,}"], }, },
  }`;
  t.same(parseJsonc(jsonc), { servers: { a: { command: 'x', args: ['//not a comment', 'a,}'] } } });
  t.same(parseJsonc('[1, 2, /* x */ ]'), [1, 2]);
  t.equal(parseJsonc('"a\\"//b"'), 'a"//b', 'an escaped quote does not end a string');
  t.throws(() => parseJsonc('{\n  "servers": {\n    "a": 1\n    "b": 2\n  }\n}'), { name: 'ImportFileError', message: 'not valid JSON: comma expected at line 4, column 5' });
  t.throws(() => parseJsonc('  '), { name: 'ImportFileError', message: /not valid JSON/ });
  const deep = `{"mcpServers": {"a": {"command": "x", "args": ${'['.repeat(5_000)}${']'.repeat(5_000)}}}}`;
  t.throws(() => parseJsonc(deep), { name: 'ImportFileError', message: /^nested deeper than 64 levels.* at line 1, column \d+$/ }, 'a deep file is refused, not a stack overflow');
  t.throws(() => parseJsonc('{"mcpServers": {\n "a": {"command": "x"},\n "a": {"command": "y"}}}'), { name: 'ImportFileError', message: 'not valid JSON: the key "a" is written twice in one object at line 3, column 2' }, 'an entry written twice is refused: the last would win unseen');
  const keys = parseJsonc('{"__proto__": {"command": "x"}, "b": 1, /* c */}') as Record<string, unknown>;
  t.same(Object.keys(keys), ['__proto__', 'b'], 'a "__proto__" key is a key, as JSON.parse reads it');
  t.equal(Object.getPrototypeOf(keys), Object.prototype);
  const names: Array<[string, string]> = [
    ['My Server', 'My-Server'],
    ['github/mcp', 'github-mcp'],
    ['a__b', 'a_b'],
    ['café', 'cafe'],
    ['!!!', 'server'],
    ['-x-', 'x'],
    ['x'.repeat(80), 'x'.repeat(64)],
  ];
  for (const [name, suggested] of names) t.equal(sanitiseServerName(name), suggested, name);
});

type Expected = { name: string; transport?: Record<string, unknown>; enabled?: boolean; description?: string; skip?: string; match?: RegExp; suggested?: string; notes?: RegExp };

const IMPORT_CASES: Array<{ title: string; text: string; format: string; expect: Expected[] }> = [
  {
    title: 'Claude Desktop / Cursor stdio: command, args, env',
    format: 'mcpServers',
    text: JSON.stringify({
      globalShortcut: 'Ctrl+Space',
      mcpServers: {
        files: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/tmp'], env: { A: '1' } },
        bare: { command: 'uvx' },
      },
    }),
    expect: [
      { name: 'files', transport: { type: 'stdio', command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/tmp'], env: { A: '1' }, cwd: null } },
      { name: 'bare', transport: { type: 'stdio', command: 'uvx', args: [], env: {}, cwd: null } },
    ],
  },
  {
    title: 'Claude Code .mcp.json: type stdio/http/sse, url, headers, ${VAR} skipped',
    format: 'mcpServers',
    text: JSON.stringify({
      mcpServers: {
        local: { type: 'stdio', command: 'node', args: ['s.js'], env: {} },
        remote: { type: 'http', url: 'https://api.example.com/mcp', headers: { Authorization: 'Bearer abc' } },
        legacy: { type: 'sse', url: 'https://api.example.com/sse' },
        templated: { type: 'http', url: '${API_BASE:-https://x}/mcp', headers: { Authorization: 'Bearer ${TOKEN}' } },
        websocket: { type: 'ws', url: 'ws://x' },
      },
    }),
    expect: [
      { name: 'local', transport: { type: 'stdio', command: 'node', args: ['s.js'], env: {}, cwd: null } },
      { name: 'remote', transport: { type: 'http', url: 'https://api.example.com/mcp', headers: { Authorization: 'Bearer abc' } } },
      { name: 'legacy', transport: { type: 'sse', url: 'https://api.example.com/sse', headers: {} } },
      { name: 'templated', skip: 'unsupported', match: /\$\{TOKEN\} \(an environment variable\)/ },
      { name: 'websocket', skip: 'unsupported', match: /transport type "ws"/ },
    ],
  },
  {
    title: 'Cursor: url without type (an /sse path is the legacy transport), client-only fields noted',
    format: 'mcpServers',
    text: JSON.stringify({
      mcpServers: {
        streamable: { url: 'http://localhost:3000/mcp' },
        old: { url: 'http://localhost:3000/sse?x=1' },
        cline: { command: 'x', autoApprove: ['a'], disabled: true, description: 'from cline' },
      },
    }),
    expect: [
      { name: 'streamable', transport: { type: 'http', url: 'http://localhost:3000/mcp', headers: {} } },
      { name: 'old', transport: { type: 'sse', url: 'http://localhost:3000/sse?x=1', headers: {} } },
      { name: 'cline', enabled: false, description: 'from cline', notes: /ignored 'autoApprove'/ },
    ],
  },
  {
    title: 'VS Code mcp.json (JSONC): servers with type, envFile and ${input:...} skipped',
    format: 'vscode',
    text: `{
      "inputs": [{ "type": "promptString", "id": "key", "password": true }],
      "servers": {
        // stdio
        "gh": { "type": "stdio", "command": "docker", "args": ["run", "-i", "ghcr.io/github/github-mcp-server"], "cwd": "/srv" },
        "web": { "type": "http", "url": "https://example.com/mcp", "headers": { "X-Key": "v" } },
        "prompted": { "type": "stdio", "command": "x", "env": { "KEY": "\${input:key}" } },
        "withenvfile": { "type": "stdio", "command": "x", "envFile": "/tmp/.env" },
      },
    }`,
    expect: [
      { name: 'gh', transport: { type: 'stdio', command: 'docker', args: ['run', '-i', 'ghcr.io/github/github-mcp-server'], env: {}, cwd: '/srv' } },
      { name: 'web', transport: { type: 'http', url: 'https://example.com/mcp', headers: { 'X-Key': 'v' } } },
      { name: 'prompted', skip: 'unsupported', match: /\$\{input:key\} \(a VS Code input prompt\)/ },
      { name: 'withenvfile', skip: 'unsupported', match: /'envFile'/ },
    ],
  },
  {
    title: 'VS Code settings.json: mcp.servers',
    format: 'vscode-settings',
    text: JSON.stringify({ 'editor.fontSize': 14, mcp: { servers: { s: { type: 'sse', url: 'http://127.0.0.1:9/sse' } } } }),
    expect: [{ name: 's', transport: { type: 'sse', url: 'http://127.0.0.1:9/sse', headers: {} } }],
  },
  {
    title: 'invalid entries: names, shapes, values',
    format: 'mcpServers',
    text: JSON.stringify({
      mcpServers: {
        'my server': { command: 'x' },
        'a__b': { command: 'x' },
        nothing: {},
        both: { command: 'x', url: 'http://x' },
        relative: { command: 'x', cwd: 'rel/dir' },
        badargs: { command: 'x', args: 'not a list' },
        badurl: { url: 'ftp://x' },
        notobject: 'x',
      },
    }),
    expect: [
      { name: 'my server', skip: 'invalid_name', suggested: 'my-server', match: /add it as 'my-server'/ },
      { name: 'a__b', skip: 'invalid_name', suggested: 'a_b' },
      { name: 'nothing', skip: 'invalid_config', match: /neither "command" nor "url"/ },
      { name: 'both', skip: 'invalid_config', match: /stdio server takes/ },
      { name: 'relative', skip: 'invalid_config', match: /transport\.cwd: must be an absolute path/ },
      { name: 'badargs', skip: 'invalid_config', match: /transport\.args/ },
      { name: 'badurl', skip: 'invalid_config', match: /transport\.url/ },
      { name: 'notobject', skip: 'invalid_config' },
    ],
  },
];

t.test('import: each client format', async (t) => {
  for (const { title, text, format, expect } of IMPORT_CASES) {
    t.test(title, async (t) => {
      const parsed = parseClientConfig(text);
      t.equal(parsed.format, format);
      t.same(parsed.entries.map((entry) => entry.name), expect.map((e) => e.name), 'every entry, in file order');
      for (const [index, want] of expect.entries()) {
        const entry = parsed.entries[index] as ImportEntry;
        if (want.skip) {
          t.equal(entry.skip?.reason, want.skip, `${want.name}: skipped (${want.skip})`);
          t.notOk(entry.config);
          if (want.match) t.match(entry.skip?.message, want.match, `${want.name}: why`);
          if (want.suggested) t.equal(entry.skip?.suggested_name, want.suggested);
        } else {
          t.notOk(entry.skip, `${want.name}: importable (${entry.skip?.message ?? ''})`);
          if (want.transport) t.same(entry.config?.transport, want.transport, `${want.name}: transport`);
          t.equal(entry.config?.enabled, want.enabled ?? true);
          t.equal(entry.config?.description, want.description ?? '');
          if (want.notes) t.match(entry.notes.join('\n'), want.notes);
        }
      }
    });
  }
  for (const bad of ['not json', '[]', '{"other": {}}', '{"mcpServers": []}']) {
    t.throws(() => parseClientConfig(bad), { name: 'ImportFileError' }, `unusable file: ${bad}`);
  }
  t.same(parseClientConfig('{"mcpServers": {}}').entries, [], 'an empty section is fine');
});

t.test('import: project files run their stdio servers in the project directory', async (t) => {
  t.equal(projectDirOf('/home/me/proj/.mcp.json'), '/home/me/proj');
  t.equal(projectDirOf('/home/me/proj/.vscode/mcp.json'), '/home/me/proj');
  t.equal(projectDirOf('/home/me/.cursor/mcp.json'), undefined);
  t.equal(projectDirOf('/home/me/Library/claude_desktop_config.json'), undefined);
  const text = JSON.stringify({ mcpServers: { a: { command: 'node', args: ['./build/index.js'] }, b: { command: 'x', cwd: '/own' }, c: { url: 'http://x/mcp' } } });
  const [a, b, c] = parseClientConfig(text, { projectDir: '/home/me/proj' }).entries;
  t.equal(a!.config!.transport.cwd, '/home/me/proj');
  t.match(a!.notes.join(), /runs in \/home\/me\/proj/);
  t.equal(b!.config!.transport.cwd, '/own', 'its own cwd wins');
  t.notOk('cwd' in c!.config!.transport, 'not for http');
  t.equal(parseClientConfig(text).entries[0]!.config!.transport.cwd, null, 'no project: no cwd');
});

// ------------------------------------------------- against a running daemon

t.test('without a daemon: the new commands exit 3; usage errors still exit 2 first', async (t) => {
  const home = tempDir('coffer-cli-manage-');
  const file = join(home, 'claude.json');
  writeFileSync(file, JSON.stringify({ mcpServers: { x: { command: 'x' } } }));
  const unreachable = [
    ['mcp', 'cap', 'list', 'x'],
    ['mcp', 'cap', 'disable', 'x', 'tool:a'],
    ['mcp', 'update', 'x', '--description', 'd'],
    ['mcp', 'enable', 'x'],
    ['mcp', 'refresh', 'x', '--json'],
    ['mcp', 'test', 'x'],
    ['mcp', 'import', file],
    ['audit', 'list', '--json'],
    ['daemon', 'rotate-token'],
  ];
  // In parallel: each is a process start.
  for (const [args, result] of await Promise.all(unreachable.map(async (args) => [args, await runCli(home, ...args)] as const))) {
    t.equal(result.code, EXIT.DAEMON_UNREACHABLE, `${args.join(' ')} exits 3`);
    t.match(result.stderr, /^error: DAEMON_UNREACHABLE: .*coffer daemon start/m);
    t.equal(result.stdout, '', 'nothing on stdout');
  }
  const usage = [
    ['mcp', 'cap', 'disable', 'x', 'echo'],
    ['mcp', 'cap', 'disable', 'x'],
    ['mcp', 'cap', 'frob', 'x'],
    ['mcp', 'cap'],
    ['mcp', 'update', 'x'],
    ['mcp', 'update', 'x', '--enabled', 'maybe'],
    ['mcp', 'update', 'x', '--auto-enable', '--no-auto-enable'],
    ['mcp', 'update', 'x', '--stdio', 'a', '--http', 'http://x'],
    ['mcp', 'update', 'x', '--stdio', 'a', '--header', 'A=1'],
    ['mcp', 'enable'],
    ['mcp', 'test', 'x', 'y'],
    ['mcp', 'import'],
    ['audit', 'list', '--limit', '0'],
    ['audit', 'list', '--since', 'yesterday'],
    ['audit', 'frob'],
    ['mcp', 'list', '--stdio', 'x'],
  ];
  for (const [args, result] of await Promise.all(usage.map(async (args) => [args, await runCli(home, ...args)] as const))) {
    t.equal(result.code, EXIT.USAGE, `${args.join(' ')} exits 2`);
    t.match(result.stderr, /^error: USAGE: /);
  }
  const help = await runCli(home, '--help');
  t.equal(help.code, EXIT.OK);
  for (const word of ['mcp update', 'mcp cap list', 'cap enable|disable', 'mcp refresh', 'test NAME', 'mcp import FILE', 'audit list', 'rotate-token']) {
    t.match(help.stdout, word, `--help names ${word}`);
  }
  for (let code = 0; code <= 7; code++) t.match(help.stdout, new RegExp(`^ {2}${code} {2}\\S`, 'm'), `--help documents exit ${code}`);
  // The synopsis is written by hand: every action each command's own help lists must be in it.
  const synopsis = help.stdout.split('\n').filter((line) => line.startsWith('  coffer '));
  const inSynopsis = (command: string, words: string[]) =>
    synopsis.some((line) => line.startsWith(`  coffer ${command} `) && words.every((word) => new RegExp(`(^|[ |])${word}([ |]|$)`).test(line)));
  for (const command of ['mcp', 'client', 'toolset', 'daemon', 'config', 'audit', 'retention']) {
    const actions = [...(await runCli(home, command, '--help')).stdout.matchAll(/^ {2}([a-z][a-z-]*)(?: (list|enable|disable|set)\b)?/gm)];
    t.ok(actions.length > 0, `${command} --help lists its actions`);
    for (const [, action, sub] of actions) {
      const words = action === 'cap' ? ['cap', sub!] : [action!];
      t.ok(inSynopsis(command, words), `--help's synopsis has coffer ${command} ${words.join(' ')}`);
    }
  }
  const actionHelp = await runCli(home, 'mcp', 'cap', 'enable', '--help');
  t.equal(actionHelp.code, EXIT.OK);
  t.match(actionHelp.stdout, /^Usage: coffer mcp cap enable NAME REF\.\.\./);
  t.match((await runCli(home, 'audit', '--help')).stdout, /^ {2}list \[--server NAME\]/m);
});

t.test('against a running daemon', async (t) => {
  const { home, cli, json, waitReady } = await startCliDaemon(t, 'coffer-cli-manage-');
  const mcpClient = async (): Promise<Client> => {
    const client = new Client({ name: 'cli-manage-test', version: '1.0.0' });
    await client.connect(homeMcpTransport(home));
    t.teardown(() => client.close().catch(() => undefined));
    return client;
  };
  const getenv = async (client: Client, server: string, name: string): Promise<unknown> => {
    const result = (await client.callTool({ name: `${server}__getenv`, arguments: { name } })) as { content: Array<{ text: string }> };
    return (JSON.parse(result.content[0]!.text) as { value: unknown }).value;
  };

  const added = await cli('mcp', 'add', 'alpha', '--stdio', fixtureLine('--name', 'alpha', '--resources', '--prompts'), '--env', 'KEEP=kept-secret', '--env', 'DROP=x');
  t.equal(added.code, EXIT.OK, added.stderr);
  await waitReady('alpha');

  await t.test('mcp update', async (t) => {
    // Listed once while auto-enable is on: every capability is known and enabled.
    t.equal((await json('mcp', 'cap', 'list', 'alpha')).tools.state, 'live');
    const updated = await json('mcp', 'update', 'alpha', '--env', 'NEW=new-secret', '--unset-env', 'DROP', '--description', 'the alpha', '--no-auto-enable');
    t.match(updated.server, { name: 'alpha', description: 'the alpha', auto_enable_new_capabilities: false, transport: { type: 'stdio' } });
    t.same(Object.keys(updated.server.transport.env).sort(), ['KEEP', 'NEW'], 'env keys: one added, one removed, one kept');
    t.notMatch(JSON.stringify(updated), /secret/, 'no env value is printed');
    await waitReady('alpha');
    const client = await mcpClient();
    t.equal(await getenv(client, 'alpha', 'KEEP'), 'kept-secret', 'a kept key keeps its stored value');
    t.equal(await getenv(client, 'alpha', 'NEW'), 'new-secret');
    t.equal(await getenv(client, 'alpha', 'DROP'), null);

    const human = await cli('mcp', 'update', 'alpha', '--auto-enable', '--enabled', 'true');
    t.equal(human.code, EXIT.OK, human.stderr);
    t.match(human.stdout, /^updated server 'alpha' \(enabled, auto-enable-new-capabilities\)/);
    t.equal((await json('mcp', 'show', 'alpha')).server.auto_enable_new_capabilities, true);

    const wrongMap = await cli('mcp', 'update', 'alpha', '--header', 'A=1');
    t.equal(wrongMap.code, EXIT.INVALID_INPUT, '--header on a stdio server');
    t.match(wrongMap.stderr, /^error: INVALID_INPUT: .*uses stdio/);
    const unknownKey = await cli('mcp', 'update', 'alpha', '--unset-env', 'NOPE');
    t.equal(unknownKey.code, EXIT.INVALID_INPUT);
    const invalid = await cli('mcp', 'update', 'alpha', '--http', 'not a url');
    t.equal(invalid.code, EXIT.INVALID_INPUT);
    t.match(invalid.stderr, /^error: CONFIG_INVALID: /);
    t.match(invalid.stderr, /^ {2}transport\.url: /m, 'the field is named');
    t.equal((await json('mcp', 'show', 'alpha')).server.transport.type, 'stdio', 'nothing changed');
    const missing = await cli('mcp', 'update', 'nope', '--description', 'x');
    t.equal(missing.code, EXIT.NOT_FOUND);
    t.match(missing.stderr, /^error: RESOURCE_NOT_FOUND: /);

    // Another type replaces the transport; back again.
    await json('mcp', 'add', 'beta', '--stdio', fixtureLine('--name', 'beta'));
    const toHttp = await json('mcp', 'update', 'beta', '--http', DEAD_URL, '--header', 'Authorization=Bearer zzz');
    t.same(toHttp.server.transport, { type: 'http', url: DEAD_URL, headers: { Authorization: '[redacted]' } });
    const headerOnly = await json('mcp', 'update', 'beta', '--header', 'X-Other=1');
    t.same(Object.keys(headerOnly.server.transport.headers).sort(), ['Authorization', 'X-Other']);
    const toStdio = await json('mcp', 'update', 'beta', '--stdio', fixtureLine('--name', 'beta'), '--env', 'B=1');
    t.match(toStdio.server.transport, { type: 'stdio', command: process.execPath, env: { B: '[redacted]' }, cwd: null });
    t.notOk('headers' in toStdio.server.transport);
  });

  await t.test('mcp enable / disable', async (t) => {
    const disabled = await json('mcp', 'disable', 'beta');
    t.equal(disabled.server.enabled, false);
    t.equal((await json('mcp', 'show', 'beta')).server.enabled, false);
    const enabled = await cli('mcp', 'enable', 'beta');
    t.equal(enabled.code, EXIT.OK);
    t.match(enabled.stdout, /^enabled server 'beta'/);
    t.equal((await json('mcp', 'show', 'beta')).server.enabled, true);
    t.equal((await cli('mcp', 'disable', 'nope')).code, EXIT.NOT_FOUND);
  });

  await t.test('mcp cap list / enable / disable', async (t) => {
    const view = await json('mcp', 'cap', 'list', 'alpha');
    t.equal(view.server, 'alpha');
    for (const kind of ['tools', 'resources', 'resource_templates', 'prompts']) t.equal(view[kind].state, 'live', `${kind} live`);
    const item = (v: any, kind: string, key: string): any => v[kind].items.find((i: any) => i.key === key);
    t.match(item(view, 'tools', 'echo'), { live: true, enabled: true, name: 'echo', inputSchema: { type: 'object' } });
    t.ok(item(view, 'resources', 'fixture://static'));
    t.ok(item(view, 'resource_templates', 'fixture://items/{id}'));
    t.ok(item(view, 'prompts', 'greet'));

    const human = await cli('mcp', 'cap', 'list', 'alpha');
    t.equal(human.code, EXIT.OK);
    t.match(human.stdout, /^tools: live, 7 \(7 enabled\)$/m);
    t.match(human.stdout, /^ {2}REF +ENABLED +LIVE +LAST SEEN$/m);
    t.match(human.stdout, /^ {2}tool:echo +yes +yes +\d{4}-/m);
    t.match(human.stdout, /^ {2}resource:fixture:\/\/items\/\{id\} +yes/m);

    const refs = ['tool:echo', 'prompt:greet', 'resource:fixture://static', 'resource:fixture://items/{id}'];
    const off = await json('mcp', 'cap', 'disable', 'alpha', ...refs);
    t.equal(off.preferences.filter((row: any) => !row.enabled).length >= refs.length, true);
    const after = await json('mcp', 'cap', 'list', 'alpha');
    t.equal(item(after, 'tools', 'echo').enabled, false);
    t.equal(item(after, 'prompts', 'greet').enabled, false);
    t.equal(item(after, 'resources', 'fixture://static').enabled, false);
    t.equal(item(after, 'resource_templates', 'fixture://items/{id}').enabled, false);
    t.equal(item(after, 'tools', 'whoami').enabled, true, 'others untouched');

    const on = await cli('mcp', 'cap', 'enable', 'alpha', 'tool:echo');
    t.equal(on.code, EXIT.OK, on.stderr);
    t.match(on.stdout, /^enabled on 'alpha': tool:echo$/m);
    t.equal(item(await json('mcp', 'cap', 'list', 'alpha'), 'tools', 'echo').enabled, true);

    const bad = await cli('mcp', 'cap', 'disable', 'alpha', 'tool:whoami', 'whoami');
    t.equal(bad.code, EXIT.USAGE, 'a malformed ref: exit 2');
    const unknown = await cli('mcp', 'cap', 'disable', 'alpha', 'tool:whoami', 'tool:no_such_tool');
    t.equal(unknown.code, EXIT.NOT_FOUND, 'an unknown key: exit 4');
    t.match(unknown.stderr, /^error: RESOURCE_NOT_FOUND: .*no_such_tool/);
    t.equal(item(await json('mcp', 'cap', 'list', 'alpha'), 'tools', 'whoami').enabled, true, 'nothing changed (all or nothing)');
    t.equal((await cli('mcp', 'cap', 'list', 'nope')).code, EXIT.NOT_FOUND);
  });

  await t.test('mcp refresh', async (t) => {
    const view = await json('mcp', 'refresh', 'alpha');
    t.equal(view.server, 'alpha');
    t.equal(view.tools.state, 'live');
    t.ok(view.tools.items.some((i: any) => i.key === 'echo' && i.live));
    const human = await cli('mcp', 'refresh', 'alpha');
    t.equal(human.code, EXIT.OK);
    t.match(human.stdout, /^prompts: live, 1 \(0 enabled\)$/m);
    t.equal((await cli('mcp', 'refresh', 'nope')).code, EXIT.NOT_FOUND);
  });

  await t.test('mcp test: ok, and a dead URL exits 7', async (t) => {
    const ok = await json('mcp', 'test', 'alpha');
    t.match(ok, { ok: true, server_info: { name: 'alpha' } });
    t.type(ok.latency_ms, 'number');
    const human = await cli('mcp', 'test', 'alpha');
    t.equal(human.code, EXIT.OK);
    t.match(human.stdout, /^ok: +yes$/m);

    await json('mcp', 'add', 'dead', '--http', DEAD_URL);
    const failed = await cli('mcp', 'test', 'dead', '--json');
    t.equal(failed.code, EXIT.UPSTREAM_TEST_FAILED);
    t.match(JSON.parse(failed.stdout), { ok: false });
    t.match(failed.stderr, /^error: UPSTREAM_TEST_FAILED: connection test of 'dead' failed: /);
    const failedHuman = await cli('mcp', 'test', 'dead');
    t.equal(failedHuman.code, EXIT.UPSTREAM_TEST_FAILED);
    t.match(failedHuman.stdout, /^ok: +no$/m);
    t.equal((await cli('mcp', 'test', 'nope')).code, EXIT.NOT_FOUND);
  });

  await t.test('upstream down: the known capabilities, marked not live, and exit 1', async (t) => {
    // alpha's preferences stay when its transport changes (R6: shown from them).
    await json('mcp', 'update', 'alpha', '--http', DEAD_URL);
    const down = await cli('mcp', 'cap', 'list', 'alpha', '--json');
    t.equal(down.code, EXIT.ERROR);
    const envelope = JSON.parse(down.stdout);
    t.match(envelope.error, { code: /^UPSTREAM_(UNAVAILABLE|TIMEOUT)$/ });
    t.match(
      envelope.error.details.known.find((k: any) => k.capability_key === 'greet'),
      { capability_type: 'prompt', enabled: false },
      'known keys with their flags',
    );
    t.match(down.stderr, /^error: UPSTREAM_(UNAVAILABLE|TIMEOUT): /);
    const human = await cli('mcp', 'cap', 'list', 'alpha');
    t.equal(human.code, EXIT.ERROR);
    t.match(human.stdout, /known capabilities \(not live\)/);
    t.match(human.stdout, /^ {2}prompt:greet +no +no /m);
    t.match(human.stdout, /^ {2}tool:echo +yes +no /m);
    const refresh = await cli('mcp', 'refresh', 'alpha');
    t.equal(refresh.code, EXIT.ERROR);
    t.match(refresh.stdout, /^ {2}tool:echo +yes +no /m);
    // A switch still works while it is down.
    t.equal((await cli('mcp', 'cap', 'disable', 'alpha', 'tool:echo')).code, EXIT.OK);
    t.match(await json('mcp', 'disable', 'beta'), { server: { enabled: false } });
    const off = await cli('mcp', 'cap', 'list', 'beta');
    t.equal(off.code, EXIT.ERROR, 'a disabled server has no live view');
    t.match(off.stderr, /^error: UPSTREAM_UNAVAILABLE: .*disabled/m);
  });

  await t.test('mcp import: each client format, duplicates and invalid entries', async (t) => {
    const dir = tempDir('coffer-import-');
    const write = (name: string, content: unknown): string => {
      const path = join(dir, name);
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content, null, 2));
      return path;
    };
    const stdio = (name: string): Record<string, unknown> => ({ command: process.execPath, args: [FIXTURE, '--name', name] });
    const names = async (): Promise<string[]> => (await json('mcp', 'list')).servers.map((s: any) => s.name);
    const result = (report: any, name: string): any => report.results.find((r: any) => r.name === name);

    // Claude Desktop: one new, one duplicate (alpha), one invalid name.
    const desktop = write('claude_desktop_config.json', {
      mcpServers: { 'imp-desktop': { ...stdio('imp-desktop'), env: { TOKEN: 'desk-secret' } }, alpha: stdio('alpha'), 'bad name!': stdio('x') },
    });
    const dry = await cli('mcp', 'import', desktop, '--dry-run', '--json');
    t.equal(dry.code, EXIT.INVALID_INPUT, 'dry run: the invalid entry fails it too');
    t.match(JSON.parse(dry.stdout), { format: 'mcpServers', dry_run: true, summary: { would_add: 1, added: 0, skipped: 2 } });
    t.notOk((await names()).includes('imp-desktop'), 'dry run registers nothing');

    const imported = await cli('mcp', 'import', desktop, '--json');
    t.equal(imported.code, EXIT.INVALID_INPUT, 'an invalid entry: exit 6');
    t.match(imported.stderr, /^error: IMPORT_INCOMPLETE: 1 of 3 servers could not be imported: bad name!/m);
    const report = JSON.parse(imported.stdout);
    t.match(report, { file: desktop, format: 'mcpServers', dry_run: false, summary: { added: 1, skipped: 2 } });
    t.match(result(report, 'imp-desktop'), { status: 'added' });
    t.match(result(report, 'alpha'), { status: 'skipped', reason: 'already_exists' });
    t.match(result(report, 'bad name!'), { status: 'skipped', reason: 'invalid_name', suggested_name: 'bad-name' });
    t.notMatch(imported.stdout, /desk-secret/);
    t.match((await json('mcp', 'show', 'imp-desktop')).server.transport, { type: 'stdio', env: { TOKEN: '[redacted]' } });

    // Again: everything is there or invalid; only duplicates → exit 0.
    const onlyDuplicates = write('again.json', { mcpServers: { 'imp-desktop': stdio('imp-desktop'), alpha: stdio('alpha') } });
    const again = await cli('mcp', 'import', onlyDuplicates);
    t.equal(again.code, EXIT.OK, 'duplicates only: exit 0');
    t.match(again.stdout, /^ {2}skipped +imp-desktop +already exists: /m);
    t.match(again.stdout, /^0 added, 2 skipped$/m);

    // Claude Code .mcp.json: typed entries, a ${VAR} that is never expanded.
    const code = write('.mcp.json', {
      mcpServers: {
        'imp-code': { type: 'stdio', ...stdio('imp-code'), env: {} },
        'imp-code-http': { type: 'http', url: DEAD_URL, headers: { Authorization: 'Bearer code-secret' } },
        'imp-code-var': { type: 'http', url: '${BASE_URL}/mcp' },
      },
    });
    const claudeCode = await cli('mcp', 'import', code);
    t.equal(claudeCode.code, EXIT.INVALID_INPUT);
    t.match(claudeCode.stdout, /^ {2}added +imp-code +stdio: /m);
    t.match(claudeCode.stdout, /^ {2}added +imp-code-http +http: http:\/\/127\.0\.0\.1:1\/mcp$/m);
    t.match(claudeCode.stdout, /^ {2}skipped +imp-code-var +unsupported: uses \$\{BASE_URL\}/m);
    t.notMatch(claudeCode.stdout + claudeCode.stderr, /code-secret/);
    t.equal((await json('mcp', 'show', 'imp-code')).server.transport.cwd, dir, 'a project file: runs in the project directory');

    // Cursor: url without type, and a duplicate.
    const cursor = write('mcp.json', { mcpServers: { 'imp-cursor': { url: 'http://127.0.0.1:1/sse' }, 'imp-code': stdio('imp-code') } });
    const fromCursor = await json('mcp', 'import', cursor);
    t.match(result(fromCursor, 'imp-cursor'), { status: 'added', transport: 'sse: http://127.0.0.1:1/sse' });
    t.match(result(fromCursor, 'imp-code'), { status: 'skipped', reason: 'already_exists' });

    // VS Code .vscode/mcp.json (JSONC) with an input variable and an envFile.
    const vscode = write(
      '.vscode/mcp.json',
      `{
        "inputs": [{ "type": "promptString", "id": "key", "password": true }],
        // coffer reads comments and trailing commas
        "servers": {
          "imp-vscode": { "type": "stdio", "command": ${JSON.stringify(process.execPath)}, "args": [${JSON.stringify(FIXTURE)}], },
          "imp-vscode-input": { "type": "stdio", "command": "x", "env": { "KEY": "\${input:key}" } },
          "imp-vscode-envfile": { "type": "stdio", "command": "x", "envFile": "/tmp/.env" },
        },
      }`,
    );
    const fromVscode = await cli('mcp', 'import', vscode, '--json');
    t.equal(fromVscode.code, EXIT.INVALID_INPUT);
    const vscodeReport = JSON.parse(fromVscode.stdout);
    t.equal(vscodeReport.format, 'vscode');
    t.match(result(vscodeReport, 'imp-vscode'), { status: 'added', notes: [`runs in ${dir} (the project directory, as its client would)`] });
    t.match(result(vscodeReport, 'imp-vscode-input'), { status: 'skipped', reason: 'unsupported', message: /\$\{input:key\}/ });
    t.match(result(vscodeReport, 'imp-vscode-envfile'), { status: 'skipped', reason: 'unsupported', message: /envFile/ });

    // VS Code settings.json.
    const settings = write('settings.json', { 'editor.tabSize': 2, mcp: { servers: { 'imp-settings': { type: 'http', url: DEAD_URL } } } });
    const fromSettings = await json('mcp', 'import', settings);
    t.match(fromSettings, { format: 'vscode-settings', summary: { added: 1, skipped: 0 } });

    const all = await names();
    for (const name of ['imp-desktop', 'imp-code', 'imp-code-http', 'imp-cursor', 'imp-vscode', 'imp-settings']) t.ok(all.includes(name), `${name} registered`);
    for (const name of ['bad name!', 'bad-name', 'imp-code-var', 'imp-vscode-input', 'imp-vscode-envfile']) t.notOk(all.includes(name), `${name} not registered`);

    const notJson = await cli('mcp', 'import', write('broken.json', '{ nope'));
    t.equal(notJson.code, EXIT.INVALID_INPUT);
    t.match(notJson.stderr, /^error: IMPORT_FILE_INVALID: .*not valid JSON/);
    t.equal(notJson.stdout, '');
    const noSection = await cli('mcp', 'import', write('other.json', { foo: 1 }));
    t.equal(noSection.code, EXIT.INVALID_INPUT);
    t.match(noSection.stderr, /found no "mcpServers"/);
    const missing = await cli('mcp', 'import', join(dir, 'missing.json'));
    t.equal(missing.code, EXIT.INVALID_INPUT);
    t.match(missing.stderr, /^error: IMPORT_FILE_UNREADABLE: /);
  });

  await t.test('audit list', async (t) => {
    const { entries } = await json('audit', 'list');
    t.ok(Array.isArray(entries) && entries.length > 0);
    const events = new Set(entries.map((e: any) => e.event_type));
    for (const event of ['server_added', 'server_updated', 'capability_disabled', 'capability_enabled']) t.ok(events.has(event), `has ${event}`);
    t.match(entries[0], { id: Number, at: String, actor: String, event_type: String });
    const alpha = await json('audit', 'list', '--server', 'alpha', '--event', 'capability_disabled', '--limit', '2');
    t.ok(alpha.entries.length > 0 && alpha.entries.length <= 2, 'limited');
    t.ok(alpha.entries.every((e: any) => e.server === 'alpha' && e.event_type === 'capability_disabled'), 'filtered');
    const future = await json('audit', 'list', '--since', new Date(Date.now() + 3_600_000).toISOString());
    t.same(future.entries, [], '--since in the future: nothing');
    const recent = await json('audit', 'list', '--since', '1h');
    t.ok(recent.entries.length > 0, '--since 1h');
    const human = await cli('audit', 'list', '--server', 'alpha', '--limit', '3');
    t.equal(human.code, EXIT.OK);
    t.match(human.stdout, /^AT +ACTOR +EVENT +SERVER +DETAILS$/m);
    t.notMatch(JSON.stringify(entries) + human.stdout, /kept-secret|new-secret|desk-secret|code-secret|zzz/, 'no secret in the audit log');
  });

  await t.test('daemon rotate-token: the old token is rejected at once', async (t) => {
    const file = join(home, 'daemon.json');
    const before = JSON.parse(readFileSync(file, 'utf8')) as { token: string; port: number };
    const rotated = await cli('daemon', 'rotate-token', '--json');
    t.equal(rotated.code, EXIT.OK, rotated.stderr);
    t.same(JSON.parse(rotated.stdout), { rotated: true }, 'only {rotated: true}');
    t.equal(rotated.stderr, '');
    const after = JSON.parse(readFileSync(file, 'utf8')) as { token: string; port: number };
    t.not(after.token, before.token, 'daemon.json holds a new token');
    t.equal(statSync(file).mode & 0o777, 0o600, 'daemon.json stays 0600');
    t.notMatch(rotated.stdout, after.token, 'the token is never printed');
    const call = (token: string): Promise<number> =>
      fetch(`http://127.0.0.1:${before.port}/api/v1/servers`, { headers: { authorization: `Bearer ${token}` } }).then(async (r) => {
        await r.body?.cancel();
        return r.status;
      });
    t.equal(await call(before.token), 401, 'the old token: 401');
    t.equal(await call(after.token), 200, 'the new one works');
    const human = await cli('daemon', 'rotate-token');
    t.equal(human.code, EXIT.OK);
    t.match(human.stdout, /^token rotated/);
    t.notMatch(human.stdout, JSON.parse(readFileSync(file, 'utf8')).token);
    t.equal((await cli('mcp', 'list')).code, EXIT.OK, 'the CLI goes on with the new token');
    const audit = await json('audit', 'list', '--event', 'token_rotated');
    t.ok(audit.entries.length >= 2, 'audited');
  });
});
