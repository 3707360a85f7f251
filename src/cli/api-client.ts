// Thin client of the daemon's REST API (/api/v1). It finds the daemon through
// $COFFER_HOME/daemon.json and turns every failure into a CliError with the
// right exit code; it never starts a daemon.
import { daemonFilePath, newChallenge, readDaemonFile, tokenProof, type DaemonFile } from '../daemon/daemon-file.js';
import { tokenMatches } from '../http/bearer.js';
import { RestClient, restBody, restInit } from '../api/rest-client.js';
import { parseErrorEnvelope } from '../protocol/errors.js';
import { EXIT, exitCodeForApiError } from './exit-codes.js';
import { CliError } from './output.js';

export interface DaemonStatus {
  status: 'ready' | 'starting' | 'stopping';
  version: string;
  started_at: string;
  port: number;
  pid: number;
  upstreams: { registered: number; enabled: number; healthy: number; degraded: number };
  proof?: string;
}

const REQUEST_TIMEOUT_MS = 60_000;

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

const STATUS_TIMEOUT_MS = 2_000;

/** GET /daemon/status (no token); null when what answers is no status. Throws when nothing answers. */
async function readStatus(port: number, timeoutMs: number, challenge?: string): Promise<DaemonStatus | null> {
  const query = challenge === undefined ? '' : `?challenge=${challenge}`;
  const response = await fetch(`${daemonUrl(port)}/api/v1/daemon/status${query}`, { signal: AbortSignal.timeout(timeoutMs) });
  if (!response.ok) {
    await response.body?.cancel();
    return null;
  }
  return (await response.json().catch(() => null)) as DaemonStatus | null;
}

/** GET /daemon/status (no token). null when nothing answers on that port. */
export async function fetchStatus(port: number, timeoutMs = STATUS_TIMEOUT_MS, challenge?: string): Promise<DaemonStatus | null> {
  return readStatus(port, timeoutMs, challenge).catch((error: unknown) => {
    if (isConnectionFailure(error)) return null;
    throw error;
  });
}

/** Whether what answered the challenge holds daemon.json's token. */
function proves(file: DaemonFile, challenge: string, status: DaemonStatus | null): status is DaemonStatus {
  return status !== null && tokenMatches(status.proof, tokenProof(file.token, challenge));
}

/**
 * The status of daemon.json's daemon, if what answers on its port proves it holds daemon.json's
 * token (a dead daemon's port may have been taken by another program, even another user's):
 * only then is the token sent there.
 */
export async function provenStatus(file: DaemonFile): Promise<DaemonStatus | null> {
  const challenge = newChallenge();
  const status = await fetchStatus(file.port, STATUS_TIMEOUT_MS, challenge);
  return proves(file, challenge, status) ? status : null;
}

export class ApiClient extends RestClient {
  private proven: Promise<void> | null = null;

  private constructor(
    private readonly home: string,
    readonly daemon: DaemonFile,
  ) {
    super();
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
    await (this.proven ??= this.prove());
    let response: Response;
    try {
      // Changes made here are audited with actor "cli".
      response = await fetch(`${daemonUrl(this.daemon.port)}/api/v1${path}`, {
        ...restInit(this.daemon.token, 'cli', method, body),
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
    const challenge = newChallenge();
    const status = await readStatus(this.daemon.port, STATUS_TIMEOUT_MS, challenge).catch((error: unknown) => {
      throw this.unanswered(error);
    });
    if (proves(this.daemon, challenge, status)) return;
    throw daemonUnreachable(this.home, `what answers on port ${this.daemon.port} is not the daemon ${daemonFilePath(this.home)} names (it does not prove it holds that file's token, which was not sent)`);
  }
}

/** The daemon's envelope {"error":{code,message,details}}, or a generic error for anything else. */
function apiError(status: number, text: string): CliError {
  const { code, message, details } = parseErrorEnvelope(status, text);
  return new CliError(exitCodeForApiError(status, code), code, message, details);
}
