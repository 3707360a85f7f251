// A worker thread that died or was ended from outside cannot stop the stdio
// child it spawned (the process outlives the thread): whoever knows the pid
// kills it, and with it its process group (a stdio child leads its own, see
// stdio-transport), so what it forked does not outlive it either.
export function killChild(pid: number): void {
  signalGroup(pid, 'SIGKILL');
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

/** Signals the process group `pid` leads; false when no process is left in it. */
export function signalGroup(pid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    return false;
  }
}
