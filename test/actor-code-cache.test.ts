// The V8 code cache of the actor's scripts (workers/actor/code-cache.cts, run by
// workers/actor/boot.cts): written once an actor is ready, taken by the next
// worker, and never trusted when damaged, refused by V8 or another build's.
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import t, { type Test } from 'tap';
import { actorEntry, workerFile } from '../src/paths.js';
import type { CompileCounts } from '../workers/actor/code-cache.cjs';
import { startActor } from './fixtures/actor-harness.js';
import { stdioFixture } from './fixtures/fixture-servers.js';

function tempDir(t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'coffer-code-cache-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Each cache file with its inode: a file written again is a new inode (written aside, then renamed). */
function files(dir: string): Map<string, number> {
  return new Map(readdirSync(dir).map((name) => [name, statSync(join(dir, name)).ino]));
}

/** Flips one byte in the middle of every cache file: same length, other bytes. */
function damage(dir: string): void {
  for (const name of readdirSync(dir)) {
    const bytes = readFileSync(join(dir, name));
    bytes[bytes.length >> 1] ^= 0xff;
    writeFileSync(join(dir, name), bytes);
  }
}

t.test('an actor writes the cache once ready; the next takes it; a damaged one is compiled afresh and written again', async (t) => {
  t.match(actorEntry(), /boot\.cjs$/, 'actors start from the scripts (npm run build made them)');
  const dir = join(tempDir(t), 'actor-code');
  const serves = async (name: string): Promise<void> => {
    const actor = startActor(t, stdioFixture(name), {}, { codeCache: dir });
    await actor.waitForState('ready');
    t.match(await actor.handle.list('tools', false), { ok: true, state: 'live' }, `${name} lists its tools`);
    await actor.handle.stop();
  };

  await serves('first');
  const written = files(dir);
  t.ok(written.size >= 2, 'the bundle and its chunks each have a cache');
  t.equal(statSync(dir).mode & 0o777, 0o700, 'the folder is private');
  const names = [...written.keys()];
  t.ok(names.every((name) => /^[0-9a-f]{64}$/.test(name)), 'each named by a hash');
  t.ok(names.every((name) => (statSync(join(dir, name)).mode & 0o777) === 0o600), 'each file is private');

  await serves('second');
  t.same(files(dir), written, 'the next actor took every cache: none was written again');

  damage(dir);
  await serves('third');
  const rewritten = files(dir);
  t.same([...rewritten.keys()].sort(), names.sort());
  t.ok(names.every((name) => rewritten.get(name) !== written.get(name)), 'every damaged cache was written again');
  await serves('fourth');
  t.same(files(dir), rewritten, 'and taken by the next');
});

/**
 * Compiles and runs each of `sources` through a CodeCache in a worker of its own (a fresh
 * isolate: one that compiled a text before takes it from its own memory, not from a file),
 * then saves with `current` as this build's scripts.
 */
function inWorker(dir: string | undefined, sources: string[], current: string[]): Promise<{ counts: CompileCounts; results: unknown[] }> {
  const code = `
    const { parentPort, workerData } = require('node:worker_threads');
    const { CodeCache } = require(workerData.module);
    const cache = new CodeCache(workerData.dir);
    const results = workerData.sources.map((source) => cache.compile(Buffer.from(source), 'test.js').runInThisContext()());
    cache.save(() => workerData.current.map((source) => Buffer.from(source)));
    parentPort.postMessage({ counts: cache.counts, results });`;
  const worker = new Worker(code, { eval: true, workerData: { module: workerFile('actor/code-cache.cjs'), dir, sources, current } });
  return new Promise((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
}

t.test('CodeCache: by the text it compiles, checked before V8 sees it, older builds removed', async (t) => {
  const dir = join(tempDir(t), 'cache');
  const source = '(function () { return [1, 2, 3].map((n) => n * 2).join(); })';
  const other = '(function () { return "another build"; })';

  t.same(await inWorker(undefined, [source], [source]), { counts: { cached: 0, compiled: 1 }, results: ['2,4,6'] }, 'no folder: compiled');
  t.same(await inWorker(dir, [source, other], [source]), { counts: { cached: 0, compiled: 2 }, results: ['2,4,6', 'another build'] });
  const [name, ...rest] = readdirSync(dir);
  t.same(rest, [], 'the cache of a script not in this build is removed');
  t.same(await inWorker(dir, [source], [source]), { counts: { cached: 1, compiled: 0 }, results: ['2,4,6'] }, 'taken from the cache');

  // Bytes V8 cannot read, under a valid hash of themselves: V8 refuses them.
  const garbage = Buffer.alloc(4_096, 7);
  writeFileSync(join(dir, name), Buffer.concat([createHash('sha256').update(garbage).digest(), garbage]));
  t.same(await inWorker(dir, [source], [source]), { counts: { cached: 0, compiled: 1 }, results: ['2,4,6'] }, 'refused by V8: compiled');
  t.same((await inWorker(dir, [source], [source])).counts, { cached: 1, compiled: 0 }, 'written again, and taken');

  writeFileSync(join(dir, name), Buffer.alloc(10));
  t.same((await inWorker(dir, [source], [source])).counts, { cached: 0, compiled: 1 }, 'a truncated file is no cache');

  const blocked = join(tempDir(t), 'file');
  writeFileSync(blocked, '');
  t.same(await inWorker(join(blocked, 'cache'), [source], [source]), { counts: { cached: 0, compiled: 1 }, results: ['2,4,6'] }, 'a folder that cannot be made is no cache, not a failure');
});
