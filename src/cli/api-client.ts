// Thin client of the daemon's REST API (/api/v1). It finds the daemon through
// $COFFER_HOME/daemon.json and turns every failure into a CliError with the
// right exit code; it never starts a daemon.
import { daemonFilePath, readDaemonFile, type DaemonFile } from '../daemon/daemon-file.js';
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

/** GET /daemon/status (no token). null when nothing answers on that port. */
export async function fetchStatus(port: number, timeoutMs = 2_000): Promise<DaemonStatus | null> {
  try {
    const response = await fetch(`${daemonUrl(port)}/api/v1/daemon/status`, { signal: AbortSignal.timeout(timeoutMs) });
    if (!response.ok) {
      await response.body?.cancel();
      return null;
    }
    return (await response.json()) as DaemonStatus;
  } catch (error) {
    if (isConnectionFailure(error) || error instanceof SyntaxError) return null;
    throw error;
  }
}

export class ApiClient extends RestClient {
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

  async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    let response: Response;
    try {
      // Changes made here are audited with actor "cli".
      response = await fetch(`${daemonUrl(this.daemon.port)}/api/v1${path}`, {
        ...restInit(this.daemon.token, 'cli', method, body),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
    } catch (error) {
      if (!isConnectionFailure(error)) throw error;
      throw daemonUnreachable(this.home, `the coffer daemon on port ${this.daemon.port} does not answer`, error);
    }
    const text = await response.text();
    if (!response.ok) throw apiError(response.status, text);
    return restBody<T>(text);
  }
}

/** The daemon's envelope {"error":{code,message,details}}, or a generic error for anything else. */
function apiError(status: number, text: string): CliError {
  const { code, message, details } = parseErrorEnvelope(status, text);
  return new CliError(exitCodeForApiError(status, code), code, message, details);
}
