// The first page of a merged list as JSON text, written once per list. The
// router makes a new array on every merge (a list change, a switch) and a
// toolset's narrowed list is a new array with it, so a text kept under its
// array is current for exactly as long as that array is served, and is let
// go with it. Only the first page is kept: it is what nearly every list asks
// for (a page holds a whole realistic surface), and a client choosing cursors
// cannot make coffer keep a text per cursor.
import type { ListKind } from '../protocol/capabilities.js';
import { JsonText } from './json-text.js';
import { listPage } from './surface.js';

const firstPages = new WeakMap<readonly unknown[], Map<string, JsonText>>();

/**
 * One page of `items`, from the request's cursor, finished by `finish` (an
 * era's own fields; `variant` names it): the first page as kept JSON text,
 * any other as an object.
 */
export function listPageText(
  kind: ListKind,
  items: Record<string, unknown>[],
  params: Record<string, unknown>,
  pageSize: number | undefined,
  variant: string,
  finish: (page: Record<string, unknown>) => Record<string, unknown> = (page) => page,
): JsonText | Record<string, unknown> {
  if (params.cursor !== undefined) return finish(listPage(kind, items, params, pageSize));
  const key = `${variant}\u0000${pageSize ?? ''}`;
  let byVariant = firstPages.get(items);
  const kept = byVariant?.get(key);
  if (kept) return kept;
  const text = new JsonText(JSON.stringify(finish(listPage(kind, items, params, pageSize))));
  if (!byVariant) firstPages.set(items, (byVariant = new Map()));
  byVariant.set(key, text);
  return text;
}
