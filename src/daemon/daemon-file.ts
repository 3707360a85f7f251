// $COFFER_HOME and daemon.json: how the CLI and the shim find a running daemon.
import { createHmac, randomBytes } from 'node:crypto';
import { readFileSync, renameSync, rmSync, statSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

export interface DaemonFile {
  port: number;
  pid: number;
  token: string;
  started_at: string;
  /** When its process started, in clock ticks after boot (Linux): with the pid, it names that one process whatever the wall clock did since. */
  process_start?: number;
}

/** --home, then COFFER_HOME, then ~/.coffer. */
export function resolveHome(explicit?: string): string {
  return explicit ?? process.env.COFFER_HOME ?? join(homedir(), '.coffer');
}

export { ensureHome } from './private-home.js';

export const daemonFilePath = (home: string): string => join(home, 'daemon.json');

export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

/** A challenge for the daemon on daemon.json's port: fresh for each probe. */
export function newChallenge(): string {
  return randomBytes(24).toString('base64url');
}

export const CHALLENGE_PATTERN = /^[A-Za-z0-9_-]{16,128}$/;

/**
 * The daemon's answer to a challenge: a keyed hash with its token. Whoever read the token from
 * daemon.json can check it; a process that took a dead daemon's port cannot make it, so it is
 * never given the token.
 */
export function tokenProof(token: string, challenge: string): string {
  return createHmac('sha256', token).update(`coffer daemon proof\u0000${challenge}`).digest('base64url');
}

/** Atomic: written to a temporary file with mode 0600, then renamed over (a reader never sees half of it); on failure none is left (it may hold the token). */
function writePrivateFile(target: string, text: string): void {
  const temporary = `${target}.${process.pid}.tmp`;
  try {
    writeFileSync(temporary, text, { mode: 0o600 });
    renameSync(temporary, target);
  } catch (error) {
    try {
      unlinkSync(temporary);
    } catch {
      // Never written, or not ours to remove (a directory in its way).
    }
    throw error;
  }
}

export function writeDaemonFile(home: string, data: DaemonFile): void {
  writePrivateFile(daemonFilePath(home), JSON.stringify(data, null, 2) + '\n');
}

/** null when there is none or it is unreadable (a daemon that never finished starting). */
export function readDaemonFile(home: string): DaemonFile | null {
  try {
    const parsed = JSON.parse(readFileSync(daemonFilePath(home), 'utf8')) as Partial<DaemonFile>;
    if (typeof parsed.port !== 'number' || typeof parsed.token !== 'string' || typeof parsed.pid !== 'number') return null;
    return parsed as DaemonFile;
  } catch {
    return null;
  }
}

export function removeDaemonFile(home: string, pid: number): void {
  if (readDaemonFile(home)?.pid === pid) rmSync(daemonFilePath(home), { force: true });
}

/**
 * While a daemon opens its database — where an upgrade's migrations run,
 * once, for as long as the history they copy takes — this file names its pid
 * and is touched every second, so a starter waiting for it knows it is busy
 * rather than stuck. A mark not touched for a while is a dead daemon's (its
 * pid may belong to another process by now).
 */
export const databaseOpeningPath = (home: string): string => join(home, 'database.opening');

const MARK_TOUCH_MS = 1_000;
/** A mark older than this was left by a daemon that died opening its database. */
const MARK_STALE_MS = 5_000;

/** A daemon already opening this home's database: this one must not start beside it. */
export class DatabaseOpeningError extends Error {
  constructor(readonly pid: number) {
    super(`a coffer daemon (pid ${pid}) is opening the database of this home (an upgrade may take a while): wait for it, or stop it`);
    this.name = 'DatabaseOpeningError';
  }
}

/** Refuses a start while another live daemon is opening this home's database. */
export function checkNoneOpening(home: string): void {
  const other = databaseOpeningPid(home);
  if (other !== null && other !== process.pid) throw new DatabaseOpeningError(other);
}

/** Marks the database as being opened by this process; the answer unmarks it. */
export function markDatabaseOpening(home: string): () => void {
  const target = databaseOpeningPath(home);
  writePrivateFile(target, `${process.pid}\n`);
  const touch = setInterval(() => {
    const now = new Date();
    try {
      utimesSync(target, now, now);
    } catch {
      // Gone: unmarked meanwhile.
    }
  }, MARK_TOUCH_MS);
  touch.unref();
  return () => {
    clearInterval(touch);
    if (databaseOpeningPid(home) === process.pid) rmSync(target, { force: true });
  };
}

/** The live process opening the database now (its mark fresh), or null. */
export function databaseOpeningPid(home: string): number | null {
  let pid: number;
  try {
    const path = databaseOpeningPath(home);
    if (Date.now() - statSync(path).mtimeMs > MARK_STALE_MS) return null;
    pid = Number(readFileSync(path, 'utf8').trim());
  } catch {
    return null;
  }
  return Number.isSafeInteger(pid) && pid > 0 && isProcessAlive(pid) ? pid : null;
}

/**
 * Whether the process a daemon.json names is still that file's daemon: alive, and (where /proc
 * tells) started when the file says its daemon did. The file outlives a crash or a reboot and
 * pids come back: a process started since holds the pid, and is neither waited for, nor taken
 * for a daemon that refuses a start beside it, nor signalled.
 */
export function daemonAlive(file: Pick<DaemonFile, 'pid' | 'process_start'>): boolean {
  if (!isProcessAlive(file.pid)) return false;
  const start = file.process_start === undefined ? null : processStart(file.pid);
  return start === null || start === file.process_start;
}

/** This process as daemon.json names it. */
export function thisProcess(): Pick<DaemonFile, 'pid' | 'process_start'> {
  const start = processStart(process.pid);
  return start === null ? { pid: process.pid } : { pid: process.pid, process_start: start };
}

/** The fields of /proc/<pid>/stat from its third (the state) on; null without procfs or that process. */
function statFields(pid: number): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command before them may hold spaces and parentheses: they start after its last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/** When a process started, in clock ticks after boot (field 22 of /proc/<pid>/stat); null without procfs. */
function processStart(pid: number): number | null {
  const ticks = Number(statFields(pid)?.[19]);
  return Number.isSafeInteger(ticks) ? ticks : null;
}

/** Alive and not a zombie (an exited child its parent has not reaped yet counts as gone). */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  const fields = statFields(pid);
  // No procfs: trust kill(0).
  return fields === null || fields[0] !== 'Z';
}
