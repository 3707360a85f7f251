// What coffer's /mcp declares about itself, the same in both eras: its
// capabilities, its own instructions, and one page of a merged list.
import { KINDS, type ListKind } from '../protocol/capabilities.js';
import { decodeCursor, DEFAULT_PAGE_SIZE, paginate, resumeAt } from '../router/pagination.js';
import { RpcError } from './rpc-error.js';

export const SERVER_CAPABILITIES = {
  tools: { listChanged: true },
  resources: { listChanged: true, subscribe: true },
  prompts: { listChanged: true },
  logging: {},
  completions: {},
} as const;

export const OWN_INSTRUCTIONS =
  'coffer aggregates several MCP servers: tools and prompts are named <namespace>__<name>, resources coffer://<namespace>/<uri> (a server with an empty namespace keeps its own names).';

/** One page of a merged list (already narrowed to the caller's view), from the request's cursor. */
export function listPage(kind: ListKind, items: Record<string, unknown>[], params: Record<string, unknown>, pageSize: number | undefined): Record<string, unknown> {
  let offset = 0;
  if (params.cursor !== undefined) {
    const decoded = typeof params.cursor === 'string' ? decodeCursor(kind, params.cursor) : null;
    if (decoded === null) throw RpcError.invalidParams('invalid cursor: pass the nextCursor of a previous answer unchanged');
    offset = resumeAt(kind, items, decoded);
  }
  const page = paginate(kind, items, offset, pageSize ?? DEFAULT_PAGE_SIZE);
  const field = KINDS[kind].resultField;
  return page.nextCursor === undefined ? { [field]: page.items } : { [field]: page.items, nextCursor: page.nextCursor };
}
