// One log format for the daemon, the actors and the shim: JSON lines with a fixed frame,
// text sanitised; a stdio child's stderr becomes records line by line.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync, unlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import t, { type Test } from 'tap';
import { Logger } from '../src/log.js';
import { formatRecord } from '../src/log-record.js';
import { MAX_ERROR_TEXT_CHARS } from '../src/protocol/untrusted-text.js';
import { shimLogger } from '../src/shim/shim.js';
import { openLog } from '../workers/actor/log.js';
import { tempDir } from './helpers/cli.js';
import { waitFor } from './helpers/wait.js';

const records = (path: string): Record<string, unknown>[] =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);

/**
 * Runs `script` as a process whose files may not grow past 4 KiB
 * (RLIMIT_FSIZE: the kernel takes the part of a write below the limit, then
 * refuses the rest with EFBIG), and answers the records of the log at `path`;
 * fails the test on a line that is not a whole record.
 */
function writtenUnderSizeLimit(t: Test, script: string, path: string): Array<Record<string, unknown>> {
  // Without the test runner's preload (spawn puts it back in NODE_OPTIONS): its exit hook turns SIGXFSZ, which node ignores, into death.
  const child = spawnSync('bash', ['-c', 'ulimit -f 4 && exec env -u NODE_OPTIONS "$0" --input-type=module -e "$1"', process.execPath, script], { encoding: 'utf8' });
  t.equal(child.status, 0, `the writer ran to its end ${child.signal ?? ''}${child.stderr}`);
  const lines = readFileSync(path, 'utf8').split('\n').filter((line) => line !== '');
  const parses = (line: string): boolean => {
    try {
      return typeof JSON.parse(line) === 'object';
    } catch {
      return false;
    }
  };
  t.same(lines.filter((line) => !parses(line)).map((line) => `${line.slice(0, 40)}… (${line.length} chars)`), [], 'no half line');
  return lines.filter(parses).map((line) => JSON.parse(line) as Record<string, unknown>);
}

t.test('a record: the frame first, fields after and never in its place, text clipped and inert', async (t) => {
  const line = formatRecord(
    { level: 'warn', component: 'actor', upstream: 'up\x1b[2J', msg: `boom\n\x07${'x'.repeat(5000)}`, fields: { level: 'error', msg: 'forged', n: 3, body: '\x1b]0;t\x07' } },
    new Date('2025-01-02T03:04:05Z'),
  );
  t.ok(line.endsWith('\n') && !line.slice(0, -1).includes('\n'), 'one line');
  const record = JSON.parse(line) as Record<string, unknown>;
  t.same(Object.keys(record), ['time', 'level', 'component', 'upstream', 'msg', 'n', 'body']);
  t.match(record, { time: '2025-01-02T03:04:05.000Z', level: 'warn', component: 'actor', upstream: 'up\\x1b[2J', n: 3, body: '\\x1b]0;t\\x07' });
  t.match(record.msg, /^boom\\x0a\\x07x+… \[\d+ more chars\]$/);
  t.ok((record.msg as string).length < MAX_ERROR_TEXT_CHARS + 40);
});

t.test('the daemon: its level threshold, the upstream it names as `server`', async (t) => {
  const path = join(tempDir('coffer-log-'), 'daemon.log');
  const log = new Logger(path, 'info');
  log.debug('not kept');
  log.warn('actor worker died', { server: 'alpha', reason: 'exit 3' });
  log.info('listening', { port: 1 });
  await log.close();
  t.match(records(path), [
    { level: 'warn', component: 'daemon', upstream: 'alpha', msg: 'actor worker died', reason: 'exit 3' },
    { level: 'info', component: 'daemon', msg: 'listening', port: 1 },
  ]);
  t.notOk('server' in records(path)[0]!);
});

