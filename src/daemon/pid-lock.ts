// A lock file naming the process that holds it (pid and process start), for a
// process's own lifetime or part of it. It is made whole and then linked into
// place, so no one ever reads it half-written; one whose holder is gone (a
// crash, a reboot, its pid since another process's) is moved aside by exactly
// one taker before that one takes its place.
import { linkSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
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
      const taker = setAside(path, seen);
      if (taker) return taker;
    }
  } finally {
    rmSync(draft, { force: true });
  }
}

/**
 * Moves away the lock judged stale (`seen`). A rename succeeds for one taker only; if what it
 * moved is no longer `seen`, another took the lock meanwhile: it goes back, and that one is answered.
 */
function setAside(path: string, seen: string): LockHolder | null {
  const aside = `${path}.${process.pid}.stale`;
  try {
    renameSync(path, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  const moved = readText(aside);
  try {
    if (moved === seen) return null;
    linkSync(aside, path);
  } catch {
    // A third taker has it by now: it runs.
  } finally {
    rmSync(aside, { force: true });
  }
  return holderOf(moved) ?? { pid: 0 };
}
