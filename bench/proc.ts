// Child processes of the benchmark: every one is registered here and killed
// on the way out (normal end, error, or Ctrl-C), so no run leaves orphans.
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

const children = new Set<ChildProcess>();

export interface Child {
  process: ChildProcess;
  pid: number;
  /** The first stdout line, parsed as JSON (the child's "I am listening" line), if it printed one. */
  hello: Record<string, unknown>;
  /** The last few KB of stderr, for error messages. */
  stderrTail(): string;
  stop(graceMs?: number): Promise<void>;
}

/**
 * Starts a child and, when `waitForHello`, waits (bounded) for its first
 * stdout line, a JSON object.
 */
export async function startChild(command: string, args: string[], options: SpawnOptions & { waitForHello?: boolean; helloTimeoutMs?: number } = {}): Promise<Child> {
  const { waitForHello = true, helloTimeoutMs = 30_000, ...spawnOptions } = options;
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe', 'ipc'], ...spawnOptions });
  children.add(child);
  child.once('exit', () => children.delete(child));
  let tail = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    tail = (tail + chunk.toString()).slice(-4096);
  });
  const stop = async (graceMs = 10_000): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
  };
  let hello: Record<string, unknown> = {};
  if (waitForHello) {
    const lines = createInterface({ input: child.stdout! });
    try {
      hello = await new Promise<Record<string, unknown>>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${command} ${args.join(' ')}: no start-up line within ${helloTimeoutMs} ms; stderr: ${tail}`)), helloTimeoutMs);
        lines.once('line', (line) => {
          clearTimeout(timer);
          try {
            resolve(JSON.parse(line) as Record<string, unknown>);
          } catch {
            reject(new Error(`unexpected start-up line: ${line}`));
          }
        });
        child.once('exit', (code) => {
          clearTimeout(timer);
          reject(new Error(`${args[0] ?? command} exited with ${code} before starting; stderr: ${tail}`));
        });
      });
    } catch (error) {
      await stop(1_000);
      throw error;
    }
    // Keep draining stdout so the child never blocks on a full pipe.
    child.stdout!.resume();
  } else {
    child.stdout?.resume();
  }
  return { process: child, pid: child.pid!, hello, stderrTail: () => tail, stop };
}

/** Last resort: SIGKILL whatever is still running (the children's own children see their stdin close). */
export function killAllChildren(): void {
  for (const child of children) child.kill('SIGKILL');
  children.clear();
}
process.on('exit', killAllChildren);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    killAllChildren();
    process.exit(130);
  });
}

/** Resident set size of a process in MB (its worker threads included), from /proc. */
export function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /VmRSS:\s+(\d+) kB/.exec(status);
  return match ? Number(match[1]) / 1024 : NaN;
}

/** CPU time of a process's main thread so far, in ns (Linux schedstat: precise, unlike the 10 ms ticks of /proc/PID/stat). */
export function mainThreadCpuNs(pid: number): number {
  return threadCpuNs(pid, pid);
}

function threadCpuNs(pid: number, tid: number | string): number {
  return Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
}

/** CPU time of each of a process's live threads so far, ns, by thread id (schedstat). */
export function threadsCpuNs(pid: number): ReadonlyMap<string, number> {
  const threads = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      threads.set(tid, threadCpuNs(pid, tid));
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return threads;
}

/**
 * CPU a process's threads spent between two readings, ns: each thread's own
 * difference, a thread started since counted whole. A thread that ended in
 * between counts nothing (its last figure is gone), so the sum never falls
 * below any one live thread's, as a difference of two totals could.
 */
export function threadsCpuSince(before: ReadonlyMap<string, number>, after: ReadonlyMap<string, number>): number {
  let total = 0;
  for (const [tid, ns] of after) total += ns - (before.get(tid) ?? 0);
  return total;
}

/** A daemon's CPU so far: its main thread's, ns, and each live thread's, in one reading. */
export function daemonCpuNs(pid: number): { main: number; threads: ReadonlyMap<string, number> } {
  const threads = threadsCpuNs(pid);
  return { main: threads.get(String(pid)) ?? NaN, threads };
}

/** Runs a measuring script to its end and answers the one JSON line it prints. */
export async function runOnce(args: string[], timeoutMs: number): Promise<Record<string, unknown>> {
  const child = await startChild(process.execPath, args, { helloTimeoutMs: timeoutMs });
  await child.stop();
  return child.hello;
}

export { sleep, waitFor } from '../test/helpers/wait.js';

/** CPU time of a whole process (every thread, live ones and ended ones) so far, in ms, from /proc (10 ms ticks). */
export function processCpuMs(pid: number): number {
  // The command name (field 2) may hold spaces: count fields after its closing parenthesis.
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  const TICK_MS = 10;
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
}
