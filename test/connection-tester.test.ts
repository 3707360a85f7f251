// R9's test connection as a piscina job (src/jobs/connection-tester.ts):
// bounded in time, and leaving nothing behind when the server it tests is
// hostile. Ending a job's thread does not end a child process the job spawned.
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import { isProcessAlive } from '../src/daemon/daemon-file.js';
import { ConnectionTester } from '../src/jobs/connection-tester.js';
import { withConfigDefaults, type ServerConfig } from '../src/protocol/server-config.js';
import { waitFor } from './helpers/wait.js';

/** Never answers, and outlives stdin EOF and SIGTERM: only SIGKILL ends it. It writes its pid into the directory it is given. */
const STUBBORN = `require('node:fs').writeFileSync(require('node:path').join(process.argv[1], String(process.pid)), '');
process.on('SIGTERM', () => {});
process.stdin.resume();
setInterval(() => {}, 1000);`;

const stdioServer = (name: string, args: string[], connectMs = 500): ServerConfig =>
  withConfigDefaults({
    name,
    description: '',
    enabled: true,
    transport: { type: 'stdio', command: process.execPath, args, env: {}, cwd: null },
    auto_enable_new_capabilities: true,
    timeouts: { connect_ms: connectMs, request_ms: 500, list_deadline_ms: 500 },
  });

/** A tester writing its logs in a temporary folder: both gone after the test. */
function testerIn(t: Test): { dir: string; tester: ConnectionTester } {
  const dir = mkdtempSync(join(tmpdir(), 'coffer-tester-'));
  const tester = new ConnectionTester(dir);
  t.teardown(async () => {
    await tester.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { dir, tester };
}

const pidsIn = (dir: string): number[] => readdirSync(dir).filter((name) => /^\d+$/.test(name)).map(Number);

t.test('a server that never answers and ignores EOF and SIGTERM: the test fails and its child is killed', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'coffer-tester-'));
  const tester = new ConnectionTester(dir);
  t.teardown(async () => {
    for (const pid of pidsIn(dir)) if (isProcessAlive(pid)) process.kill(pid, 'SIGKILL');
    await tester.close();
    rmSync(dir, { recursive: true, force: true });
  });
  // Both threads started first: under tap's loaders a thread takes seconds to start.
  const exits = stdioServer('exits', ['-e', 'process.exit(1)'], 30_000);
  t.match(await Promise.all([tester.test(exits), tester.test(exits)]), [{ ok: false, error: { code: 'UPSTREAM_UNAVAILABLE' } }, { ok: false, error: { code: 'UPSTREAM_UNAVAILABLE' } }]);

  const stubborn = stdioServer('stubborn', ['-e', STUBBORN, dir]);
  const reports = await Promise.all([1, 2, 3].map(() => tester.test(stubborn)));
  t.match(reports.slice(0, 2), [{ ok: false, error: { code: 'UPSTREAM_UNAVAILABLE', message: /took longer than 500 ms/ } }, { ok: false, error: { code: 'UPSTREAM_UNAVAILABLE' } }]);
  t.match(reports[2], { ok: false, error: { code: 'UPSTREAM_BUSY', message: /2 test connections were running for all of 500 ms/ } }, 'the third waited its connect_ms for a thread');
  const pids = pidsIn(dir);
  t.equal(pids.length, 2, 'one child per test that ran');
  // A job answers once its connection is closed: its child is gone by then (or a moment later, when reaped).
  await waitFor('the children to end', () => pids.every((pid) => !isProcessAlive(pid)), 1_000).catch(() => undefined);
  t.same(pids.filter(isProcessAlive), [], 'no child outlives its test');
  t.match(readFileSync(join(dir, 'stubborn.log'), 'utf8'), /test connection failed/);
});

