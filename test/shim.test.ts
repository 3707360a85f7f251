// `coffer shim` end to end: a real SDK Client over stdio spawns the real CLI,
// which auto-starts a daemon fronting server-everything; the daemon is then
// restarted under it, and large messages pass. A 2026-07-28 client (SDK v2)
// gets the same continuity.
import { execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client as ClientV2 } from '@modelcontextprotocol/client';
import { StdioClientTransport as StdioClientTransportV2 } from '@modelcontextprotocol/client/stdio';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import t from 'tap';
import { readDaemonFile } from '../src/daemon/daemon-file.js';
import { isProcessAlive } from '../src/daemon/daemon-file.js';
import { CLI_ENTRY, PROJECT_ROOT } from '../src/paths.js';
import { waitFor } from './helpers/wait.js';
import { EXIT } from '../src/cli/exit-codes.js';

const EVERYTHING = join(PROJECT_ROOT, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');

const home = mkdtempSync(join(tmpdir(), 'coffer-shim-test-'));
// Marks the upstream processes this test causes, to prove none outlives it.
const marker = `COFFER_SHIM_TEST_${randomUUID().replaceAll('-', '')}`;
const env = { ...(process.env as Record<string, string>), COFFER_HOME: home, COFFER_PORT: '0' };

function runCli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI_ENTRY, ...args], { env }, (error, stdout, stderr) =>
      resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** Processes (procfs) whose environment or command line `matches`. */
function processesWhere(matches: (environ: string, cmdline: string) => boolean): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (matches(readFileSync(`/proc/${entry}/environ`, 'latin1'), readFileSync(`/proc/${entry}/cmdline`, 'latin1'))) found.push(Number(entry));
    } catch {
      // gone, or not ours to read
    }
  }
  return found;
}

/** The daemons (and shims) of `ofHome`: it is on their command line. */
const homeProcesses = (ofHome: string): number[] => processesWhere((_, cmdline) => cmdline.includes(`--home\0${ofHome}`));

/** Processes of this test: upstreams carry the marker in their environment, daemons this home on their command line. */
const ourProcesses = (): number[] => processesWhere((environ, cmdline) => environ.includes(marker) || cmdline.includes(`--home\0${home}`));

const text = (result: CallToolResult): string => (result.content[0] as { type: 'text'; text: string }).text;

t.teardown(async () => {
  const file = readDaemonFile(home);
  if (file && isProcessAlive(file.pid)) await runCli('daemon', 'stop');
  for (const pid of ourProcesses()) process.kill(pid, 'SIGKILL');
  rmSync(home, { recursive: true, force: true });
});

