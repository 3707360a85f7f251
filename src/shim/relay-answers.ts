// How a failed send is judged, and the JSON-RPC error answers the shim gives
// the client in the daemon's stead. Pure: no relay state.
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { isJSONRPCNotification, isJSONRPCRequest, type JSONRPCErrorResponse, type JSONRPCMessage, type RequestId } from '@modelcontextprotocol/sdk/types.js';
import { JSONRPC } from '../protocol/errors.js';

/**
 * undelivered: certainly never processed · lost: may have been · rejected: the daemon answered with an HTTP error ·
 * unreadable: it answered, with something that is no JSON-RPC message.
 */
export type Failure = 'undelivered' | 'lost' | 'rejected' | 'unreadable';

/** An answer of the daemon that is not JSON-RPC: the request was processed, only its answer cannot be handed on. */
export class UnreadableAnswer extends Error {
  constructor(why: string) {
    super(`the coffer daemon's answer is ${why}`);
    this.name = 'UnreadableAnswer';
  }
}

export function classify(error: unknown): Failure {
  if (error instanceof UnreadableAnswer) return 'unreadable';
  if (error instanceof StreamableHTTPError) {
    // 404: the session is unknown (a restarted daemon); 503: starting or stopping.
    return error.code === 404 || error.code === 503 ? 'undelivered' : 'rejected';
  }
  const cause = (error as { cause?: { code?: unknown } } | undefined)?.cause?.code;
  return cause === 'ECONNREFUSED' ? 'undelivered' : 'lost';
}

function errorResponse(id: RequestId, code: number, message: string, data?: unknown): JSONRPCErrorResponse {
  return { jsonrpc: '2.0', id, error: data === undefined ? { code, message } : { code, message, data } };
}

export function unreachable(id: RequestId, message: string, reason: string): JSONRPCErrorResponse {
  return errorResponse(id, JSONRPC.UPSTREAM_UNAVAILABLE, `DAEMON_UNREACHABLE: ${message}`, { code: 'UPSTREAM_UNAVAILABLE', reason });
}

export function unreadable(id: RequestId, error: UnreadableAnswer): JSONRPCErrorResponse {
  return errorResponse(id, JSONRPC.INTERNAL_ERROR, `${error.message}; see the daemon log`);
}

/** A client request whose id one of its requests still pending holds (the daemon refuses the same on /mcp); the id is the answer's own, not repeated in its text. */
export function idInUse(id: RequestId): JSONRPCErrorResponse {
  return errorResponse(id, JSONRPC.INVALID_REQUEST, 'Invalid Request: this id is already used by a pending request; give each request an id of its own');
}

/** The daemon's own JSON-RPC error out of a rejected POST when there is one, else a generic one. */
export function rejection(id: RequestId, error: StreamableHTTPError): JSONRPCErrorResponse {
  try {
    const body = JSON.parse(error.message.slice(error.message.indexOf('{'))) as { error?: { code?: unknown; message?: unknown; data?: unknown } };
    if (typeof body.error?.code === 'number' && typeof body.error.message === 'string') {
      return errorResponse(id, body.error.code, body.error.message, body.error.data);
    }
  } catch {
    // not JSON
  }
  return errorResponse(id, JSONRPC.INTERNAL_ERROR, `the coffer daemon rejected the request (HTTP ${error.code}): ${error.message}`);
}

/** A message as the shim's log names it. */
export function describe(message: JSONRPCMessage): string {
  if (isJSONRPCRequest(message)) return `${message.method} #${String(message.id)}`;
  if (isJSONRPCNotification(message)) return message.method;
  return `answer #${String(message.id)}`;
}
