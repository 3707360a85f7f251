// The daemon as a process: `coffer serve` writes daemon.json (0600), answers
// ready, and on SIGTERM lets an open call finish, stops its upstreams and
// leaves nothing behind; a detached start waits for a daemon that is still
// opening (upgrading) its database.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import t from 'tap';
import { homeMcpTransport } from './helpers/mcp-post.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import Database from 'better-sqlite3';
import { freePort } from '../bench/free-port.js';
import { DatabaseOpeningError, databaseOpeningPath, databaseOpeningPid, isProcessAlive, markDatabaseOpening, readDaemonFile, thisProcess, writeDaemonFile } from '../src/daemon/daemon-file.js';
import { startDaemonProcess, stopDaemonProcess } from '../src/cli/daemon-control.js';
import { startDaemon } from '../src/daemon/daemon.js';
import { acquireDaemonLock, daemonLockPath } from '../src/daemon/daemon-lock.js';
import { PortTakenError } from '../src/http/port-taken.js';
import { CLI_ENTRY } from '../src/paths.js';
import { stdioFixture } from './fixtures/fixture-servers.js';
import { tempDir } from './helpers/cli.js';
import { tempHome, waitFor } from './helpers/gateway.js';
import { homeApi, restCall, waitReady } from './helpers/rest.js';

const LOCK_TAKER = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'lock-taker.js');

t.test('SIGTERM drains: the open call finishes, upstream children stop, daemon.json goes', async (t) => {
  const home = tempHome();
  const child = spawn(process.execPath, [CLI_ENTRY, 'serve', '--port', '0', '--home', home], { stdio: ['ignore', 'pipe', 'inherit'] });
  t.teardown(() => {
    child.kill('SIGKILL');
  });
  const [line] = (await once(createInterface({ input: child.stdout! }), 'line')) as [string];
  t.match(line, /127\.0\.0\.1/);
  const daemon = readDaemonFile(home)!;
  t.equal(daemon.pid, child.pid);
  t.equal(statSync(join(home, 'daemon.json')).mode & 0o777, 0o600, 'daemon.json is private');
  const api = homeApi(home);
  const status = (await api('GET', '/daemon/status', undefined, null)).body as { status: string };
  t.equal(status.status, 'ready');

  const created = await api('POST', '/servers', stdioFixture('up'));
  t.equal(created.status, 201);
  await waitReady(api, 'up');

  const client = new Client({ name: 'drain', version: '1' });
  await client.connect(homeMcpTransport(home));
  const { pid: upstreamPid } = JSON.parse(((await client.callTool({ name: 'up__whoami', arguments: {} })) as any).content[0].text);
  t.ok(isProcessAlive(upstreamPid), 'the upstream child runs');

  const open = client.callTool({ name: 'up__slow', arguments: { ms: 1_500, steps: 3 } });
  await new Promise((resolve) => setTimeout(resolve, 200));
  child.kill('SIGTERM');
  const result = await open;
  t.same(JSON.parse((result as any).content[0].text), { slept: 1500 }, 'the open call finished during the drain');
  const [code] = await once(child, 'exit');
  t.equal(code, 0, 'clean exit');
  t.notOk(existsSync(join(home, 'daemon.json')), 'daemon.json removed');
  await waitFor('the upstream child to be gone', () => !isProcessAlive(upstreamPid), 5_000);
  t.pass('no orphaned upstream process');
  await client.close().catch(() => undefined);
});

