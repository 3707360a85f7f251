// Stable exit codes of the coffer CLI (listed in the README) and how REST errors map onto them.

export const EXIT = {
  OK: 0,
  ERROR: 1,
  USAGE: 2,
  DAEMON_UNREACHABLE: 3,
  NOT_FOUND: 4,
  CONFLICT: 5,
  INVALID_INPUT: 6,
  UPSTREAM_TEST_FAILED: 7,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

const BY_CODE: Record<string, ExitCode> = {
  RESOURCE_NOT_FOUND: EXIT.NOT_FOUND,
  RESOURCE_ALREADY_EXISTS: EXIT.CONFLICT,
  CONFIG_INVALID: EXIT.INVALID_INPUT,
  NAMESPACE_INVALID: EXIT.INVALID_INPUT,
  BAD_REQUEST: EXIT.INVALID_INPUT,
  // A daemon that is starting or stopping cannot serve the command either.
  DAEMON_NOT_READY: EXIT.DAEMON_UNREACHABLE,
};

const BY_STATUS: Record<number, ExitCode> = {
  400: EXIT.INVALID_INPUT,
  404: EXIT.NOT_FOUND,
  409: EXIT.CONFLICT,
  422: EXIT.INVALID_INPUT,
};

/** The error code wins; the HTTP status is the fallback for codes this CLI does not know yet. */
export function exitCodeForApiError(status: number, code: string | undefined): ExitCode {
  return (code !== undefined ? BY_CODE[code] : undefined) ?? BY_STATUS[status] ?? EXIT.ERROR;
}

export const EXIT_CODES_HELP = `Exit codes:
  0  ok
  1  error
  2  usage error
  3  daemon unreachable (start one with \`coffer daemon start\` or \`coffer serve\`)
  4  not found
  5  conflict (already exists or already running; the --port / COFFER_PORT asked for is in use)
  6  invalid input
  7  upstream test failed`;
