// Cursor pagination of a merged list. The cursor is opaque to clients: an
// offset into the merged list, tagged with the kind so it cannot be replayed
// against another list method.
import type { ListKind } from '../protocol/capabilities.js';

/**
 * Items per page of a merged downstream list unless the daemon is told
 * otherwise (COFFER_PAGE_SIZE). Many clients read only the first page (the
 * SDK's listTools() returns one page unless its caller loops; mcp-use does not
 * loop), so a page must hold every realistic surface: 100 upstreams × 20 tools
 * is a fifth of it. A page is bounded only so that one answer stays far under
 * the 64 MB message limit: 10,000 tools at ≈ 0.6 KB each (server-everything's
 * average) are ≈ 6 MB. A toolset is the answer to a surface too big to use.
 */
export const DEFAULT_PAGE_SIZE = 10_000;

export interface Page<T> {
  items: T[];
  nextCursor?: string;
}

export function encodeCursor(kind: ListKind, offset: number): string {
  return Buffer.from(JSON.stringify({ k: kind, o: offset })).toString('base64url');
}

/** null for a cursor coffer did not issue for this kind. */
export function decodeCursor(kind: ListKind, cursor: string): number | null {
  try {
    const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { k?: unknown; o?: unknown };
    if (parsed.k !== kind || typeof parsed.o !== 'number' || !Number.isSafeInteger(parsed.o) || parsed.o < 0) return null;
    return parsed.o;
  } catch {
    return null;
  }
}

export function paginate<T>(kind: ListKind, items: T[], offset: number, pageSize: number): Page<T> {
  if (offset === 0 && items.length <= pageSize) return { items };
  const end = offset + pageSize;
  const page = items.slice(offset, end);
  return end < items.length ? { items: page, nextCursor: encodeCursor(kind, end) } : { items: page };
}