t.test('a second daemon on the same home is refused with a clear message', async (t) => {
  const home = tempHome();
  const first = await startDaemon({ home, port: 0 });
  t.teardown(() => first.stop());
  const child = spawn(process.execPath, [CLI_ENTRY, 'serve', '--port', '0', '--home', home], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const [code] = await once(child, 'exit');
  t.not(code, 0);
  t.match(stderr, /already/);
});

t.test('a daemon started while another is still starting on the same home is refused', async (t) => {
  const home = tempHome();
  const first = spawn(process.execPath, [CLI_ENTRY, 'serve', '--port', '0', '--home', home], { stdio: ['ignore', 'pipe', 'inherit'] });
  t.teardown(() => void first.kill('SIGKILL'));
  const listening = once(createInterface({ input: first.stdout! }), 'line');
  // The first has opened its database (its mark came and went) and is still starting: no daemon.json yet.
  let marked = false;
  while (!(marked && !existsSync(databaseOpeningPath(home)))) {
    marked ||= existsSync(databaseOpeningPath(home));
    await new Promise((resolve) => setImmediate(resolve));
  }
  t.notOk(existsSync(join(home, 'daemon.json')), 'the first has not written daemon.json yet');
  const second = startDaemon({ home, port: 0 });
  second.then((daemon) => t.teardown(() => daemon.stop()), () => undefined);
  await t.rejects(second, { name: 'DaemonRunningError', pid: first.pid, message: new RegExp(`a coffer daemon \\(pid ${first.pid}\\) already runs for ${home}: stop it with 'coffer daemon stop'`) }, 'the second refused');
  await listening;
  t.equal(readDaemonFile(home)?.pid, first.pid, 'the first runs, and daemon.json names it');
});

t.test("a daemon's lock is private and goes at its stop; one left by a gone daemon, or naming a pid since reused, is taken over", async (t) => {
  const home = tempHome();
  const other = spawn('sleep', ['30'], { stdio: 'ignore' });
  t.teardown(() => void other.kill('SIGKILL'));
  await once(other, 'spawn');
  const stale = [
    { pid: 2 ** 22 + 1 }, // no such process
    { pid: other.pid!, process_start: 1 }, // alive, but started long after the daemon that wrote it
    'half a lock',
  ];
  for (const holder of stale) {
    writeFileSync(daemonLockPath(home), typeof holder === 'string' ? holder : JSON.stringify(holder), { mode: 0o600 });
    const daemon = await startDaemon({ home, port: 0 });
    t.equal(JSON.parse(readFileSync(daemonLockPath(home), 'utf8')).pid, process.pid, `${JSON.stringify(holder)}: taken over`);
    t.equal(statSync(daemonLockPath(home)).mode & 0o777, 0o600, 'the lock is private');
    await daemon.stop();
    t.notOk(existsSync(daemonLockPath(home)), 'and gone at the stop');
  }
  t.same(readdirSync(home).filter((name) => name.startsWith('daemon.lock')), [], 'nothing left beside it');

  // A starter that died while removing a stale lock: its own lock for that removal is stale too, and taken over in turn.
  const gone = JSON.stringify({ pid: 2 ** 22 + 1 });
  writeFileSync(daemonLockPath(home), gone, { mode: 0o600 });
  writeFileSync(`${daemonLockPath(home)}.${createHash('sha256').update(gone).digest('hex').slice(0, 16)}.removing`, JSON.stringify({ pid: 2 ** 22 + 2 }), { mode: 0o600 });
  const daemon = await startDaemon({ home, port: 0 });
  t.equal(JSON.parse(readFileSync(daemonLockPath(home), 'utf8')).pid, process.pid, 'a stale lock whose remover died: taken over');
  await daemon.stop();
  t.same(readdirSync(home).filter((name) => name.startsWith('daemon.lock')), [], 'nothing left beside it either');
});

/** The test's side of test/fixtures/lock-taker.ts: what each taker answered, its step, and its next ones. */
function stepper(control: string) {
  const read = (name: string, suffix: string): string | null => (existsSync(join(control, `${name}.${suffix}`)) ? readFileSync(join(control, `${name}.${suffix}`), 'utf8') : null);
  const at = (name: string): number => Number(read(name, 'at') ?? 0);
  /** Lets `name` make its next change to the home, and waits until it is before the one after (or has answered). */
  const step = async (name: string): Promise<void> => {
    const now = at(name);
    writeFileSync(join(control, `${name}.go`), String(now));
    await waitFor(`${name} past step ${now}`, () => at(name) > now || read(name, 'result') !== null);
  };
  /** Steps `name` until it answers, or for at most `steps` (it may wait on another). */
  const run = async (name: string, steps = 50): Promise<void> => {
    for (let i = 0; i < steps && read(name, 'result') === null; i++) await step(name);
  };
  return { read, at, step, run };
}

t.test('three starters meeting one stale lock at once: exactly one holds it, in an interleaving that once let two', async (t) => {
  const home = tempHome();
  const control = tempDir('coffer-lock-control-');
  writeFileSync(daemonLockPath(home), JSON.stringify({ pid: 2 ** 22 + 1 }), { mode: 0o600 });
  const names = ['a', 'b', 'c'];
  const takers = new Map(names.map((name) => [name, spawn(process.execPath, [LOCK_TAKER, home, control, name], { stdio: ['ignore', 'ignore', 'inherit'] })]));
  t.teardown(() => {
    for (const [name, taker] of takers) {
      writeFileSync(join(control, `${name}.exit`), '');
      taker.kill('SIGKILL');
    }
  });
  const { read, at, step, run } = stepper(control);
  for (const name of names) await waitFor(`${name} before its first change`, () => at(name) === 1);

  for (const name of names) await step(name); // each found the lock there, and judged it stale
  await run('a'); // a replaces it
  await step('b'); // b acts on the stale lock it saw, though a's is there now
  await run('c'); // c meanwhile
  for (const name of ['b', 'c', 'a']) await run(name, 1_000);

  const results = names.map((name) => read(name, 'result'));
  const holders = names.filter((_, i) => results[i] === 'held');
  t.equal(holders.length, 1, `exactly one holds the lock: ${results.join(', ')}`);
  const holder = takers.get(holders[0] ?? '')?.pid;
  t.equal(JSON.parse(readFileSync(daemonLockPath(home), 'utf8')).pid, holder, 'the lock names it');
  t.same(results.filter((result) => result !== 'held'), [`refused ${holder}`, `refused ${holder}`], 'the others are refused, naming it');
});

t.test("a stop that finds a gone daemon's daemon.json leaves alone the one of a daemon starting meanwhile", async (t) => {
  const home = tempHome();
  const control = tempDir('coffer-lock-control-');
  writeDaemonFile(home, { port: 1, pid: 2 ** 22 + 1, token: 'gone', started_at: new Date().toISOString() });
  const stopper = spawn(process.execPath, [LOCK_TAKER, home, control, 'stop', 'stop'], { stdio: ['ignore', 'ignore', 'inherit'] });
  t.teardown(() => {
    writeFileSync(join(control, 'stop.exit'), '');
    stopper.kill('SIGKILL');
  });
  const { read, at, run } = stepper(control);
  await waitFor('the stop before its first change to the home', () => at('stop') === 1);
  // A daemon starts meanwhile (this process stands for it): it holds the lock and writes its own daemon.json.
  const unlock = acquireDaemonLock(home);
  t.teardown(unlock);
  writeDaemonFile(home, { port: 2, ...thisProcess(), token: 'new', started_at: new Date().toISOString() });
  await run('stop');
  t.equal(read('stop', 'result'), 'null', 'nothing was running when it looked');
  t.equal(readDaemonFile(home)?.token, 'new', "the starting daemon's daemon.json is still there (the CLI and shims find it by it)");
});

t.test('a token rotation whose daemon.json cannot be written keeps the old token working', async (t) => {
  const home = tempHome();
  const daemon = await startDaemon({ home, port: 0 });
  t.teardown(() => daemon.stop());
  const url = `http://127.0.0.1:${daemon.port}`;
  const old = daemon.token;
  // Where the new daemon.json is written first: a directory there makes the write fail, as a full disk would.
  mkdirSync(join(home, `daemon.json.${process.pid}.tmp`));
  const rotated = await restCall(url, old, 'POST', '/daemon/rotate-token');
  t.equal(rotated.status, 500, 'the rotation failed');
  t.match(rotated.body, { error: { code: 'INTERNAL', message: /^daemon\.json could not be written \(EISDIR\): the token was not rotated and still works/ } });
  t.equal(daemon.token, old, 'the daemon kept its token');
  t.equal((await restCall(url, old, 'GET', '/servers')).status, 200, 'which daemon.json still holds, so the CLI and shims still get in');
  t.equal(readDaemonFile(home)?.token, old);
});

t.test('daemon.json that cannot be put in place leaves no copy of the token behind', async (t) => {
  const home = tempHome();
  // A directory where daemon.json goes: the temporary file is written, its rename over it fails.
  mkdirSync(join(home, 'daemon.json', 'inside'), { recursive: true });
  t.throws(() => writeDaemonFile(home, { port: 1, pid: process.pid, token: 'a-secret-token', started_at: new Date().toISOString() }));
  t.same(readdirSync(home).filter((name) => name.startsWith('daemon.json.')), [], 'no temporary file holding the token is left');
});

t.test('an explicit port that is taken is refused, not moved (the default port alone falls back: port-taken.test)', async (t) => {
  const port = await freePort();
  const first = await startDaemon({ home: tempHome(), port });
  t.teardown(() => first.stop());
  await t.rejects(startDaemon({ home: tempHome(), port }), PortTakenError, 'the second daemon');
  t.equal(first.port, port);
});

t.test('a daemon marks its database as opening while its migrations run, privately, and unmarks it once open', async (t) => {
  const home = tempHome();
  // Another connection holds the write lock: the daemon's migrations wait for it (within the writer's busy timeout).
  const db = new Database(join(home, 'coffer.db'));
  db.pragma('journal_mode = WAL');
  db.exec('BEGIN IMMEDIATE');
  let held = true;
  const release = (): void => {
    if (!held) return;
    held = false;
    db.exec('ROLLBACK');
    db.close();
  };
  t.teardown(async () => {
    release();
    await stopDaemonProcess(home).catch(() => undefined);
  });
  const starting = startDaemonProcess(home, { port: 0 });
  starting.catch(() => undefined);
  await waitFor('the daemon to mark its database as opening', () => databaseOpeningPid(home) !== null, 15_000);
  const opener = databaseOpeningPid(home)!;
  t.not(opener, process.pid, 'the spawned daemon is the opener');
  t.equal(statSync(databaseOpeningPath(home)).mode & 0o777, 0o600, 'the mark is private');
  release();
  const running = await starting;
  t.equal(running.file.pid, opener, 'the daemon that opened it is the one that became ready');
  t.notOk(existsSync(databaseOpeningPath(home)), 'unmarked once the database is open');
});

t.test('a starter waits past its timeout while the database is being opened, and says so once', async (t) => {
  const home = tempHome();
  const said: string[] = [];
  const write = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    said.push(String(chunk));
    return (write as (...args: unknown[]) => boolean)(chunk, ...rest);
  }) as typeof process.stderr.write;
  t.teardown(() => {
    process.stderr.write = write;
  });
  // This process opens the database (as a daemon upgrading it would), for longer than the starter's own time.
  const unmark = markDatabaseOpening(home);
  const timeoutMs = 3_000;
  const started = Date.now();
  const starting = startDaemonProcess(home, { timeoutMs });
  starting.catch(() => undefined);
  await new Promise((resolve) => setTimeout(resolve, timeoutMs + 2_000));
  const daemon = await startDaemon({ home, port: 0 });
  unmark();
  t.teardown(() => daemon.stop());
  const running = await starting;
  t.ok(Date.now() - started > timeoutMs + 2_000, 'waited past its timeout');
  t.equal(running.file.pid, process.pid, 'and found the daemon that was opening the database');
  t.equal(said.filter((text) => /still opening its database/.test(text)).length, 1, 'said once why it waits');
});

