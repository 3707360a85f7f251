// A lock file naming the process that holds it (pid and process start), for a
// process's own lifetime or part of it. It is made whole and then linked into
// place, so no one ever reads it half-written; one whose holder is gone (a
// crash, a reboot, its pid since another process's) is removed by one taker at
// a time, and only while it is still there, before the takers race again.
import { createHash } from 'node:crypto';
import { linkSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { daemonAlive, thisProcess, type DaemonFile } from './daemon-file.js';

export type LockHolder = Pick<DaemonFile, 'pid' | 'process_start'>;

function readText(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

/** Null for what no live holder wrote (a lock of an older format, a torn file): it is stale. */
function holderOf(text: string | null): LockHolder | null {
  try {
    const holder = JSON.parse(text ?? '') as Partial<LockHolder> | null;
    return typeof holder?.pid === 'number' ? (holder as LockHolder) : null;
  } catch {
    return null;
  }
}

/**
 * Takes the lock at `path` and answers its release, or answers the live process that holds it.
 * `reentrant`: this process may take it again (it holds nothing twice at once).
 */
export function takeLock(path: string, reentrant: boolean): (() => void) | LockHolder {
  const mine = JSON.stringify(thisProcess());
  const draft = `${path}.${process.pid}.new`;
  writeFileSync(draft, mine, { mode: 0o600 });
  try {
    for (;;) {
      try {
        linkSync(draft, path);
        return () => {
          if (readText(path) === mine) rmSync(path, { force: true });
        };
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      const seen = readText(path);
      if (seen === null) continue; // released meanwhile
      const holder = holderOf(seen);
      if (holder && !(reentrant && holder.pid === process.pid) && daemonAlive(holder)) return holder;
      removeStale(path, seen);
    }
  } finally {
    rmSync(draft, { force: true });
  }
}

/**
 * Removes the lock judged stale (`seen`), unless another has taken its place meanwhile. Those who judged it stale
 * remove it one at a time, each under a lock for that stale one (a remover that dies there leaves that lock stale in
 * turn): a lock can be linked in only where none is, so while one remover finds `seen` there, none other can be.
 */
function removeStale(path: string, seen: string): void {
  const release = takeLock(`${path}.${createHash('sha256').update(seen).digest('hex').slice(0, 16)}.removing`, false);
  // Another remover is at it, for a moment: look again after one.
  if (typeof release !== 'function') return void Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1);
  try {
    if (readText(path) === seen) rmSync(path, { force: true });
  } finally {
    release();
  }
}
