// How long a name or URI a client may ask for. Whatever a client names ends up
// in the invocation log, the daemon log and live events; without a bound, ten
// calls with a 5 MB tool name made a 51 MB database. A request past a bound is
// refused before it is routed, so nothing of it is stored or forwarded.
import { JSONRPC } from '../protocol/errors.js';
import { RpcError } from './rpc-error.js';

/** Tool and prompt names (namespaced). */
export const MAX_NAME_CHARS = 1_024;
/** Resource URIs (coffer://<namespace>/<uri>). */
export const MAX_URI_CHARS = 8_192;

type Bound = { path: readonly string[]; max: number };

const name = (...path: string[]): Bound => ({ path, max: MAX_NAME_CHARS });
const uri = (...path: string[]): Bound => ({ path, max: MAX_URI_CHARS });

const BOUNDS: Record<string, readonly Bound[]> = {
  'tools/call': [name('name')],
  'prompts/get': [name('name')],
  'resources/read': [uri('uri')],
  'resources/subscribe': [uri('uri')],
  'resources/unsubscribe': [uri('uri')],
  'completion/complete': [name('ref', 'name'), uri('ref', 'uri')],
};

function valueAt(params: Record<string, unknown>, path: readonly string[]): unknown {
  let value: unknown = params;
  for (const key of path) value = typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
  return value;
}

/** Throws -32602 with data.code NAME_TOO_LONG when `value`, at `field` of the params, is longer than `max`. */
export function checkLength(field: string, value: string, max: number): void {
  if (value.length <= max) return;
  throw RpcError.coffer(JSONRPC.INVALID_PARAMS, 'NAME_TOO_LONG', `${field} is ${value.length} characters long; coffer accepts at most ${max}`, { field, limit: max });
}

/** Throws -32602 with data.code NAME_TOO_LONG when a name or URI of the request is past its bound. */
export function checkParamLengths(method: string, params: Record<string, unknown>): void {
  for (const { path, max } of BOUNDS[method] ?? []) {
    const value = valueAt(params, path);
    if (typeof value === 'string') checkLength(`params.${path.join('.')}`, value, max);
  }
}
