// The first page of a merged list as JSON text, written once per list. The
// router makes a new array on every merge (a list change, a switch) and a
// toolset's narrowed list is a new array with it, so a text kept under its
// array is current for exactly as long as that array is served, and is let
// go with it. Only the first page is kept: it is what nearly every list asks
// for (a page holds a whole realistic surface), and a client choosing cursors
// cannot make coffer keep a text per cursor. Each era has its own (its pages
// carry its own fields).
import type { ListKind } from '../protocol/capabilities.js';
import { JsonText } from './json-text.js';
import { listPage } from './surface.js';

export class FirstPages {
  private readonly texts = new WeakMap<readonly unknown[], JsonText>();

  /** `finish`: the era's own fields on a page. */
  constructor(
    private readonly pageSize: number | undefined,
    private readonly finish: (page: Record<string, unknown>) => Record<string, unknown> = (page) => page,
  ) {}

  /** One page of `items` from the request's cursor: the first page as kept JSON text, any other as an object. */
  page(kind: ListKind, items: Record<string, unknown>[], params: Record<string, unknown>): JsonText | Record<string, unknown> {
    if (params.cursor !== undefined) return this.finish(listPage(kind, items, params, this.pageSize));
    let text = this.texts.get(items);
    if (!text) {
      text = new JsonText(JSON.stringify(this.finish(listPage(kind, items, params, this.pageSize))));
      this.texts.set(items, text);
    }
    return text;
  }
}
