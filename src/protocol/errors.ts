// The one error model of coffer: a stable code, an actionable message, and
// optional details. REST answers it as {"error": {...}}; MCP answers it as a
// JSON-RPC error whose data carries the same code.

export const ERROR_HTTP_STATUS = {
  BAD_REQUEST: 400,
  UNAUTHENTICATED: 401,
  TOOL_DISABLED: 403,
  FORBIDDEN_HOST: 403,
  /** A capability outside the toolset of the endpoint or client: neither listed nor callable there. */
  NOT_IN_TOOLSET: 403,
  /** A client bound to one toolset asked for another endpoint. */
  TOOLSET_FORBIDDEN: 403,
  RESOURCE_NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  RESOURCE_ALREADY_EXISTS: 409,
  /** The server is declared in the config file: it is changed there, not through the API. */
  SERVER_MANAGED_BY_FILE: 409,
  /** The toolset is declared in the config file: it is changed there, not through the API. */
  TOOLSET_MANAGED_BY_FILE: 409,
  /** Still referred to (a toolset a client is bound to): unbind first. */
  RESOURCE_IN_USE: 409,
  PAYLOAD_TOO_LARGE: 413,
  /** A name, URI or search query longer than coffer accepts. */
  NAME_TOO_LONG: 414,
  CONFIG_INVALID: 422,
  /** The config file (coffer serve --config) cannot be applied: details.errors say where, by line and column. */
  CONFIG_FILE_INVALID: 422,
  /** A namespace whose tool names model hosts would refuse (characters, or no room left in the name budget). */
  NAMESPACE_INVALID: 422,
  INTERNAL: 500,
  /** The upstream's answer breaks coffer's limits (nesting depth): that answer fails, the upstream stays up. */
  UPSTREAM_RESPONSE_INVALID: 502,
  UPSTREAM_UNAVAILABLE: 503,
  /** Too many bytes already in flight to that upstream (or to all of them), or too many calls of modern clients running: retry later. */
  UPSTREAM_BUSY: 503,
  /** The upstream wants a sign-in (OAuth) first: `coffer mcp auth NAME`. */
  UPSTREAM_AUTH_REQUIRED: 503,
  DAEMON_NOT_READY: 503,
  UPSTREAM_TIMEOUT: 504,
  /** A requestState that is not coffer's, was changed, or belongs to another caller or request. */
  REQUEST_STATE_INVALID: 400,
  /** A requestState past its expiry, or whose parked call is gone: call again without it. */
  REQUEST_STATE_EXPIRED: 400,
  /** MCP 2026-07-28: a standard or Mcp-Param-* header is missing or disagrees with the body (JSON-RPC -32020). */
  HEADER_MISMATCH: 400,
  /** The call needs a client capability (sampling, elicitation, roots) the request did not declare. */
  MISSING_CLIENT_CAPABILITY: 400,
  /** A taskId that is not coffer's, was changed, belongs to another caller, expired, or whose server was removed. */
  TASK_NOT_FOUND: 404,
} as const;

export type ErrorCode = keyof typeof ERROR_HTTP_STATUS;

export interface ErrorBody {
  code: ErrorCode;
  message: string;
  details?: unknown;
}

/** JSON-RPC error codes coffer itself produces on /mcp. Upstream errors pass unchanged. */
export const JSONRPC = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  /** R10: a disabled capability. */
  TOOL_DISABLED: -32000,
  /** Same value as the SDK's RequestTimeout. */
  UPSTREAM_TIMEOUT: -32001,
  UPSTREAM_UNAVAILABLE: -32010,
  UPSTREAM_RESPONSE_INVALID: -32011,
  UPSTREAM_BUSY: -32012,
  /** /mcp without a valid credential (HTTP 401). */
  UNAUTHENTICATED: -32013,
  /** The upstream wants a sign-in (OAuth) before it answers. */
  UPSTREAM_AUTH_REQUIRED: -32014,
  /** A capability outside the session's toolset. */
  NOT_IN_TOOLSET: -32015,
  /** MCP 2026-07-28: the request did not declare a client capability the call needs (data.requiredCapabilities). */
  MISSING_CLIENT_CAPABILITY: -32021,
  /** A request its client cancelled: LSP's RequestCancelled (MCP has no code of its own). */
  REQUEST_CANCELLED: -32800,
} as const;

export interface JsonRpcErrorBody {
  code: number;
  message: string;
  data?: unknown;
}

/** An Error that carries an ErrorBody; thrown inside a thread, never across one. */
export class CofferError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = 'CofferError';
  }

  toBody(): ErrorBody {
    return this.details === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, details: this.details };
  }
}

/** Results that cross a thread boundary carry errors as data (comlink drops custom Error fields). */
export type Result<T> = { ok: true; value: T } | { ok: false; error: ErrorBody };

/** An error answer of the REST API as its reader sees it: the envelope's fields, or a stand-in for anything else. */
export interface ParsedErrorEnvelope {
  /** The envelope's code (not necessarily one coffer knows), else `HTTP_<status>`. */
  code: string;
  message: string;
  details: unknown;
}

/**
 * Reads `{"error": {"code", "message", "details"}}` from the body of a failed
 * REST answer. Pure: the page and the CLI both use it. A body that is not the
 * envelope (a proxy's page, a truncated answer) gives `HTTP_<status>` and the
 * start of the body as the message.
 */
export function parseErrorEnvelope(status: number, text: string): ParsedErrorEnvelope {
  let envelope: { code?: unknown; message?: unknown; details?: unknown } | undefined;
  try {
    const parsed = JSON.parse(text) as { error?: unknown } | null;
    envelope = typeof parsed?.error === 'object' && parsed.error !== null ? (parsed.error as typeof envelope) : undefined;
  } catch {
    envelope = undefined;
  }
  return {
    code: typeof envelope?.code === 'string' ? envelope.code : `HTTP_${status}`,
    message: typeof envelope?.message === 'string' ? envelope.message : text.slice(0, 300) || `HTTP ${status}`,
    details: envelope?.details,
  };
}

/** The message of anything thrown. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
