// Starting and stopping a background daemon for one $COFFER_HOME; used by
// `coffer daemon start|stop` and by `coffer shim` (which starts one if none runs).
import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { daemonAlive, databaseOpeningPid, ensureHome, isProcessAlive, readDaemonFile, removeDaemonFile, type DaemonFile } from '../daemon/daemon-file.js';
import { daemonLockPath } from '../daemon/daemon-lock.js';
import { takeLock } from '../daemon/pid-lock.js';
import { CLI_ENTRY } from '../paths.js';
import { answerWaitMs, daemonUrl, provenStatus, type DaemonStatus } from './api-client.js';
import { EXIT } from './exit-codes.js';
import { CliError, printMessage } from './output.js';

export interface RunningDaemonInfo {
  file: DaemonFile;
  status: DaemonStatus;
}

const START_TIMEOUT_MS = 20_000;
/** How long a daemon opening its database (an upgrade's migrations) is waited for at most, beyond the start's own time. */
const DATABASE_OPENING_MAX_MS = 15 * 60_000;
const STOP_TIMEOUT_MS = 15_000;
const POLL_MS = 100;

export const daemonLogPath = (home: string): string => join(home, 'logs', 'daemon.log');

/**
 * The daemon daemon.json points at, if it answers and proves it holds the file's token (a stale
 * file's port may be another program's now), with the file's pid. `patient`: a live daemon's
 * late answer is waited for (a command's one look), not only a probe's short while (a poll).
 */
export async function probeDaemon(home: string, { patient = false } = {}): Promise<RunningDaemonInfo | null> {
  const file = readDaemonFile(home);
  if (!file) return null;
  const status = await provenStatus(file, patient ? answerWaitMs(file) : undefined);
  return status?.pid === file.pid ? { file, status } : null;
}

/**
 * Spawns `coffer serve` detached (output to logs/daemon.log) and waits until it
 * reports ready. Returns the running one instead when there already is one; a
 * concurrent starter (two shims launched together) is waited for, not raced.
 */
export async function startDaemonProcess(
  home: string,
  options: { port?: number; timeoutMs?: number; config?: string } = {},
): Promise<RunningDaemonInfo & { alreadyRunning: boolean }> {
  const timeoutMs = options.timeoutMs ?? START_TIMEOUT_MS;
  const deadline = Date.now() + timeoutMs;
  const running = await settlePrevious(home, deadline);
  if (running) return { ...running, alreadyRunning: true };
  for (const note of ensureHome(home)) printMessage(`coffer: ${note}`);
  // A daemon still opening (upgrading) the database has no daemon.json yet: it is waited for, not started beside.
  const opening = databaseOpeningPid(home);
  if (opening !== null) return { ...(await waitUntilReady(home, deadline, timeoutMs, opening)), alreadyRunning: true };
  const release = acquireStartLock(home);
  if (!release) return { ...(await waitUntilReady(home, deadline, timeoutMs)), alreadyRunning: true };
  try {
    const log = openSync(daemonLogPath(home), 'a', 0o600);
    const args = [
      CLI_ENTRY,
      'serve',
      '--home',
      home,
      ...(options.port !== undefined ? ['--port', String(options.port)] : []),
      // Resolved here: the daemon runs in its home, not in the folder it was started from.
      ...(options.config !== undefined ? ['--config', resolve(options.config)] : []),
    ];
    // cwd: the home, so a long-lived daemon neither pins nor depends on wherever it happened to be started from.
    const child = spawn(process.execPath, args, { detached: true, cwd: home, stdio: ['ignore', log, log], env: process.env });
    closeSync(log);
    let exited: string | null = null;
    let exitCode: number | null = null;
    child.on('exit', (code, signal) => {
      exited = signal ?? `code ${code}`;
      exitCode = code;
    });
    try {
      const ready = await waitUntilReady(home, deadline, timeoutMs, child.pid, () => exited);
      child.unref();
      return { ...ready, alreadyRunning: false };
    } catch (error) {
      if (exited === null && databaseOpeningPid(home) === child.pid) {
        // Stopping it would roll its upgrade back, to be met again at the next start: it goes on alone.
        child.unref();
        throw startFailure(home, `the daemon (pid ${child.pid}) is still upgrading its database; it goes on in the background: run this again later`);
      }
      // A daemon that missed its deadline is not left behind half-started.
      if (exited === null) child.kill('SIGTERM');
      // `serve` said why it refused (a taken port, a home that is not private): the caller gets that exit code.
      if (error instanceof CliError && (exitCode === EXIT.CONFLICT || exitCode === EXIT.INVALID_INPUT)) throw new CliError(exitCode, error.code, error.message, error.details);
      throw error;
    }
  } finally {
    release();
  }
}

/**
 * The ready daemon of this home, or null once no process named by daemon.json
 * is alive: one that is still stopping is waited for, as a new daemon would refuse to start beside it.
 */
