// Which toolset a /mcp request sees: the one its client is bound to, else the
// one its path names (/mcp/<toolset>), else the whole surface (null). A bound
// client never reaches another set: that is refused, not widened. Pure.
import { JSONRPC, type ErrorCode } from '../protocol/errors.js';

export interface EndpointRefusal {
  status: number;
  code: ErrorCode;
  message: string;
}

export type EndpointView = { ok: true; toolset: string | null } | { ok: false; refusal: EndpointRefusal };

export function endpointView(bound: string | null | undefined, requested: string | null, exists: (name: string) => boolean): EndpointView {
  if (bound) {
    if (requested === null || requested === bound) return { ok: true, toolset: bound };
    return { ok: false, refusal: { status: 403, code: 'TOOLSET_FORBIDDEN', message: `this client is bound to toolset '${bound}': use /mcp or /mcp/${bound} (or bind it to another with 'coffer client bind')` } };
  }
  if (requested === null || exists(requested)) return { ok: true, toolset: requested };
  return { ok: false, refusal: { status: 404, code: 'RESOURCE_NOT_FOUND', message: `no toolset named '${requested}': see 'coffer toolset list'` } };
}

/** The JSON-RPC error body of a refused endpoint, its stable code in `data.code`. */
export function refusalBody(refusal: EndpointRefusal): string {
  const code = refusal.status === 403 ? JSONRPC.NOT_IN_TOOLSET : JSONRPC.INVALID_REQUEST;
  return JSON.stringify({ jsonrpc: '2.0', error: { code, message: refusal.message, data: { code: refusal.code } }, id: null });
}
