// Bounded label values for /mcp requests (metrics, and the names of the request
// spans): a method coffer serves names itself, anything else is "other"; an
// outcome is "ok", coffer's own error code, or the kind of JSON-RPC error (an
// upstream's error passes through as "upstream").
import { RpcError } from '../mcp/rpc-error.js';
import { ERROR_HTTP_STATUS, JSONRPC } from '../protocol/errors.js';
import { TASK_METHODS } from '../protocol/extensions.js';

const METHODS = new Set([
  'initialize',
  'ping',
  'tools/list',
  'tools/call',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'resources/subscribe',
  'resources/unsubscribe',
  'prompts/list',
  'prompts/get',
  'completion/complete',
  'logging/setLevel',
  'server/discover',
  ...TASK_METHODS,
]);

const JSONRPC_KINDS = new Map<number, string>([
  [JSONRPC.PARSE_ERROR, 'parse_error'],
  [JSONRPC.INVALID_REQUEST, 'invalid_request'],
  [JSONRPC.METHOD_NOT_FOUND, 'method_not_found'],
  [JSONRPC.INVALID_PARAMS, 'invalid_params'],
  [JSONRPC.INTERNAL_ERROR, 'internal_error'],
]);

export function requestMethodLabel(method: string): string {
  return METHODS.has(method) ? method : 'other';
}

/** `error` is what the request failed with, or null. */
export function requestOutcomeLabel(error: unknown): string {
  if (error === null) return 'ok';
  if (!(error instanceof RpcError)) return 'internal_error';
  const code = (error.data as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string' && Object.hasOwn(ERROR_HTTP_STATUS, code)) return code;
  return JSONRPC_KINDS.get(error.code) ?? 'upstream';
}
