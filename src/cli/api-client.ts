// Thin client of the daemon's REST API (/api/v1). It finds the daemon through
// $COFFER_HOME/daemon.json and turns every failure into a CliError with the
// right exit code; it never starts a daemon.
import { daemonAlive, daemonFilePath, newChallenge, readDaemonFile, tokenProof, type DaemonFile } from '../daemon/daemon-file.js';
import { tokenMatches } from '../http/bearer.js';
import { RestClient, restBody, restInit } from '../api/rest-client.js';
import type { DaemonStatus } from '../api/routes/daemon.js';
import { parseErrorEnvelope } from '../protocol/errors.js';
import { EXIT, exitCodeForApiError } from './exit-codes.js';
import { CliError } from './output.js';

export type { DaemonStatus };

const REQUEST_TIMEOUT_MS = 60_000;
/** A probe's wait for the status answer: what answers on a port quickly is a daemon or a squatter. */
const PROBE_MS = 2_000;
/**
 * The wait when daemon.json's process is alive: a daemon busy starting hundreds of actors, or paused
 * a moment, answers late, and is not gone.
 */
const ALIVE_DAEMON_MS = 20_000;

/** How long to wait for daemon.json's daemon to answer a command's first request. */
export const answerWaitMs = (file: DaemonFile): number => (daemonAlive(file) ? ALIVE_DAEMON_MS : PROBE_MS);

export const daemonUrl = (port: number): string => `http://127.0.0.1:${port}`;

/** Exit 3 and how to start a daemon; `cause` (the failed connection) is shown with --verbose. */
export function daemonUnreachable(home: string, why: string, cause?: unknown): CliError {
  return new CliError(
    EXIT.DAEMON_UNREACHABLE,
    'DAEMON_UNREACHABLE',
    `${why} (home ${home}); start one with \`coffer daemon start\` or \`coffer serve\``,
    undefined,
    cause,
  );
}

/** True for errors of fetch() that mean nothing answered (refused, reset, timed out). */
function isConnectionFailure(error: unknown): boolean {
  return error instanceof TypeError || (error instanceof DOMException && (error.name === 'TimeoutError' || error.name === 'AbortError'));
}

/**
 * GET /daemon/status (no token) with a fresh challenge: the status if what answers on daemon.json's
 * port proves it holds the file's token (a dead daemon's port may have been taken by another
 * program, even another user's), else null; only then is the token sent there. Throws when
 * nothing answers.
 */
async function challengeDaemon(file: DaemonFile, waitMs: number): Promise<DaemonStatus | null> {
  const challenge = newChallenge();
  const response = await fetch(`${daemonUrl(file.port)}/api/v1/daemon/status?challenge=${challenge}`, { signal: AbortSignal.timeout(waitMs) });
  if (!response.ok) {
    await response.body?.cancel();
    return null;
  }
  const status = (await response.json().catch(() => null)) as DaemonStatus | null;
  return status !== null && tokenMatches(status.proof, tokenProof(file.token, challenge)) ? status : null;
}

/** The status of daemon.json's daemon once it proved itself; null when nothing, or something else, answers within `waitMs`. */
export async function provenStatus(file: DaemonFile, waitMs = PROBE_MS): Promise<DaemonStatus | null> {
  return challengeDaemon(file, waitMs).catch((error: unknown) => {
    if (isConnectionFailure(error)) return null;
    throw error;
  });
}

export class ApiClient extends RestClient {
  private proven: Promise<void> | null = null;

  private constructor(
    private readonly home: string,
    private readonly daemon: DaemonFile,
  ) {
    super();
  }

  /** daemon.json's port: where the daemon is, whether or not it proved itself yet. */
  get port(): number {
    return this.daemon.port;
  }

  /**
   * daemon.json's daemon once what answers on its port proved it holds the file's token (asked
   * once): the token goes nowhere else, whether over REST or the admin WebSocket.
   */
  async provenDaemon(): Promise<DaemonFile> {
    await (this.proven ??= this.prove());
    return this.daemon;
  }

  static forHome(home: string): ApiClient {
    const daemon = readDaemonFile(home);
    if (!daemon) throw daemonUnreachable(home, 'no coffer daemon is running', `no usable daemon file at ${daemonFilePath(home)}`);
    return new ApiClient(home, daemon);
  }

  /** For the daemon a probe just found proven (probeDaemon): it is not asked again. */
  static forProven(home: string, daemon: DaemonFile): ApiClient {
    const client = new ApiClient(home, daemon);
    client.proven = Promise.resolve();
    return client;
  }

  async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    const { port, token } = await this.provenDaemon();
    let response: Response;
    try {
      // Changes made here are audited with actor "cli".
      response = await fetch(`${daemonUrl(port)}/api/v1${path}`, {
        ...restInit(token, 'cli', method, body),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
    } catch (error) {
      throw this.unanswered(error);
    }
    const text = await response.text();
    if (!response.ok) throw apiError(response.status, text);
    return restBody<T>(text);
  }

  /** A failed fetch: nothing answers (DAEMON_UNREACHABLE, the cause kept for --verbose), or another error as it is. */
  private unanswered(error: unknown): unknown {
    return isConnectionFailure(error) ? daemonUnreachable(this.home, `the coffer daemon on port ${this.daemon.port} does not answer`, error) : error;
  }

  private async prove(): Promise<void> {
    const status = await challengeDaemon(this.daemon, answerWaitMs(this.daemon)).catch((error: unknown) => {
      throw this.unanswered(error);
    });
    if (status) return;
    throw daemonUnreachable(this.home, `what answers on port ${this.daemon.port} is not the daemon ${daemonFilePath(this.home)} names (it does not prove it holds that file's token, which was not sent)`);
  }
}

/** The daemon's envelope {"error":{code,message,details}}, or a generic error for anything else. */
function apiError(status: number, text: string): CliError {
  const { code, message, details } = parseErrorEnvelope(status, text);
  return new CliError(exitCodeForApiError(status, code), code, message, details);
}
