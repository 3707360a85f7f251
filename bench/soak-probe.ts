// What the soak samples of the daemon process, from /proc: resident memory,
// open file descriptors, threads (the main thread, libuv's pool and one worker
// per actor plus the DB writer), and live child processes; and the size of its
// home directory (database and logs).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { rssMb } from './proc.js';

export interface ProcessSample {
  /** Seconds since the soak started. */
  at: number;
  rssMb: number;
  /** Bytes under the daemon's home, in MB. */
  diskMb: number;
  fds: number;
  threads: number;
  children: number;
}

function threads(pid: number): number {
  const match = /Threads:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) : NaN;
}

/** Live (not zombie) processes whose parent is `pid`. */
function children(pid: number): number {
  let count = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // Fields after the command (which may contain spaces): state, ppid, ...
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(ppid) === pid && state !== 'Z') count += 1;
    } catch {
      // It exited while we looked.
    }
  }
  return count;
}

/** Bytes of the files under `dir` (iterative; files vanishing meanwhile count as 0). */
function treeBytes(dir: string): number {
  let bytes = 0;
  for (const entry of readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
    try {
      const stat = statSync(join(dir, entry));
      if (stat.isFile()) bytes += stat.size;
    } catch {
      // Rotated or removed while we looked.
    }
  }
  return bytes;
}

export function sample(pid: number, startedAt: number, home: string): ProcessSample {
  return {
    at: Math.round((Date.now() - startedAt) / 1000),
    rssMb: Math.round(rssMb(pid) * 10) / 10,
    diskMb: Math.round(treeBytes(home) / 1024 / 102.4) / 10,
    fds: readdirSync(`/proc/${pid}/fd`).length,
    threads: threads(pid),
    children: children(pid),
  };
}

/** The median of each figure over some samples: one noisy sample does not make a trend. */
export function typical(samples: ProcessSample[]): Omit<ProcessSample, 'at'> {
  const median = (pick: (s: ProcessSample) => number): number => {
    const sorted = samples.map(pick).sort((a, b) => a - b);
    return sorted[Math.floor((sorted.length - 1) / 2)] ?? NaN;
  };
  return { rssMb: median((s) => s.rssMb), diskMb: median((s) => s.diskMb), fds: median((s) => s.fds), threads: median((s) => s.threads), children: median((s) => s.children) };
}
