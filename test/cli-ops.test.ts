// The operational CLI: `coffer mcp refresh` over the admin WebSocket (progress
// while it waits), `coffer mcp invocations`, `coffer retention list|set|prune`
// and the global --verbose. The real binary as a child process against a real
// daemon (`coffer daemon start`) in a temporary COFFER_HOME with real fixture upstreams.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import t from 'tap';
import { homeMcpTransport } from './helpers/mcp-post.js';
import { freePort } from '../bench/free-port.js';
import { isVerbose } from '../src/cli/args.js';
import { invocationQuery } from '../src/cli/commands/mcp-invocations.js';
import { EXIT } from '../src/cli/exit-codes.js';
import { CliError, formatError } from '../src/cli/output.js';
import { writeDaemonFile } from '../src/daemon/daemon-file.js';
import { stdioFixture } from './fixtures/fixture-servers.js';
import { fixtureLine, runCli, startCliDaemon, tempDir, usageCode } from './helpers/cli.js';
import { waitFor } from './helpers/wait.js';

// ---------------------------------------------------------------- pure parts

t.test('invocation query, --verbose and formatError', async (t) => {
  t.equal(invocationQuery(undefined, {}).toString(), '');
  const query = invocationQuery('files', { status: 'denied', limit: '5', since: '2025-01-02T03:04:05Z' });
  t.same(Object.fromEntries(query), { server: 'files', status: 'denied', since: '2025-01-02T03:04:05.000Z', limit: '5' });
  for (const bad of [{ status: 'failed' }, { status: 'OK' }, { limit: '0' }, { since: 'yesterday' }]) {
    t.equal(usageCode(() => invocationQuery(undefined, bad)), EXIT.USAGE, JSON.stringify(bad));
  }
  t.equal(isVerbose(['mcp', 'list', '--verbose']), true);
  t.equal(isVerbose(['--verbose', 'mcp', 'list']), true);
  t.equal(isVerbose(['mcp', 'list']), false);
  t.equal(isVerbose(['mcp', 'add', 'x', '--', '--verbose']), false, 'not past --');

  const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
  const error = new CliError(EXIT.DAEMON_UNREACHABLE, 'DAEMON_UNREACHABLE', 'no answer', { port: 1 }, new TypeError('fetch failed', { cause: refused }));
  t.equal(formatError(error), 'error: DAEMON_UNREACHABLE: no answer', 'terse by default');
  const verbose = formatError(error, true).split('\n');
  t.equal(verbose[0], 'error: DAEMON_UNREACHABLE: no answer');
  t.match(verbose.join('\n'), /^details: \{\n {2}"port": 1\n\}$/m);
  t.match(verbose, ['error: DAEMON_UNREACHABLE: no answer', /^details:/, / "port": 1/, '}', 'cause: TypeError: fetch failed', 'cause: Error: connect ECONNREFUSED 127.0.0.1:1']);
});

// ------------------------------------------------------------ without a daemon