t.test('a log the disk refuses for a while: nothing fails, the lines lost are counted, and the log goes on once it can', async (t) => {
  const path = join(tempDir('coffer-log-'), 'daemon.log');
  // Every write fails with ENOSPC, as on a full disk.
  symlinkSync('/dev/full', path);
  const log = new Logger(path, 'info');
  const settled = () => new Promise((resolve) => setTimeout(resolve, 100));
  log.info('first');
  await settled();
  log.info('second', { n: 2 });
  await settled();
  // Room again (here: the file is a plain one now).
  unlinkSync(path);
  log.info('third');
  await log.close();
  t.match(records(path), [{ level: 'warn', component: 'daemon', msg: 'log lines lost: the file could not be written', lost: 2, error: 'ENOSPC' }, { level: 'info', msg: 'third' }]);
});

t.test('a line the file takes only in part (its size limit reached): no half line is left, the loss is noted, the log goes on', async (t) => {
  const path = join(tempDir('coffer-log-'), 'daemon.log');
  const log = pathToFileURL(join(dirname(fileURLToPath(import.meta.url)), '..', 'src', 'log.js')).href;
  // A real process whose files may not grow past 4 KiB (RLIMIT_FSIZE): the second line crosses it, so the kernel takes
  // only its first part, then refuses the rest (EFBIG); the third is small enough to fit below the limit again.
  const script = `
    const { Logger } = await import(${JSON.stringify(log)});
    const log = new Logger(${JSON.stringify(path)}, 'info');
    const settled = () => new Promise((resolve) => setTimeout(resolve, 100));
    const half = 'x'.repeat(1_400);
    log.info('first', { a: half, b: half });
    await settled();
    log.info('second', { a: half, b: half });
    await settled();
    log.info('third');
    await log.close();`;
  t.match(writtenUnderSizeLimit(t, script, path), [{ msg: 'first' }, { level: 'warn', msg: 'log lines lost: the file could not be written', lost: 1, error: 'EFBIG' }, { msg: 'third' }], 'the line cut short is counted as lost, before the next');
});

t.test("the shim's log: lines the disk refuses are counted, and said lost by the first it takes again", async (t) => {
  const home = tempDir('coffer-shim-log-');
  mkdirSync(join(home, 'logs'));
  const path = join(home, 'logs', 'shim.log');
  // Every write fails with ENOSPC, as on a full disk.
  symlinkSync('/dev/full', path);
  const log = shimLogger(home);
  log('first');
  log('second');
  unlinkSync(path);
  log('third');
  t.match(records(path), [{ level: 'warn', component: 'shim', msg: 'log lines lost: the file could not be written', lost: 2, error: 'ENOSPC' }, { component: 'shim', msg: 'third' }]);
});

t.test("the shim's log: a line the file takes only in part is cut off again, so the next line does not run on from it", async (t) => {
  const home = tempDir('coffer-shim-log-');
  mkdirSync(join(home, 'logs'));
  const shim = pathToFileURL(join(dirname(fileURLToPath(import.meta.url)), '..', 'src', 'shim', 'shim.js')).href;
  // Each long line is over 2 KiB: the second crosses the 4 KiB limit, the third fits below it again.
  const script = `
    const { shimLogger } = await import(${JSON.stringify(shim)});
    const log = shimLogger(${JSON.stringify(home)});
    const long = 'x'.repeat(2_000);
    log('first ' + long);
    log('second ' + long);
    log('third');`;
  const records = writtenUnderSizeLimit(t, script, join(home, 'logs', 'shim.log'));
  t.match(records, [{ component: 'shim', msg: /^first x/ }, { level: 'warn', component: 'shim', msg: 'log lines lost: the file could not be written', lost: 1, error: 'EFBIG' }, { component: 'shim', msg: 'third' }]);
  t.equal(records.length, 3, 'nothing of the second line is left');
});