async function settlePrevious(home: string, deadline: number): Promise<RunningDaemonInfo | null> {
  for (;;) {
    const file = readDaemonFile(home);
    if (!file || !daemonAlive(file)) return null;
    const running = await probeDaemon(home);
    if (running?.status.status === 'ready') return running;
    if (Date.now() >= deadline) throw startFailure(home, `the process daemon.json names (pid ${file.pid}) neither answers as ready nor exits`);
    await sleep(POLL_MS);
  }
}

/**
 * Waits until `deadline` for the daemon (`pid`, or whichever starts) to be
 * ready, not counting the time it spends opening its database: an upgrade
 * migrates it there once, for as long as the history takes to copy, and a
 * daemon stopped for being slow would roll that back and meet it again next
 * start. Once it has opened it, it has `timeoutMs` more.
 */
async function waitUntilReady(
  home: string,
  until: number,
  timeoutMs: number,
  pid?: number,
  exited: () => string | null = () => null,
): Promise<RunningDaemonInfo> {
  let deadline = until;
  const longest = until + DATABASE_OPENING_MAX_MS;
  let told = false;
  for (;;) {
    const how = exited();
    if (how !== null) throw startFailure(home, `the daemon exited (${how}) before it was ready`);
    const running = await probeDaemon(home);
    if (running?.status.status === 'ready' && (pid === undefined || running.file.pid === pid)) return running;
    const opening = databaseOpeningPid(home);
    if (opening !== null && (pid === undefined || opening === pid) && Date.now() < longest) {
      deadline = Math.max(deadline, Date.now() + timeoutMs);
      // Said once the wait outlasts the start's own time, so it is heard only when it explains one.
      if (!told && Date.now() >= until) {
        told = true;
        printMessage('coffer: the daemon is still opening its database (an upgrade migrates it once, which takes longer with a long history); waiting');
      }
    }
    if (Date.now() >= deadline) throw startFailure(home, 'the daemon did not become ready in time');
    await sleep(POLL_MS);
  }
}

function startFailure(home: string, why: string): CliError {
  let tail = '';
  try {
    tail = readFileSync(daemonLogPath(home), 'utf8').trimEnd().split('\n').slice(-10).join('\n');
  } catch {
    // no log yet
  }
  const message = `${why}; see ${daemonLogPath(home)}` + (tail ? `\n--- last lines of the log ---\n${tail}` : '');
  return new CliError(EXIT.ERROR, 'DAEMON_START_FAILED', message);
}

/** The starters' lock (pid-lock.ts): null while another live starter holds it, which is then waited for. */
function acquireStartLock(home: string): (() => void) | null {
  const taken = takeLock(join(home, 'daemon.start.lock'), false);
  return typeof taken === 'function' ? taken : null;
}

/**
 * Asks the daemon to shut down (SIGTERM to the pid in daemon.json when it does
 * not answer) and waits until the process is gone. null: nothing was running.
 */
export async function stopDaemonProcess(home: string): Promise<{ pid: number } | null> {
  const file = readDaemonFile(home);
  if (!file) return null;
  if (!daemonAlive(file)) {
    removeGoneDaemonFile(home, file.pid); // left behind by a daemon that crashed (its pid maybe another process's now)
    return null;
  }
  let signalled = false;
  const terminate = (): void => {
    signalled = true;
    try {
      process.kill(file.pid, 'SIGTERM');
    } catch {
      // already gone
    }
  };
  if (!(await requestShutdown(file))) terminate();
  let deadline = Date.now() + STOP_TIMEOUT_MS;
  while (isProcessAlive(file.pid)) {
    if (Date.now() >= deadline) {
      if (signalled) throw new CliError(EXIT.ERROR, 'DAEMON_STOP_FAILED', `the daemon (pid ${file.pid}) did not exit in time`);
      terminate(); // it accepted the shutdown request but hangs: one more, harder, nudge
      deadline = Date.now() + 5_000;
    }
    await sleep(POLL_MS);
  }
  removeGoneDaemonFile(home, file.pid);
  return { pid: file.pid };
}

/**
 * Removes the daemon.json of a daemon that is gone, under the daemon lock: a daemon starting meanwhile holds that
 * lock and writes its own daemon.json, which must stay (the CLI and the shims find it by it).
 */
function removeGoneDaemonFile(home: string, pid: number): void {
  const release = takeLock(daemonLockPath(home), false);
  if (typeof release !== 'function') return;
  try {
    removeDaemonFile(home, pid);
  } finally {
    release();
  }
}

/** False, without sending the token, when what answers on the file's port does not prove it holds it. */
async function requestShutdown(file: DaemonFile): Promise<boolean> {
  if ((await provenStatus(file)) === null) return false;
  try {
    const response = await fetch(`${daemonUrl(file.port)}/api/v1/daemon/shutdown`, {
      method: 'POST',
      headers: { authorization: `Bearer ${file.token}` },
      signal: AbortSignal.timeout(5_000),
    });
    await response.body?.cancel();
    return response.ok;
  } catch {
    return false;
  }
}
