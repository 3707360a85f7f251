// The V8 code cache of the actor's scripts (workers/actor/code-cache.cts, run by
// workers/actor/boot.cts): written once an actor is ready, taken by the next
// worker, and never trusted when damaged, refused by V8 or another build's.
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import t, { type Test } from 'tap';
import { ACTOR_SCRIPTS, actorEntry, workerFile } from '../src/paths.js';
import type { ScriptSet } from '../src/protocol/actor.js';
import { ScriptStore, type CompileCounts } from '../workers/actor/code-cache.cjs';
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
  // Each actor with a store of its own unless one is given: it reads the folder as a new daemon would.
  const serves = async (name: string, store = new ScriptStore(ACTOR_SCRIPTS, dir)): Promise<void> => {
    const actor = startActor(t, stdioFixture(name), {}, { scripts: () => store.current() });
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
  // As the daemon starts them: one store, the scripts and caches read once and handed to each worker.
  const daemonStore = new ScriptStore(ACTOR_SCRIPTS, dir);
  await serves('handed', daemonStore);
  await serves('handed again', daemonStore);
  t.same(files(dir), written, 'actors handed the scripts and their caches by one store run, and write none');

  damage(dir);
  await serves('third');
  const rewritten = files(dir);
  t.same([...rewritten.keys()].sort(), names.sort());
  t.ok(names.every((name) => rewritten.get(name) !== written.get(name)), 'every damaged cache was written again');
  await serves('fourth');
  t.same(files(dir), rewritten, 'and taken by the next');
});

/** A folder of scripts as the build makes them (module bodies), by file name. */
function scriptsDir(t: Test, files: Record<string, string>): string {
  const dir = tempDir(t);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

/**
 * Compiles and runs each script of `set` in a worker of its own (a fresh isolate:
 * one that compiled a text before takes it from its own memory, not from a
 * file) as boot.cts does, then saves: the counts and each script's exports.
 */
function inWorker(set: ScriptSet | undefined): Promise<{ counts: CompileCounts; results: unknown[] }> {
  if (!set) throw new Error('no scripts');
  const code = `
    const { parentPort, workerData } = require('node:worker_threads');
    const { CodeCache } = require(workerData.module);
    const cache = new CodeCache(workerData.set);
    const results = Object.keys(workerData.set.scripts).sort().map((path) => {
      const module = { exports: {} };
      cache.compile(path).runInThisContext()(module.exports, require, module, 'file://' + path);
      return module.exports;
    });
    cache.save();
    parentPort.postMessage({ counts: cache.counts, results });`;
  const worker = new Worker(code, { eval: true, workerData: { module: workerFile('actor/code-cache.cjs'), set } });
  return new Promise((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
}

t.test('ScriptStore and CodeCache: by the text compiled, checked before V8 sees it, older builds removed', async (t) => {
  const cacheDir = join(tempDir(t), 'cache');
  const scripts = scriptsDir(t, { 'a.js': 'module.exports = [1, 2, 3].map((n) => n * 2).join();' });

  t.same(await inWorker(new ScriptStore(scripts, undefined).current()), { counts: { cached: 0, compiled: 1 }, results: ['2,4,6'] }, 'no folder: compiled');
  t.notOk(existsSync(cacheDir), 'and nothing written');

  // One store, as one daemon: the first worker writes the cache, the store finds it for the next.
  const store = new ScriptStore(scripts, cacheDir);
  t.same(await inWorker(store.current()), { counts: { cached: 0, compiled: 1 }, results: ['2,4,6'] }, 'no cache yet: compiled');
  const [name, ...rest] = readdirSync(cacheDir);
  t.same(rest, [], 'one cache written');
  t.same(await inWorker(store.current()), { counts: { cached: 1, compiled: 0 }, results: ['2,4,6'] }, 'the same store hands it to the next worker');

  // The worker takes the bytes it was handed, not the folder's: the store read them once.
  const handed = store.current();
  rmSync(cacheDir, { recursive: true });
  t.same((await inWorker(handed)).counts, { cached: 1, compiled: 0 }, 'the handed cache is used with the folder gone');
  t.same((await inWorker(new ScriptStore(scripts, cacheDir).current())).counts, { cached: 0, compiled: 1 }, 'a new store finds none');
  t.same((await inWorker(new ScriptStore(scripts, cacheDir).current())).counts, { cached: 1, compiled: 0 }, 'written again, and taken');

  // Bytes V8 cannot read, under a valid hash of themselves: V8 refuses them.
  const garbage = Buffer.alloc(4_096, 7);
  writeFileSync(join(cacheDir, name), Buffer.concat([createHash('sha256').update(garbage).digest(), garbage]));
  t.same(await inWorker(new ScriptStore(scripts, cacheDir).current()), { counts: { cached: 0, compiled: 1 }, results: ['2,4,6'] }, 'refused by V8: compiled');
  t.same((await inWorker(new ScriptStore(scripts, cacheDir).current())).counts, { cached: 1, compiled: 0 }, 'written again, and taken');

  writeFileSync(join(cacheDir, name), Buffer.alloc(10));
  t.same((await inWorker(new ScriptStore(scripts, cacheDir).current())).counts, { cached: 0, compiled: 1 }, 'a truncated file is no cache');

  // Another build: the script's text changed, so does its cache's name, and the old one goes.
  writeFileSync(join(scripts, 'a.js'), 'module.exports = "another build";');
  t.same(await inWorker(new ScriptStore(scripts, cacheDir).current()), { counts: { cached: 0, compiled: 1 }, results: ['another build'] }, "the old build's cache is not taken");
  const names = readdirSync(cacheDir);
  t.equal(names.length, 1, "the old build's cache is removed");
  t.not(names[0], name);

  const blocked = join(tempDir(t), 'file');
  writeFileSync(blocked, '');
  t.same(await inWorker(new ScriptStore(scripts, join(blocked, 'cache')).current()), { counts: { cached: 0, compiled: 1 }, results: ['another build'] }, 'a folder that cannot be made is no cache, not a failure');
  t.equal(new ScriptStore(join(blocked, 'none'), cacheDir).current(), undefined, 'scripts that cannot be read: no set');
});
