// One daemon per home, from before it opens anything until it has stopped:
// daemon.lock names its holder (pid and process start). daemon.json and the
// database's opening mark come too late or go too early for that: a daemon
// starting between them would run beside the first, on the same database and
// upstreams. The lock is made whole and then linked into place, so it never
// exists half-written; one whose holder is gone (a crash, a reboot) is moved
// aside by exactly one starter before it takes its place.
import { linkSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { daemonAlive, thisProcess, type DaemonFile } from './daemon-file.js';

/** Another live daemon has this home. */
export class DaemonRunningError extends Error {
  constructor(
    readonly pid: number,
    home: string,
    port?: number,
  ) {
    super(`a coffer daemon (pid ${pid}) already runs for ${home}${port === undefined ? '' : ` on port ${port}`}: stop it with 'coffer daemon stop'`);
    this.name = 'DaemonRunningError';
  }
}

export const daemonLockPath = (home: string): string => join(home, 'daemon.lock');

type Holder = Pick<DaemonFile, 'pid' | 'process_start'>;

function readText(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

function holderOf(text: string): Holder | null {
  try {
    const holder = JSON.parse(text) as Partial<Holder>;
    return typeof holder.pid === 'number' ? (holder as Holder) : null;
  } catch {
    return null;
  }
}

/**
 * Takes this home's lock, or throws DaemonRunningError naming the live daemon
 * that holds it. This process may take it again (a daemon started anew in the
 * same process). The answer releases it.
 */
export function acquireDaemonLock(home: string): () => void {
  const lock = daemonLockPath(home);
  const mine = JSON.stringify(thisProcess());
  const draft = `${lock}.${process.pid}.new`;
  writeFileSync(draft, mine, { mode: 0o600 });
  try {
    for (;;) {
      try {
        linkSync(draft, lock);
        break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      const seen = readText(lock);
      if (seen === null) continue; // released meanwhile
      const holder = holderOf(seen);
      if (holder && holder.pid !== process.pid && daemonAlive(holder)) throw new DaemonRunningError(holder.pid, home);
      setAside(lock, seen, home);
    }
  } finally {
    rmSync(draft, { force: true });
  }
  return () => {
    if (readText(lock) === mine) rmSync(lock, { force: true });
  };
}

/**
 * Moves away the lock judged stale (`seen`). A rename succeeds for one starter only; if what it
 * moved is no longer `seen`, another starter took the lock meanwhile: it goes back, and that one runs.
 */
function setAside(lock: string, seen: string, home: string): void {
  const aside = `${lock}.${process.pid}.stale`;
  try {
    renameSync(lock, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  const moved = readText(aside);
  if (moved === seen) return void rmSync(aside, { force: true });
  try {
    linkSync(aside, lock);
  } catch {
    // A third starter has it by now: that one runs.
  }
  rmSync(aside, { force: true });
  throw new DaemonRunningError(holderOf(moved ?? '')?.pid ?? 0, home);
}