t.test('the shim relays a real client to the daemon, across a daemon restart', async (t) => {
  t.equal(readDaemonFile(home), null, 'no daemon runs at first');
  const transport = new StdioClientTransport({ command: process.execPath, args: [CLI_ENTRY, 'shim'], env, stderr: 'pipe' });
  const client = new Client({ name: 'shim-test', version: '1.0.0' });
  await client.connect(transport);
  const shimPid = transport.pid!;

  const daemon = readDaemonFile(home);
  t.ok(daemon && isProcessAlive(daemon.pid), 'the shim started a daemon');
  t.equal(client.getServerVersion()?.name !== undefined, true, 'initialize answered through the shim');

  const added = await runCli('mcp', 'add', 'every', '--stdio', `"${process.execPath}" "${EVERYTHING}" stdio`, '--env', `${marker}=1`);
  t.equal(added.code, 0, added.stderr);

  const tools = await waitFor('every__echo listed', async () => {
    const { tools } = await client.listTools();
    return tools.some((tool) => tool.name === 'every__echo') && tools;
  });
  t.ok(tools.length > 1, 'tools/list through the shim');

  const echo = (await client.callTool({ name: 'every__echo', arguments: { message: 'hello' } })) as CallToolResult;
  t.equal(text(echo), 'Echo: hello', 'tools/call through the shim');

  const big = 'x'.repeat(5 * 1024 * 1024);
  const large = (await client.callTool({ name: 'every__echo', arguments: { message: big } })) as CallToolResult;
  t.equal(text(large).length, big.length + 'Echo: '.length, 'a 5 MB message passes both ways');

  // Restart the daemon under the shim: a new process on a new port (COFFER_PORT=0).
  const stopped = await runCli('daemon', 'stop');
  t.equal(stopped.code, 0, stopped.stderr);
  t.notOk(isProcessAlive(daemon!.pid));
  const restarted = await runCli('daemon', 'start');
  t.equal(restarted.code, 0, restarted.stderr);
  const second = readDaemonFile(home)!;
  t.not(second.pid, daemon!.pid);

  const after = (await client.callTool({ name: 'every__echo', arguments: { message: 'again' } })) as CallToolResult;
  t.equal(text(after), 'Echo: again', 'the next call succeeds through the same shim');
  t.ok(isProcessAlive(shimPid), 'still the same shim process');

  // The shim presents daemon.json's token on /mcp; after a rotation it reads the new one.
  const rotated = await runCli('daemon', 'rotate-token');
  t.equal(rotated.code, 0, rotated.stderr);
  t.not(readDaemonFile(home)!.token, second.token, 'the token changed');
  const afterRotation = (await client.callTool({ name: 'every__echo', arguments: { message: 'rotated' } })) as CallToolResult;
  t.equal(text(afterRotation), 'Echo: rotated', 'the next call succeeds with the new token, through the same shim');

  await client.close();
  await waitFor('the shim to exit', async () => !isProcessAlive(shimPid), 5_000);
  const shimLog = readFileSync(join(home, 'logs', 'shim.log'), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
  t.ok(shimLog.every((record) => record.component === 'shim' && record.pid === shimPid && typeof record.time === 'string'), 'the shim logs in the one record format');
  t.ok(shimLog.some((record) => record.level === 'info' && record.msg === `started for ${home}`));
  t.match(shimLog.at(-1), { msg: /^stopping: / });
  t.equal((await runCli('daemon', 'stop')).code, 0);
  t.notOk(isProcessAlive(second.pid), 'the daemon is gone');
  await waitFor('no daemon or upstream left behind', async () => ourProcesses().length === 0, 5_000);
  t.pass('no orphans');
});

t.test('a request fails with DAEMON_UNREACHABLE when no daemon comes back in time', async (t) => {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI_ENTRY, 'shim'],
    env: { ...env, COFFER_SHIM_RECONNECT_MS: '1500' },
    stderr: 'pipe',
  });
  const client = new Client({ name: 'shim-test-gone', version: '1.0.0' });
  await client.connect(transport);
  const first = readDaemonFile(home)!;
  t.equal((await runCli('daemon', 'stop')).code, 0);
  t.notOk(isProcessAlive(first.pid));
  const failure = await client.listTools().then(
    () => null,
    (error: Error & { code?: number; data?: { code?: string; reason?: string } }) => error,
  );
  t.match(failure, { code: -32010, data: { code: 'UPSTREAM_UNAVAILABLE', reason: 'DAEMON_UNREACHABLE' } });
  t.match(failure?.message, /DAEMON_UNREACHABLE/);
  await client.close();
});