t.test("an actor: its notes and each child's stderr lines are records of its upstream", async (t) => {
  const path = join(tempDir('coffer-log-'), 'up.log');
  const log = openLog(path, 'files');
  log.note('connected to files 1.0');
  const [first, second] = [log.childStderr(), log.childStderr()];
  first.write('one\n{"level":"error","component":"actor","msg":"forged"}\npart ');
  second.write('other child\n\n');
  first.write(`of a line\n${'y'.repeat(MAX_ERROR_TEXT_CHARS + 500)}`);
  first.write('y'.repeat(500));
  first.write('\nlast words');
  await waitFor('the unended line', () => readFileSync(path, 'utf8').includes('last words'));
  await log.close();
  const stderr = { level: 'info', component: 'actor', upstream: 'files', stream: 'stderr' };
  const all = records(path);
  t.match(all[0], { level: 'info', component: 'actor', upstream: 'files', msg: 'connected to files 1.0' });
  t.notOk('stream' in all[0]!, 'a note is not stderr');
  t.match(all.slice(1), [
    { ...stderr, msg: 'one' },
    { ...stderr, msg: '{"level":"error","component":"actor","msg":"forged"}' },
    { ...stderr, msg: 'other child' },
    { ...stderr, msg: 'part of a line' },
    { ...stderr, msg: 'y'.repeat(MAX_ERROR_TEXT_CHARS), more_chars: 1000 },
    { ...stderr, msg: 'last words' },
  ]);
  t.equal(all.length, 7, 'a blank line is no record; two children never share a line');
});

t.test("a child's last words without a line end are written when its actor's log closes at once", async (t) => {
  const path = join(tempDir('coffer-log-'), 'last.log');
  const log = openLog(path, 'last');
  const stderr = log.childStderr();
  await new Promise<void>((resolve) => stderr.write('first\nlast words', () => resolve()));
  // As the actor's shutdown does: the child is stopped, then the log closed, before the child's line could wait for the rest.
  await log.close();
  t.match(records(path), [{ msg: 'first' }, { msg: 'last words', stream: 'stderr' }]);
});

t.test('a chunk of many stderr lines: every record written, no listener piles up on the file', async (t) => {
  const warnings: string[] = [];
  const onWarning = (warning: Error) => warnings.push(warning.name);
  process.on('warning', onWarning);
  t.teardown(() => process.off('warning', onWarning));
  const path = join(tempDir('coffer-log-'), 'many.log');
  const log = openLog(path, 'many');
  const stderr = log.childStderr();
  await new Promise<void>((resolve) => stderr.write(Array.from({ length: 5_000 }, (_unused, i) => `line ${i} ${'z'.repeat(100)}\n`).join(''), () => resolve()));
  await log.close();
  const lines = records(path);
  t.equal(lines.length, 5_000);
  t.ok(lines.every((record, i) => (record.msg as string).startsWith(`line ${i} `)), 'in order');
  t.same(warnings, [], 'no MaxListenersExceededWarning');
});

t.test('request and trace ids are part of the frame, from the daemon and never forged by a field', async (t) => {
  const path = join(tempDir('coffer-log-'), 'daemon.log');
  const log = new Logger(path, 'info');
  log.error('request failed', { server: 'alpha', request_id: '7', trace_id: '4bf92f3577b34da6a3ce929d0e0e4736', method: 'tools/call', session: 's1' });
  log.info('plain', { port: 1 });
  await log.close();
  const [failed, plain] = records(path);
  t.same(Object.keys(failed!), ['time', 'level', 'component', 'upstream', 'request_id', 'trace_id', 'msg', 'method', 'session']);
  t.match(failed, { level: 'error', upstream: 'alpha', request_id: '7', trace_id: '4bf92f3577b34da6a3ce929d0e0e4736', msg: 'request failed' });
  t.same(Object.keys(plain!), ['time', 'level', 'component', 'msg', 'port'], 'absent ids take no place');

  const forged = JSON.parse(formatRecord({ level: 'info', component: 'actor', msg: 'm', fields: { request_id: 'x', trace_id: 'y' } })) as Record<string, unknown>;
  t.notOk('request_id' in forged || 'trace_id' in forged, 'a field cannot pass for the frame');
});

t.test('an actor note says what went wrong as warn', async (t) => {
  const path = join(tempDir('coffer-log-'), 'up.log');
  const log = openLog(path, 'files');
  log.note('session lost: exit 1', 'warn');
  log.note('connected');
  await log.close();
  t.match(records(path), [
    { level: 'warn', component: 'actor', upstream: 'files', msg: 'session lost: exit 1' },
    { level: 'info', component: 'actor', upstream: 'files', msg: 'connected' },
  ]);
});