t.test('without a daemon: every new command exits 3; usage errors exit 2 first', async (t) => {
  const home = tempDir('coffer-cli-ops-');
  const unreachable = [
    ['mcp', 'refresh', 'x'],
    ['mcp', 'refresh', 'x', '--json'],
    ['mcp', 'invocations'],
    ['mcp', 'invocations', 'x', '--status', 'ok', '--since', '2h', '--limit', '3', '--json'],
    ['retention', 'list'],
    ['retention', 'list', '--json'],
    ['retention', 'set', 'audit', '--days', '30'],
    ['retention', 'set', 'audit', '--forever', '--json'],
    ['retention', 'prune', '--json'],
  ];
  for (const [args, result] of await Promise.all(unreachable.map(async (args) => [args, await runCli(home, ...args)] as const))) {
    t.equal(result.code, EXIT.DAEMON_UNREACHABLE, `${args.join(' ')} exits 3`);
    t.match(result.stderr, /^error: DAEMON_UNREACHABLE: no coffer daemon is running .*coffer daemon start/m);
    t.equal(result.stdout, '', 'nothing on stdout');
    t.notMatch(result.stderr, /^cause:/m, 'no cause without --verbose');
  }
  const usage = [
    ['mcp', 'invocations', '--status', 'bad'],
    ['mcp', 'invocations', '--limit', '0'],
    ['mcp', 'invocations', '--since', 'yesterday'],
    ['mcp', 'invocations', 'a', 'b'],
    ['mcp', 'refresh'],
    ['mcp', 'refresh', 'a', 'b'],
    ['retention'],
    ['retention', 'frob'],
    ['retention', 'list', 'x'],
    ['retention', 'set'],
    ['retention', 'set', 'audit'],
    ['retention', 'set', 'audit', '--days', '3', '--forever'],
    ['retention', 'set', 'audit', '--days', '0'],
    ['retention', 'set', 'audit', '--days', 'many'],
    ['retention', 'prune', '--days', '3'],
    ['mcp', 'list', '--verbose=yes'],
  ];
  for (const [args, result] of await Promise.all(usage.map(async (args) => [args, await runCli(home, ...args)] as const))) {
    t.equal(result.code, EXIT.USAGE, `${args.join(' ')} exits 2`);
    t.match(result.stderr, /^error: USAGE: /);
  }

  // --verbose, before or after the command: where the CLI looked.
  for (const args of [['--verbose', 'retention', 'list'], ['mcp', 'invocations', '--verbose']]) {
    const verbose = await runCli(home, ...args);
    t.equal(verbose.code, EXIT.DAEMON_UNREACHABLE);
    t.match(verbose.stderr, /^cause: no usable daemon file at .*daemon\.json$/m, `${args.join(' ')}: the cause`);
  }

  // A daemon.json whose daemon is gone (nothing listens on its port any more): the connection failure is the cause.
  const stale = tempDir('coffer-cli-ops-');
  const deadPort = await freePort(); // nothing listens there: refused at once
  writeDaemonFile(stale, { port: deadPort, pid: 999_999, token: 'stale', started_at: new Date().toISOString() });
  for (const args of [['mcp', 'refresh', 'x'], ['retention', 'list'], ['mcp', 'invocations', '--json']]) {
    const terse = await runCli(stale, ...args);
    t.equal(terse.code, EXIT.DAEMON_UNREACHABLE, `${args.join(' ')}: stale daemon.json exits 3`);
    t.match(terse.stderr, new RegExp(`^error: DAEMON_UNREACHABLE: the coffer daemon on port ${deadPort} does not answer.*coffer daemon start`));
    t.notMatch(terse.stderr, /ECONNREFUSED/, 'terse without --verbose');
    const verbose = await runCli(stale, ...args, '--verbose');
    t.equal(verbose.code, EXIT.DAEMON_UNREACHABLE);
    t.match(verbose.stderr, /^cause: .*ECONNREFUSED/m, `${args.join(' ')} --verbose: the underlying cause`);
    t.equal(verbose.stdout, '');
  }

  const help = await runCli(home, '--help');
  t.equal(help.code, EXIT.OK);
  for (const word of [
    'coffer mcp refresh NAME',
    'coffer mcp invocations [NAME] [--status ok|error|timeout|denied] [--since',
    'coffer retention list | set TABLE (--days N | --forever) | prune',
    '--verbose',
  ]) {
    t.match(help.stdout, word, `--help names ${word}`);
  }
  t.match(help.stdout, /^ {2}retention +how long/m, 'retention is a command');
  for (const [args, pattern] of [
    [['mcp', 'invocations', '--help'], /^Usage: coffer mcp invocations \[NAME\] \[--status ok\|error\|timeout\|denied\]/],
    [['mcp', 'refresh', '--help'], /^Usage: coffer mcp refresh NAME \[--json\]\n.*admin\s+WebSocket/],
    [['retention', '--help'], /^Usage: coffer retention <action>[^]*^ {2}set TABLE \(--days N \| --forever\)/m],
    [['retention', 'set', '--help'], /^Usage: coffer retention set TABLE \(--days N \| --forever\) \[--json\]/],
  ] as const) {
    const result = await runCli(home, ...args);
    t.equal(result.code, EXIT.OK, `${args.join(' ')}`);
    t.match(result.stdout, pattern, `${args.join(' ')}`);
  }
});

// ------------------------------------------------------ against a running daemon