t.test('without a mark a starter gives up at its timeout', async (t) => {
  const home = tempHome();
  // The start lock held by a live process: this starter waits for whoever holds it instead of spawning.
  writeFileSync(join(home, 'daemon.start.lock'), JSON.stringify(thisProcess()), { mode: 0o600 });
  const started = Date.now();
  await t.rejects(startDaemonProcess(home, { timeoutMs: 500 }), { code: 'DAEMON_START_FAILED', message: /did not become ready in time/ });
  t.ok(Date.now() - started < 10_000, `gave up after ${Date.now() - started} ms`);
});

t.test("a start lock left by a starter that died mid-start, its pid now another process's, does not hold up the next start", async (t) => {
  const home = tempHome();
  const other = spawn('sleep', ['30'], { stdio: 'ignore' });
  t.teardown(() => void other.kill('SIGKILL'));
  await once(other, 'spawn');
  writeFileSync(join(home, 'daemon.start.lock'), String(other.pid), { mode: 0o600 });
  t.teardown(() => stopDaemonProcess(home).catch(() => undefined));
  const running = await startDaemonProcess(home, { port: 0, timeoutMs: 10_000 });
  t.equal(running.alreadyRunning, false, 'a daemon was started');
  t.notOk(existsSync(join(home, 'daemon.start.lock')), 'and the lock released');
});

t.test('a daemon does not start beside one opening the database; a stale mark is ignored', async (t) => {
  const home = tempHome();
  const other = spawn('sleep', ['30'], { stdio: 'ignore' });
  t.teardown(() => {
    other.kill('SIGKILL');
  });
  writeFileSync(databaseOpeningPath(home), `${other.pid}\n`, { mode: 0o600 });
  await t.rejects(startDaemon({ home, port: 0 }), DatabaseOpeningError, 'refused while the other is opening it');
  t.ok(existsSync(databaseOpeningPath(home)), 'and its mark left alone');
  const old = new Date(Date.now() - 60_000);
  utimesSync(databaseOpeningPath(home), old, old);
  t.equal(databaseOpeningPid(home), null, 'a mark nobody touched for a minute is a dead daemon\'s');
  const daemon = await startDaemon({ home, port: 0 });
  t.teardown(() => daemon.stop());
  t.notOk(existsSync(databaseOpeningPath(home)), 'the new daemon opened it and unmarked it');
});
