// The actor's scripts and their V8 code caches, kept in a private folder (under
// the daemon's home): a worker that finds the cache of a script skips compiling
// what it holds, the functions the start-up path ran included. A worker that
// finds none compiles as usual and, once asked (its actor is ready, the start-up
// path compiled), writes one for the next worker.
//
// The daemon reads the scripts and the caches once (ScriptStore, on the main
// thread) and hands every worker the same bytes in shared memory: hashing and
// reading them in each of hundreds of booting workers was a twentieth of an
// actor's start, and every actor of a daemon runs one build even if the files
// change under it.
//
// V8 checks a cache against its own version and flags but a script only by its
// length, and trusts the bytes: a cache is named by a hash of V8's version and
// the script's text, and starts with a hash of its own bytes, so a stale,
// foreign or damaged file is never handed to V8; the script is compiled afresh.
// Nothing here may fail a start: a file that cannot be read or written is no
// cache.
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { threadId } from 'node:worker_threads';
import { Script } from 'node:vm';
import type { ActorScript, ScriptSet } from '../../src/protocol/actor.js';

const DIGEST_BYTES = 32;
const CACHE_NAME = /^[0-9a-f]{64}$/;
// As an ES module it was: strict, `this` undefined (boot.cts calls it so).
const HEAD = Buffer.from('(function (exports, require, module, __importMetaUrl) {"use strict";');
const TAIL = Buffer.from('\n})');

// Loaded when first hashed: a worker that only compiles (every one but the cache's writer) needs none of node:crypto.
const createHash = (algorithm: string): import('node:crypto').Hash => (require('node:crypto') as typeof import('node:crypto')).createHash(algorithm);

const sha256 = (data: Uint8Array): Buffer => createHash('sha256').update(data).digest();

/** The name of a script's cache: its text and the V8 that compiles it. */
function cacheName(code: Uint8Array): string {
  return createHash('sha256').update(`${process.versions.v8}\0`).update(code).digest('hex');
}

/** Bytes in memory every thread can read without a copy. */
function shared(bytes: Uint8Array): Uint8Array {
  const view = new Uint8Array(new SharedArrayBuffer(bytes.length));
  view.set(bytes);
  return view;
}

/** Reads a cache file, or undefined when there is none or its bytes are not the ones written. */
function readCache(dir: string, name: string): Uint8Array | undefined {
  try {
    const file = readFileSync(join(dir, name));
    const data = file.subarray(DIGEST_BYTES);
    return data.length > 0 && sha256(data).equals(file.subarray(0, DIGEST_BYTES)) ? data : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The actor's scripts as one build, read once, and their caches, looked for
 * again only when the cache folder has changed (a worker wrote to it).
 */
export class ScriptStore {
  private set: ScriptSet | null = null;
  private dirStamp: number | null = null;

  /** `scriptsDir`: the built scripts (`actor.js` and chunks/); `cacheDir`: undefined for no cache. */
  constructor(
    private readonly scriptsDir: string,
    private readonly cacheDir: string | undefined,
  ) {}

  /** This build's scripts with the caches found so far; undefined when the scripts cannot be read. */
  current(): ScriptSet | undefined {
    try {
      this.set ??= this.read();
    } catch {
      return undefined;
    }
    this.findCaches(this.set);
    return this.set;
  }

  private read(): ScriptSet {
    const scripts: Record<string, ActorScript> = {};
    for (const file of readdirSync(this.scriptsDir, { recursive: true, encoding: 'utf8' })) {
      if (!file.endsWith('.js')) continue;
      const code = Buffer.concat([HEAD, readFileSync(join(this.scriptsDir, file)), TAIL]);
      scripts[join(this.scriptsDir, file)] = { name: cacheName(code), code: shared(code) };
    }
    return this.cacheDir === undefined ? { scripts } : { dir: this.cacheDir, scripts };
  }

  private findCaches(set: ScriptSet): void {
    if (this.cacheDir === undefined) return;
    let stamp: number;
    try {
      stamp = statSync(this.cacheDir).mtimeMs;
    } catch {
      return;
    }
    if (stamp === this.dirStamp) return;
    this.dirStamp = stamp;
    // A worker has its own copy of the set (workerData is cloned), sharing only the bytes.
    for (const script of Object.values(set.scripts)) {
      const cache = script.cache ? undefined : readCache(this.cacheDir, script.name);
      if (cache) script.cache = shared(cache);
    }
  }
}

export interface CompileCounts {
  /** Scripts compiled with their cache. */
  cached: number;
  /** Scripts compiled without one (none, or refused by V8). */
  compiled: number;
}

/** A worker's side: compiles the scripts of its set, and writes the caches it lacked. */
export class CodeCache {
  private readonly uncached: Array<{ script: Script; name: string }> = [];
  readonly counts: CompileCounts = { cached: 0, compiled: 0 };

  constructor(private readonly set: ScriptSet) {}

  /** Compiles the script at `path` (one of the set). */
  compile(path: string): Script {
    const known = this.set.scripts[path];
    if (!known) throw new Error(`${path} is not one of the actor's scripts`);
    const { code, cache, name } = known;
    const script = new Script(Buffer.from(code.buffer, code.byteOffset, code.length).toString('utf8'), { filename: path, ...(cache ? { cachedData: cache } : {}) });
    if (cache && !script.cachedDataRejected) this.counts.cached += 1;
    else {
      this.counts.compiled += 1;
      this.uncached.push({ script, name });
    }
    return script;
  }

  /**
   * Writes the caches of the scripts compiled without one so far, with what they
   * have compiled since, and removes the caches of no script of this build (an
   * older build's). Each file is written whole under another name and then
   * renamed: a reader at the same time sees the old file, the new one or none.
   */
  save(): void {
    const pending = this.uncached.splice(0);
    const { dir } = this.set;
    if (!dir || pending.length === 0) return;
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      for (const { script, name } of pending) {
        const data = script.createCachedData();
        const temporary = join(dir, `${name}.${process.pid}-${threadId}`);
        writeFileSync(temporary, Buffer.concat([sha256(data), data]), { mode: 0o600 });
        renameSync(temporary, join(dir, name));
      }
      const keep = new Set(Object.values(this.set.scripts).map((script) => script.name));
      for (const file of readdirSync(dir)) if (CACHE_NAME.test(file) && !keep.has(file)) rmSync(join(dir, file), { force: true });
    } catch {
      // A cache that cannot be written is compiled again next time.
    }
  }
}