t.test('against a running daemon', async (t) => {
  // rest: the REST API directly (what the CLI cannot set: timeouts).
  const { home, cli, json, api: rest, waitReady } = await startCliDaemon(t, 'coffer-cli-ops-');

  const added = await cli('mcp', 'add', 'ops', '--stdio', fixtureLine('--name', 'ops', '--resources', '--prompts'));
  t.equal(added.code, EXIT.OK, added.stderr);
  await waitReady('ops');

  await t.test('mcp refresh over the admin WebSocket', async (t) => {
    const view = await json('mcp', 'refresh', 'ops');
    t.same(Object.keys(view).sort(), ['prompts', 'resource_templates', 'resources', 'server', 'tools'], 'the capabilities view, as GET /capabilities');
    t.equal(view.server, 'ops');
    t.match(view.tools, { state: 'live' });
    t.ok(view.tools.items.some((item: any) => item.key === 'echo' && item.live && item.enabled));
    const jsonRun = await cli('mcp', 'refresh', 'ops', '--json');
    t.equal(jsonRun.stderr, '', '--json: no progress on stderr');

    const human = await cli('mcp', 'refresh', 'ops');
    t.equal(human.code, EXIT.OK, human.stderr);
    t.match(human.stdout, /^server 'ops'$/m);
    t.match(human.stdout, /^tools: live, 7 \(7 enabled\)$/m);
    t.match(human.stdout, /^ {2}tool:echo +yes +yes +\d{4}-/m);
    t.match(human.stderr, /^refreshing 'ops'…$/m, 'progress: started');
    t.notMatch(human.stdout, /refreshing/, 'progress never on stdout');

    const missing = await cli('mcp', 'refresh', 'nope');
    t.equal(missing.code, EXIT.NOT_FOUND);
    t.match(missing.stderr, /^error: RESOURCE_NOT_FOUND: /m);
    t.equal(missing.stdout, '');
    const missingJson = await cli('mcp', 'refresh', 'nope', '--json');
    t.equal(missingJson.code, EXIT.NOT_FOUND);
    t.equal(missingJson.stdout, '', '--json: nothing on stdout for a plain error');
  });

  await t.test('mcp refresh of a hanging upstream: progress while it waits, then the known list and exit 1', async (t) => {
    // Listed once, so its capabilities are known; then its lists hang and time out after 3.5 s.
    const config = stdioFixture('slowpoke', [], { request_ms: 3_500, list_deadline_ms: 1_000 });
    const created = await rest('POST', '/servers', config);
    t.equal(created.status, 201, JSON.stringify(created.body));
    await waitReady('slowpoke');
    t.equal((await json('mcp', 'cap', 'list', 'slowpoke')).tools.state, 'live');
    t.equal((await cli('mcp', 'cap', 'disable', 'slowpoke', 'tool:crash')).code, EXIT.OK);
    const hanging = await rest('PATCH', '/servers/slowpoke', { transport: { ...config.transport, args: [...(config.transport as { args: string[] }).args, '--hang'] } });
    t.equal(hanging.status, 200, JSON.stringify(hanging.body));
    await waitReady('slowpoke');

    const startedAt = Date.now();
    const human = await cli('mcp', 'refresh', 'slowpoke');
    t.ok(Date.now() - startedAt >= 3_000, 'it waited for the upstream');
    t.equal(human.code, EXIT.ERROR, human.stderr);
    t.match(human.stderr, /^refreshing 'slowpoke'…$/m, 'progress: started');
    t.match(human.stderr, /^refreshing 'slowpoke'… \(\d+\.\d s\)$/m, 'progress while waiting, with the time');
    t.match(human.stderr, /^error: UPSTREAM_(TIMEOUT|UNAVAILABLE): /m);
    t.notMatch(human.stderr, /^details:/m, 'no details without --verbose');
    t.match(human.stdout, /known capabilities \(not live\)/);
    t.match(human.stdout, /^ {2}tool:echo +yes +no /m, 'known, enabled, not live');
    t.match(human.stdout, /^ {2}tool:crash +no +no /m, 'its flag is kept');

    const asJson = await cli('mcp', 'refresh', 'slowpoke', '--json');
    t.equal(asJson.code, EXIT.ERROR);
    const envelope = JSON.parse(asJson.stdout);
    t.same(Object.keys(envelope), ['error'], 'one top-level key');
    t.match(envelope.error, { code: /^UPSTREAM_(TIMEOUT|UNAVAILABLE)$/, message: String });
    t.match(
      envelope.error.details.known.find((k: any) => k.capability_key === 'crash'),
      { capability_type: 'tool', enabled: false },
      'the known keys with their flags',
    );
    t.notMatch(asJson.stderr, /refreshing/, '--json: no progress');
    t.match(asJson.stderr, /^error: UPSTREAM_(TIMEOUT|UNAVAILABLE): /);

    const verbose = await cli('mcp', 'refresh', 'slowpoke', '--verbose');
    t.equal(verbose.code, EXIT.ERROR);
    t.match(verbose.stderr, /^details: \{$/m, '--verbose: the details, as JSON');
    t.match(verbose.stderr, /"capability_key": "echo"/);
  });

  await t.test('mcp invocations', async (t) => {
    const client = new Client({ name: 'cli-ops-test', version: '1.0.0' });
    await client.connect(homeMcpTransport(home));
    t.teardown(() => client.close().catch(() => undefined));
    const secret = 'planted-argument-secret';
    for (let i = 0; i < 3; i++) await client.callTool({ name: 'ops__echo', arguments: { i, secret } });
    await client.callTool({ name: 'ops__whoami', arguments: {} });
    await client.readResource({ uri: 'coffer://ops/fixture://static' });
    await client.getPrompt({ name: 'ops__greet', arguments: { name: 'x' } });
    t.equal((await cli('mcp', 'cap', 'disable', 'ops', 'tool:stats')).code, EXIT.OK);
    await t.rejects(client.callTool({ name: 'ops__stats', arguments: {} }), 'a disabled tool is rejected');

    // Written in batches off the call path: wait until all 7 are there.
    const all: any[] = await waitFor(
      'all 7 invocations recorded',
      async () => {
        const rows = (await json('mcp', 'invocations')).invocations as any[];
        return rows.length >= 7 && rows;
      },
      20_000,
      200,
    );
    const listed = await cli('mcp', 'invocations', '--json');
    t.same(Object.keys(JSON.parse(listed.stdout)), ['invocations'], 'one top-level key');
    t.equal(listed.stderr, '');
    t.equal(all.length, 7);
    for (const row of all) {
      t.same(Object.keys(row).sort(), ['at', 'duration_ms', 'error_code', 'id', 'key', 'server', 'session', 'status', 'kind'].sort());
    }
    t.ok(all.every((row, i) => i === 0 || row.at <= all[i - 1].at), 'newest first');
    t.match(all[0], { server: 'ops', kind: 'tool', key: 'stats', status: 'denied', error_code: -32000 }, 'the denied call, newest');
    const kinds = new Set(all.map((row) => `${row.kind}:${row.key}`));
    for (const ref of ['tool:echo', 'tool:whoami', 'resource:fixture://static', 'prompt:greet']) t.ok(kinds.has(ref), `${ref} recorded`);
    t.notMatch(listed.stdout, new RegExp(secret), 'never the arguments');

    t.same((await json('mcp', 'invocations', '--status', 'denied')).invocations.map((row: any) => row.key), ['stats'], '--status denied');
    const ok = (await json('mcp', 'invocations', '--status', 'ok')).invocations;
    t.equal(ok.length, 6);
    t.ok(ok.every((row: any) => row.status === 'ok' && row.error_code === null));
    t.equal((await json('mcp', 'invocations', 'ops')).invocations.length, 7, 'NAME: that server');
    t.same((await json('mcp', 'invocations', 'slowpoke')).invocations, [], 'another server: none');
    t.same((await json('mcp', 'invocations', 'never-registered')).invocations, [], 'an unknown name: none, exit 0');
    const limited = (await json('mcp', 'invocations', 'ops', '--limit', '2')).invocations;
    t.same(limited.map((row: any) => row.id), all.slice(0, 2).map((row) => row.id), '--limit 2: the newest two');
    t.same((await json('mcp', 'invocations', '--since', new Date(Date.now() + 3_600_000).toISOString())).invocations, [], '--since in the future');
    t.equal((await json('mcp', 'invocations', '--since', '1h')).invocations.length, 7, '--since 1h');
    t.equal((await json('mcp', 'invocations', '--since', all[2].at, '--status', 'ok')).invocations.length >= 2, true, 'filters combine');

    const human = await cli('mcp', 'invocations', 'ops');
    t.equal(human.code, EXIT.OK, human.stderr);
    const lines = human.stdout.trimEnd().split('\n');
    t.match(lines[0], /^AT +SERVER +KIND +KEY +STATUS +DURATION$/);
    t.equal(lines.length, 8, 'header and one line each');
    t.match(lines[1], /^\d{4}-\S+ +ops +tool +stats +denied \(-32000\) +\d+ ms$/);
    t.match(human.stdout, /^\S+ +ops +resource +fixture:\/\/static +ok +\d+ ms$/m);
    t.match(human.stdout, /^\S+ +ops +prompt +greet +ok +\d+ ms$/m);
    const none = await cli('mcp', 'invocations', 'slowpoke');
    t.equal(none.code, EXIT.OK);
    t.match(none.stdout, /^no invocations match$/m);

    const bad = await cli('mcp', 'invocations', '--status', 'failed');
    t.equal(bad.code, EXIT.USAGE, 'bad --status: exit 2');
    t.match(bad.stderr, /^error: USAGE: --status expects one of ok, error, timeout, denied/);
    const tooMany = await cli('mcp', 'invocations', '--limit', '20000');
    t.equal(tooMany.code, EXIT.INVALID_INPUT, 'a limit the daemon refuses: exit 6');
    t.match(tooMany.stderr, /^error: CONFIG_INVALID: .*\n {2}limit: must be an integer/);
  });

  await t.test('retention list / set / prune', async (t) => {
    const listed = await json('retention', 'list');
    t.same(Object.keys(listed), ['policies']);
    t.same(
      [...listed.policies].sort((a: any, b: any) => a.table.localeCompare(b.table)),
      [
        { table: 'audit', days: 365 },
        { table: 'invocations', days: 30 },
      ],
      'the defaults',
    );
    const human = await cli('retention', 'list');
    t.equal(human.code, EXIT.OK);
    t.match(human.stdout, /^TABLE +KEEP\n/);
    t.match(human.stdout, /^audit +365 days$/m);

    t.same(await json('retention', 'set', 'audit', '--days', '90'), { policy: { table: 'audit', days: 90 } });
    t.same(await json('retention', 'set', 'invocations', '--forever'), { policy: { table: 'invocations', days: null } });
    const setHuman = await cli('retention', 'set', 'invocations', '--days', '1');
    t.equal(setHuman.code, EXIT.OK, setHuman.stderr);
    t.match(setHuman.stdout, /^retention of 'invocations': 1 day$/m);
    t.equal((await cli('retention', 'set', 'invocations', '--forever')).code, EXIT.OK);
    const after = await cli('retention', 'list');
    t.match(after.stdout, /^audit +90 days$/m);
    t.match(after.stdout, /^invocations +forever$/m);

    const unknown = await cli('retention', 'set', 'sessions', '--days', '5');
    t.equal(unknown.code, EXIT.NOT_FOUND, 'unknown table: exit 4');
    t.match(unknown.stderr, /^error: RESOURCE_NOT_FOUND: .*audit, invocations/);
    const unknownVerbose = await cli('retention', 'set', 'sessions', '--days', '5', '--verbose');
    t.match(unknownVerbose.stderr, /^details: \{\n {2}"table": "sessions"/m, '--verbose: the details');
    const tooLong = await cli('retention', 'set', 'audit', '--days', '99999');
    t.equal(tooLong.code, EXIT.INVALID_INPUT, 'days the daemon refuses: exit 6');
    t.match(tooLong.stderr, /^error: CONFIG_INVALID: .*\n {2}days: must be a whole number/);
    t.equal((await cli('retention', 'set', 'audit', '--days', '-3')).code, EXIT.USAGE, 'negative days: exit 2');
    t.same((await json('retention', 'list')).policies.find((p: any) => p.table === 'audit'), { table: 'audit', days: 90 }, 'nothing changed');

    const pruned = await json('retention', 'prune');
    t.same(Object.keys(pruned), ['pruned']);
    t.match(pruned.pruned, { audit: Number, invocations: Number });
    const pruneHuman = await cli('retention', 'prune');
    t.equal(pruneHuman.code, EXIT.OK);
    t.match(pruneHuman.stdout, /^pruned: audit \d+, invocations \d+$/m);
    t.equal((await json('mcp', 'invocations', 'ops')).invocations.length, 7, 'recent invocations are kept');

    const audit = await json('audit', 'list', '--event', 'retention_changed');
    t.ok(audit.entries.length >= 3, 'audited');
    t.match(audit.entries.find((e: any) => e.payload.table === 'audit'), { actor: 'cli', payload: { table: 'audit', from: 365, to: 90 } });
  });

  await t.test('the daemon stopped: every new command exits 3', async (t) => {
    const stopped = await cli('daemon', 'stop', '--json');
    t.equal(stopped.code, EXIT.OK, stopped.stderr);
    for (const args of [['mcp', 'refresh', 'ops'], ['mcp', 'invocations', '--json'], ['retention', 'list'], ['retention', 'set', 'audit', '--days', '5'], ['retention', 'prune']]) {
      const result = await cli(...args);
      t.equal(result.code, EXIT.DAEMON_UNREACHABLE, `${args.join(' ')} exits 3`);
      t.match(result.stderr, /^error: DAEMON_UNREACHABLE: .*coffer daemon start/);
      t.equal(result.stdout, '');
    }
  });
});
