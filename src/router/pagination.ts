// Cursor pagination of a merged list. The cursor is opaque to clients: where
// the next page starts and the identity of the last item given, tagged with
// the kind so it cannot be replayed against another list method. A list may
// change between two pages (a switch, an upstream's new list): the next page
// goes on after that item wherever it now stands, so none is skipped or given
// twice.
import { capabilityKey, type ListKind } from '../protocol/capabilities.js';

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

/** Where a page starts: its offset in the list it came from, and the identity of the item before it. */
export interface Cursor {
  offset: number;
  after: string;
}

export function encodeCursor(kind: ListKind, cursor: Cursor): string {
  return Buffer.from(JSON.stringify({ k: kind, o: cursor.offset, a: cursor.after })).toString('base64url');
}

/** null for a cursor coffer did not issue for this kind. */
export function decodeCursor(kind: ListKind, cursor: string): Cursor | null {
  try {
    const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { k?: unknown; o?: unknown; a?: unknown };
    if (parsed.k !== kind || typeof parsed.o !== 'number' || !Number.isSafeInteger(parsed.o) || parsed.o < 1 || typeof parsed.a !== 'string') return null;
    return { offset: parsed.o, after: parsed.a };
  } catch {
    return null;
  }
}

/**
 * Where the page after `cursor` starts in `items` as they are now: after its
 * last item wherever that stands. If that item is gone, where it stood (the
 * best guess; the list_changed that follows a change has the client list
 * again), not a refusal that would fail a client's whole listing.
 */
export function resumeAt(kind: ListKind, items: readonly Record<string, unknown>[], cursor: Cursor): number {
  const last = items[cursor.offset - 1];
  if (last !== undefined && capabilityKey(kind, last) === cursor.after) return cursor.offset;
  const at = items.findIndex((item) => capabilityKey(kind, item) === cursor.after);
  return at < 0 ? Math.min(cursor.offset - 1, items.length) : at + 1;
}

export function paginate<T extends Record<string, unknown>>(kind: ListKind, items: T[], offset: number, pageSize: number): Page<T> {
  if (offset === 0 && items.length <= pageSize) return { items };
  const end = offset + pageSize;
  const page = items.slice(offset, end);
  return end < items.length ? { items: page, nextCursor: encodeCursor(kind, { offset: end, after: capabilityKey(kind, page[page.length - 1]!) }) } : { items: page };
}
