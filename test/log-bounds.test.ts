// Upstream text cannot fill the disk or reach coffer's own logs: a huge error
// body is clipped and its escapes made visible wherever it lands, a child's
// endless stderr is rotated away, and a server named like coffer's own log
// writes into its own folder.
import { createServer } from 'node:http';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { upstreamLogDir } from '../src/paths.js';
import { serverConfig, stdioFixture } from './fixtures/fixture-servers.js';
import { tempDir } from './helpers/cli.js';
import { startGateway, waitFor } from './helpers/gateway.js';
import { sleep } from './helpers/wait.js';
import { throttledNote, type ActorLog } from '../workers/actor/log.js';

const FAST_RETRIES = { backoffInitialMs: 10, backoffMaxMs: 40, crashLoopLimit: 1_000 };
const RAW_CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/;

const sizeOf = (path: string): number => (existsSync(path) ? statSync(path).size : 0);

t.test('an HTTP upstream answering 500 with 3 MB of escapes: last_error, daemon log and upstream log stay small and inert', async (t) => {
  const page = `<html>\x1b]0;pwned\x07\x1b[2J${'A'.repeat(3 * 1024 * 1024)}</html>`;
  let requests = 0;
  const hostile = createServer((request, response) => {
    requests++;
    request.resume();
    response.writeHead(500, { 'content-type': 'text/html' }).end(page);
  });
  await new Promise<void>((resolve) => hostile.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => hostile.close(() => resolve())));
  const { port } = hostile.address() as { port: number };

  const gateway = await startGateway({ tuning: FAST_RETRIES });
  t.teardown(() => gateway.close());
  const created = await gateway.api('POST', '/servers', serverConfig('fivehundred', { type: 'http', url: `http://127.0.0.1:${port}/mcp`, headers: {} }));
  t.equal(created.status, 201);
  await waitFor('ten failed connects', () => requests >= 10, 60_000);

  const health = (await gateway.api('GET', '/servers/fivehundred')).body.health;
  t.match(health.last_error, /HTTP 500/);
  t.ok(health.last_error.length < 4_096, `last_error is ${health.last_error.length} chars`);
  t.notOk(RAW_CONTROL.test(health.last_error), 'last_error holds no raw control character');
  t.match(health.last_error, /\\x1b\]0;pwned\\x07/, 'the escapes are shown, not obeyed');

  const daemonLog = join(gateway.home, 'logs', 'daemon.log');
  const upstreamLog = join(upstreamLogDir(gateway.home), 'fivehundred.log');
  t.ok(sizeOf(daemonLog) < 256 * 1024, `daemon.log is ${sizeOf(daemonLog)} bytes after ${requests} failed connects`);
  t.ok(sizeOf(upstreamLog) < 256 * 1024, `the upstream's log is ${sizeOf(upstreamLog)} bytes`);
  t.notOk(RAW_CONTROL.test(readFileSync(daemonLog, 'utf8').replaceAll('\n', '')), 'daemon.log holds no raw control character');
  t.notOk(RAW_CONTROL.test(readFileSync(upstreamLog, 'utf8').replaceAll('\n', '')), "the upstream's log holds no raw control character");
});

t.test("a stdio child's endless stderr is rotated: a few generations, each within the cap, escapes made visible", async (t) => {
  const maxBytes = 256 * 1024;
  process.env.COFFER_LOG_MAX_BYTES = String(maxBytes);
  process.env.COFFER_LOG_KEEP = '2';
  t.teardown(() => {
    delete process.env.COFFER_LOG_MAX_BYTES;
    delete process.env.COFFER_LOG_KEEP;
  });
  const spawns = join(tempDir('coffer-spawns-'), 'spawns');
  // 600 KB of terminal escapes on stderr per start, then a crash: coffer restarts it again and again.
  const script = `require('fs').appendFileSync(${JSON.stringify(spawns)}, 'x'); process.stderr.write('\\x1b[2J\\x1b]52;c;cHduZWQ=\\x07 noise\\n'.repeat(20000), () => process.exit(3));`;
  const gateway = await startGateway({ tuning: FAST_RETRIES });
  t.teardown(() => gateway.close());
  const created = await gateway.api('POST', '/servers', serverConfig('noisy', { type: 'stdio', command: process.execPath, args: ['-e', script], env: {}, cwd: null }));
  t.equal(created.status, 201);
  await waitFor('eight noisy starts', () => sizeOf(spawns) >= 8, 60_000);
  await gateway.api('DELETE', '/servers/noisy');

  const dir = upstreamLogDir(gateway.home);
  const files = readdirSync(dir).filter((name) => name.startsWith('noisy.log')).sort();
  t.same(files, ['noisy.log', 'noisy.log.1', 'noisy.log.2'], 'the live file and two generations, no more');
  for (const file of files) {
    const text = readFileSync(join(dir, file), 'utf8');
    t.ok(Buffer.byteLength(text) <= maxBytes, `${file} is ${Buffer.byteLength(text)} bytes`);
    t.notOk(RAW_CONTROL.test(text), `${file} holds no raw control character`);
  }
  const records = readFileSync(join(dir, 'noisy.log.1'), 'utf8').trimEnd().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
  t.ok(records.every((record) => record.component === 'actor' && record.upstream === 'noisy'), 'every line is a record of the upstream');
  t.match(records.find((record) => record.stream === 'stderr'), { msg: /\\x1b\]52;c;cHduZWQ=\\x07 noise/ }, "the child's escapes, made visible");
});

t.test('servers named daemon and shim log into their own folder, never into coffer’s logs', async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  for (const name of ['daemon', 'shim']) await gateway.addServer(stdioFixture(name, ['--stderr', `stderr of the upstream ${name}`]));
  for (const name of ['daemon', 'shim']) {
    const own = join(upstreamLogDir(gateway.home), `${name}.log`);
    await waitFor(`${name}'s stderr in its own log`, () => existsSync(own) && readFileSync(own, 'utf8').includes(`stderr of the upstream ${name}`));
    const coffers = join(gateway.home, 'logs', `${name}.log`);
    t.notOk(existsSync(coffers) && readFileSync(coffers, 'utf8').includes('stderr of the upstream'), `logs/${name}.log is coffer's alone`);
  }
});

t.test('an upstream repeating itself is noted once per interval, the rest counted in the next note', async (t) => {
  const notes: Array<[string, string | undefined]> = [];
  const log: ActorLog = { childStderr: () => { throw new Error('unused'); }, note: (message, level) => void notes.push([message, level]), close: async () => {} };
  const noteLate = throttledNote(log, 'info', 200);
  const noteError = throttledNote(log, 'warn', 200);
  for (let i = 0; i < 1_000; i++) noteLate(`late ${i}`);
  noteError('noise');
  t.same(notes, [['late 0', 'info'], ['noise', 'warn']], 'one of each kind: each kind has its own interval');
  await sleep(250);
  noteLate('late again');
  t.same(notes.at(-1), ['late again (999 more since the last note)', 'info'], 'the suppressed ones are counted');
  await sleep(250);
  noteLate('quiet since');
  t.same(notes.at(-1), ['quiet since', 'info'], 'and the count starts over');
});
