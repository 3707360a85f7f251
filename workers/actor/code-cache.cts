// V8 code caches of the actor's scripts, kept in a private folder (under the
// daemon's home): a worker that finds the cache of a script skips compiling
// what it holds, the functions the start-up path ran included. A worker that
// finds none compiles as usual and, once asked (its actor is ready, the start-up
// path compiled), writes one for the next worker.
//
// V8 checks a cache against its own version and flags but a script only by its
// length, and trusts the bytes: a cache is named by a hash of V8's version and
// the script's text, and starts with a hash of its own bytes, so a stale,
// foreign or damaged file is never handed to V8; the script is compiled afresh.
// Nothing here may fail a start: a file that cannot be read or written is no
// cache.
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { threadId } from 'node:worker_threads';
import { Script } from 'node:vm';

const DIGEST_BYTES = 32;
const CACHE_NAME = /^[0-9a-f]{64}$/;

const sha256 = (data: Uint8Array): Buffer => createHash('sha256').update(data).digest();

/** The name of a script's cache: its text and the V8 that compiles it. */
function cacheName(code: Buffer): string {
  return createHash('sha256').update(`${process.versions.v8}\0`).update(code).digest('hex');
}

export interface CompileCounts {
  /** Scripts compiled with their cache. */
  cached: number;
  /** Scripts compiled without one (none, damaged, or refused by V8). */
  compiled: number;
}

export class CodeCache {
  private readonly uncached: Array<{ script: Script; name: string }> = [];
  readonly counts: CompileCounts = { cached: 0, compiled: 0 };

  /** `dir`: where the caches are (created 0700 on the first write); undefined: no cache, every script compiled. */
  constructor(private readonly dir: string | undefined) {}

  /** `code`: the script's text in UTF-8 (hashed as bytes: several times faster than as a string). */
  compile(code: Buffer, filename: string): Script {
    const name = cacheName(code);
    const cachedData = this.read(name);
    const script = new Script(code.toString('utf8'), { filename, ...(cachedData ? { cachedData } : {}) });
    if (cachedData && !script.cachedDataRejected) this.counts.cached += 1;
    else {
      this.counts.compiled += 1;
      this.uncached.push({ script, name });
    }
    return script;
  }

  /**
   * Writes the caches of the scripts compiled without one so far, with what they
   * have compiled since, and removes the caches of no script in `current` (an
   * older build's). Each file is written whole under another name and then
   * renamed: a worker reading at the same time sees the old file, the new one or none.
   */
  save(current: () => Buffer[]): void {
    const pending = this.uncached.splice(0);
    if (!this.dir || pending.length === 0) return;
    try {
      mkdirSync(this.dir, { recursive: true, mode: 0o700 });
      for (const { script, name } of pending) {
        const data = script.createCachedData();
        const temporary = join(this.dir, `${name}.${process.pid}-${threadId}`);
        writeFileSync(temporary, Buffer.concat([sha256(data), data]), { mode: 0o600 });
        renameSync(temporary, join(this.dir, name));
      }
      const keep = new Set(current().map(cacheName));
      for (const file of readdirSync(this.dir)) if (CACHE_NAME.test(file) && !keep.has(file)) rmSync(join(this.dir, file), { force: true });
    } catch {
      // A cache that cannot be written is compiled again next time.
    }
  }

  private read(name: string): Buffer | undefined {
    if (!this.dir) return undefined;
    try {
      const file = readFileSync(join(this.dir, name));
      const data = file.subarray(DIGEST_BYTES);
      return data.length > 0 && sha256(data).equals(file.subarray(0, DIGEST_BYTES)) ? data : undefined;
    } catch {
      return undefined;
    }
  }
}