t.test('a 2026-07-28 client through the shim, across a daemon restart and a token rotation', async (t) => {
  t.equal(readDaemonFile(home), null, 'no daemon runs at first');
  const client = new ClientV2({ name: 'shim-test-modern', version: '2.4.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await client.connect(new StdioClientTransportV2({ command: process.execPath, args: [CLI_ENTRY, 'shim'], env, stderr: 'pipe' }));
  t.equal(client.getProtocolEra(), 'modern', 'server/discover answered through the shim, which started a daemon');
  const echo = async (message: string): Promise<string> => text((await client.callTool({ name: 'every__echo', arguments: { message } })) as CallToolResult);
  await waitFor('every__echo listed', async () => (await client.listTools()).tools.some((tool) => tool.name === 'every__echo'));
  t.equal(await echo('modern'), 'Echo: modern', 'tools/call as a 2026-07-28 request through the shim');

  const first = readDaemonFile(home)!;
  t.equal((await runCli('daemon', 'stop')).code, 0);
  t.equal((await runCli('daemon', 'start')).code, 0);
  t.not(readDaemonFile(home)!.pid, first.pid, 'a new daemon');
  t.equal(await echo('restarted'), 'Echo: restarted', 'the next call reaches the new daemon');

  t.equal((await runCli('daemon', 'rotate-token')).code, 0);
  t.equal(await echo('rotated'), 'Echo: rotated', 'and the next one after a token rotation');
  await client.close();
});

t.test("a stale daemon.json's port taken by another program gets neither the token nor any message: it cannot prove it holds the token", async (t) => {
  const squatted = mkdtempSync(join(tmpdir(), 'coffer-shim-squat-'));
  const reached: string[] = [];
  let pid = 0;
  // Answers the status probe as the daemon daemon.json names would (its pid, ready), and takes whatever else comes.
  const squatter = createServer((request, response) => {
    if (request.url?.startsWith('/api/v1/daemon/status')) return void response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ pid, status: 'ready', proof: 'made-up' }));
    reached.push(`${request.url} ${request.headers.authorization ?? ''}`);
    response.writeHead(500).end();
  });
  await new Promise<void>((resolve) => squatter.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    squatter.close();
    rmSync(squatted, { recursive: true, force: true });
  });
  const dead = spawn(process.execPath, ['-e', '']);
  await new Promise((resolve) => dead.once('exit', resolve));
  const squat = (squatPid: number) => {
    pid = squatPid;
    writeFileSync(join(squatted, 'daemon.json'), JSON.stringify({ port: (squatter.address() as AddressInfo).port, pid, token: 'the-token', started_at: 'then' }), { mode: 0o600 });
  };
  /**
   * The daemon a shim started goes on, detached, after its shim ends, maybe still starting:
   * daemon.json does not name it yet, so `daemon stop` misses it. Each process of the home is signalled
   * (SIGTERM stops a starting daemon too) and waited for, before the home is removed under it.
   */
  const stopSquattedDaemons = async (): Promise<void> => {
    for (const daemon of homeProcesses(squatted)) process.kill(daemon, 'SIGTERM');
    await waitFor('the squatted home\'s daemons to exit', () => homeProcesses(squatted).length === 0, 20_000).catch(() => undefined);
  };
  /** One ping through a shim of the squatted home: its answer. */
  const ping = async (): Promise<any> => {
    const shim = spawn(process.execPath, [CLI_ENTRY, 'shim', '--home', squatted], { env: { ...env, COFFER_SHIM_RECONNECT_MS: '1000' } });
    let stdout = '';
    shim.stdout.on('data', (chunk) => (stdout += String(chunk)));
    shim.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' })}\n`);
    await waitFor('an answer', async () => stdout.includes('\n'), 60_000);
    shim.stdin.end();
    await new Promise((resolve) => shim.once('exit', resolve));
    return JSON.parse(stdout);
  };
  // The dead daemon's pid, and a live process of this very user (pids are public: ps, /proc).
  for (const squatPid of [dead.pid!, process.pid]) {
    squat(squatPid);
    const cli = await runCli('mcp', 'list', '--home', squatted);
    t.equal(cli.code, EXIT.DAEMON_UNREACHABLE, `pid ${pid}: a CLI command is refused`);
    t.match(cli.stderr, 'does not prove it holds that file\'s token');
    t.same(reached, [], `pid ${pid}: nothing but the status probe reached the squatter`);
  }
  // The shim, too: it may start a daemon of its own (with the dead pid), but never talks to the squatter.
  t.teardown(stopSquattedDaemons);
  for (const squatPid of [process.pid, dead.pid!]) {
    squat(squatPid);
    t.match(await ping(), { id: 1, error: { data: { reason: 'DAEMON_UNREACHABLE' } } }, `pid ${pid}: the client is told no daemon answered in time`);
    t.same(reached, [], `pid ${pid}: the squatter got nothing from the shim`);
  }
  await stopSquattedDaemons();
  t.same(homeProcesses(squatted), [], 'no daemon of the squatted home outlives the test');
});