t.test('the daemon stopping mid-test: the running test ends at once and its child with it', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'coffer-tester-'));
  const tester = new ConnectionTester(dir);
  t.teardown(() => {
    for (const pid of pidsIn(dir)) if (isProcessAlive(pid)) process.kill(pid, 'SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });
  const running = tester.test(stdioServer('stubborn', ['-e', STUBBORN, dir], 60_000));
  await waitFor('the test to start its child', () => pidsIn(dir).length === 1, 30_000);
  const [pid] = pidsIn(dir);
  const closing = Date.now();
  await tester.close();
  t.ok(Date.now() - closing < 5_000, 'the stop does not wait for the test');
  t.match(await running, { ok: false, error: { code: 'UPSTREAM_UNAVAILABLE' } }, 'the test is answered, failed');
  await waitFor('the child to end', () => !isProcessAlive(pid!), 2_000).catch(() => undefined);
  t.notOk(isProcessAlive(pid!), 'no child outlives the stop');
});

/** Initializes (its serverInfo name the same megabyte), then answers every other request with a megabyte of error text that starts with terminal controls. */
const LOUD = `const out = (message) => process.stdout.write(JSON.stringify(message) + '\\n');
const loud = '\\u001b]0;owned\\u0007\\u001b[2J' + 'x'.repeat(1_000_000);
require('node:readline').createInterface({ input: process.stdin }).on('line', (line) => {
  const message = JSON.parse(line);
  if (message.id === undefined) return;
  if (message.method !== 'initialize') return out({ jsonrpc: '2.0', id: message.id, error: { code: -32000, message: loud } });
  out({ jsonrpc: '2.0', id: message.id, result: { protocolVersion: message.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: loud, version: '1' } } });
});`;

t.test("an upstream's error text reaches the report as any upstream text does: cut at 2,048 characters, its controls made visible", async (t) => {
  const { tester } = testerIn(t);
  const report = await tester.test(stdioServer('loud', ['-e', LOUD], 30_000));
  t.match(report, { ok: false, error: { code: 'UPSTREAM_UNAVAILABLE' } });
  const shown = JSON.stringify(report);
  t.ok(shown.length < 10_000, `the report holds no megabyte of upstream text (${shown.length} characters)`);
  t.notOk(/[\u0000-\u001f]/.test(report.error?.message ?? ''), 'no control character in the error message');
});

t.test('an HTTP server that answers the initialize a byte at a time, forever: the test fails at its connect_ms and its socket is closed', async (t) => {
  const { tester } = testerIn(t);
  const sockets = new Set<Socket>();
  const trickle = createNetServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    socket.resume();
    socket.write('HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n');
    const drip = setInterval(() => socket.write(': still here\n'), 50);
    socket.on('close', () => clearInterval(drip));
  });
  await new Promise<void>((resolve) => trickle.listen(0, '127.0.0.1', resolve));
  t.teardown(async () => {
    for (const socket of sockets) socket.destroy();
    trickle.close();
  });
  const url = `http://127.0.0.1:${(trickle.address() as AddressInfo).port}/mcp`;
  const config = withConfigDefaults({ ...stdioServer('trickle', [], 1_000), transport: { type: 'http', url, headers: {} } });
  const started = Date.now();
  const report = await tester.test(config);
  t.match(report, { ok: false, error: { code: 'UPSTREAM_UNAVAILABLE' } });
  t.ok(Date.now() - started < 10_000, `answered in ${Date.now() - started} ms`);
  await waitFor('the sockets to close', () => sockets.size === 0, 3_000).catch(() => undefined);
  t.equal(sockets.size, 0, 'no socket left open to the server');
});

t.test('a stdio 2025-era server that exits on the 2026 probe passes the test, as it connects live (started once more, for initialize)', async (t) => {
  const { dir, tester } = testerIn(t);
  const spawns = join(dir, 'spawns');
  const strict = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'strict-legacy-upstream.js');
  const report = await tester.test(stdioServer('dies', [strict, '--before-init', 'exit', '--spawn-log', spawns], 20_000));
  t.match(report, { ok: true, protocol_version: '2025-11-25', capabilities: { tools: 1 } });
  t.equal(readFileSync(spawns, 'utf8').trim().split('\n').length, 2, 'started twice: the probe, then initialize');
});
