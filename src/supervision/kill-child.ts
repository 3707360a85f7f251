// A worker thread that died or was ended from outside cannot stop the stdio
// child it spawned (the process outlives the thread): whoever knows the pid
// kills it.
export function killChild(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}
