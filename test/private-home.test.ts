// Nothing under COFFER_HOME is open to other users: every file 0600 and every
// directory 0700 after a daemon run with upstreams, calls and a token rotation;
// a home left 0755 (with 0644 files) by an earlier run is tightened and the CLI
// says so; a home that is not the user's directory is refused.
import { chmodSync, lchownSync, lstatSync, mkdirSync, readdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { EXIT } from '../src/cli/exit-codes.js';
import { ensureHome, HomeNotPrivateError } from '../src/daemon/private-home.js';
import { networkConfig, startNetworkFixture, stdioFixture } from './fixtures/fixture-servers.js';
import { runCli, tempDir } from './helpers/cli.js';
import { startGateway, tempHome } from './helpers/gateway.js';

/** Every entry under `dir` whose mode is not 0700 (directory) or 0600 (file), as "path mode". */
function openEntries(dir: string): string[] {
  const found: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const stats = lstatSync(path);
    const mode = stats.mode & 0o777;
    if (stats.isDirectory()) {
      if (mode !== 0o700) found.push(`${path} ${mode.toString(8)}`);
      found.push(...openEntries(path));
    } else if (mode !== 0o600) found.push(`${path} ${mode.toString(8)}`);
  }
  return found;
}

const modeOf = (path: string): string => (statSync(path).mode & 0o777).toString(8);

t.test('a fresh home: every file 0600 and every directory 0700, running and after', async (t) => {
  process.umask(0o022); // the common default: files would be 0644 unless coffer says otherwise
  const home = tempHome();
  const upstream = await startNetworkFixture('http');
  t.teardown(() => upstream.kill());
  const gateway = await startGateway({}, home);
  t.teardown(() => gateway.close());
  t.equal(modeOf(home), '700', 'the home');
  await gateway.addServer(stdioFixture('local', [], {}, { API_KEY: 'k' }));
  await gateway.addServer(networkConfig('remote', 'http', upstream.url, {}, { Authorization: 'Bearer h' }));
  const client = await gateway.client();
  await client.callTool({ name: 'local__echo', arguments: { a: 1 } });
  await client.callTool({ name: 'remote__echo', arguments: { a: 2 } });
  t.equal((await gateway.api('POST', '/daemon/rotate-token')).status, 200);
  t.equal((await runCli(home, 'mcp', 'list')).code, EXIT.OK, 'the CLI reads the home');
  for (const file of ['coffer.db', 'coffer.db-wal', 'coffer.db-shm', 'secret.key', 'daemon.json', 'logs/daemon.log', 'logs/upstreams/local.log', 'logs/upstreams/remote.log']) {
    t.equal(modeOf(join(home, file)), '600', `${file} while running`);
  }
  t.same(openEntries(home), [], 'nothing open to others while running');
  await gateway.daemon.stop();
  t.same(openEntries(home), [], 'nothing open to others after the stop');
});

t.test('a home left open by an earlier run is tightened, and the CLI says what it changed', async (t) => {
  const home = tempDir('coffer-open-home-');
  const first = await runCli(home, 'daemon', 'start', '--json');
  t.equal(first.code, EXIT.OK, first.stderr);
  t.equal((await runCli(home, 'daemon', 'stop')).code, EXIT.OK);
  // As an older coffer, or `mkdir ~/.coffer` under umask 022, left it.
  chmodSync(home, 0o755);
  chmodSync(join(home, 'logs'), 0o755);
  mkdirSync(join(home, 'logs', 'upstreams'), { recursive: true, mode: 0o755 });
  writeFileSync(join(home, 'logs', 'upstreams', 'old.log'), '', { mode: 0o644 });
  for (const file of ['coffer.db', 'logs/daemon.log']) chmodSync(join(home, file), 0o644);
  t.not(openEntries(home).length, 0, 'planted open modes');

  const started = await runCli(home, 'daemon', 'start', '--json');
  t.teardown(() => runCli(home, 'daemon', 'stop'));
  t.equal(started.code, EXIT.OK, started.stderr);
  t.match(started.stderr, `${home} was 0755 (open to other users): now 0700`);
  t.match(started.stderr, `${join(home, 'coffer.db')} was 0644 (open to other users): now 0600`);
  t.match(started.stderr, `${join(home, 'logs', 'upstreams', 'old.log')} was 0644 (open to other users): now 0600`);
  t.same(openEntries(home), [], 'every mode is private again');
});

t.test('access for the group alone is closed too; a link in the home is not followed to tighten what it points at', async (t) => {
  const home = tempDir('coffer-group-home-');
  mkdirSync(join(home, 'logs'));
  writeFileSync(join(home, 'coffer.db'), '');
  chmodSync(home, 0o750);
  chmodSync(join(home, 'logs'), 0o700);
  chmodSync(join(home, 'coffer.db'), 0o640);
  const outside = join(tempDir('coffer-outside-'), 'shared.txt');
  writeFileSync(outside, '');
  chmodSync(outside, 0o644);
  symlinkSync(outside, join(home, 'logs', 'elsewhere.log'));
  t.same(ensureHome(home), [`${home} was 0750 (open to other users): now 0700`, `${join(home, 'coffer.db')} was 0640 (open to other users): now 0600`]);
  t.equal(modeOf(outside), '644', "the file outside the home, behind a link in it, keeps its mode");
});

t.test('a home that is not the user\'s directory is refused', async (t) => {
  const dir = tempDir('coffer-foreign-home-');
  t.throws(() => ensureHome(dir, statSync(dir).uid + 1), HomeNotPrivateError, 'another user\'s directory');
  t.match(modeOf(dir), '700', 'left as it was');
  const file = join(dir, 'a-file');
  writeFileSync(file, '');
  const served = await runCli(file, 'serve');
  t.equal(served.code, EXIT.INVALID_INPUT, served.stderr);
  t.match(served.stderr, 'HOME_NOT_PRIVATE');
  t.match(served.stderr, 'is not a directory');
  mkdirSync(join(dir, 'ok'), { mode: 0o700 });
  t.same(ensureHome(join(dir, 'ok')), [], 'the user\'s own 0700-or-tighter home needs no change');
});

t.test('a home another user could swap out is refused: a parent directory others may write to, or their link on the way', async (t) => {
  const dir = tempDir('coffer-shared-parent-');
  const me = statSync(dir).uid;
  const other = me + 1;
  const shared = join(dir, 'shared');
  mkdirSync(shared);
  chmodSync(shared, 0o777);
  mkdirSync(join(shared, 'home'), { mode: 0o700 });
  t.throws(() => ensureHome(join(shared, 'home'), me), { name: 'HomeNotPrivateError', message: /shared can be written by other users/ }, 'a home in a directory anyone may write to (they could rename it and put theirs there)');
  chmodSync(shared, 0o1777);
  t.same(ensureHome(join(shared, 'home'), me), [], 'sticky (like /tmp): only the home\'s owner can rename it, so it is kept');

  const mine = join(dir, 'mine');
  mkdirSync(mine, { mode: 0o700 });
  const link = join(shared, 'link');
  symlinkSync(mine, link);
  t.same(ensureHome(link, me), [], 'my own link in a sticky directory to my own home: kept');
  lchownSync(link, other, other);
  t.throws(() => ensureHome(link, me), { name: 'HomeNotPrivateError', message: /link belongs to uid/ }, 'another user\'s link in it: refused (they can point it elsewhere at any time)');
  const served = await runCli(link, 'serve');
  t.equal(served.code, EXIT.INVALID_INPUT, served.stderr);
  t.match(served.stderr, 'HOME_NOT_PRIVATE');
});
