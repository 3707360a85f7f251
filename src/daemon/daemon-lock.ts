// One daemon per home, from before it opens anything until it has stopped:
// daemon.lock (pid-lock.ts). daemon.json and the database's opening mark come
// too late or go too early for that: a daemon starting between them would run
// beside the first, on the same database and upstreams.
import { join } from 'node:path';
import { takeLock } from './pid-lock.js';

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

/**
 * Takes this home's lock, or throws DaemonRunningError naming the live daemon
 * that holds it. This process may take it again (a daemon started anew in the
 * same process). The answer releases it.
 */
export function acquireDaemonLock(home: string): () => void {
  const taken = takeLock(daemonLockPath(home), true);
  if (typeof taken !== 'function') throw new DaemonRunningError(taken.pid, home);
  return taken;
}
