// What a toolset holds now: the names and URIs a client of /mcp/<toolset>
// reaches, from the live lists (R2) after the switches, so its patterns can be
// checked before a client relies on them. In search mode these are the tools
// a search looks through (tools/list itself holds the meta-tools and pins).
import { capabilityKey, KINDS, LIST_KINDS, type KindSpec } from '../protocol/capabilities.js';
import type { ViewLists } from './view-lists.js';

export type Holdings = Record<KindSpec['viewField'], string[]> & {
  /** Servers of the set left out of some list just now (they failed or missed the list deadline): what they hold is not shown. */
  left_out: string[];
};

export async function holdingsOf(toolset: string, views: Pick<ViewLists, 'listFor' | 'viewOf'>, degraded: () => string[]): Promise<Holdings> {
  const held = await Promise.all(LIST_KINDS.map(async (kind) => [KINDS[kind].viewField, (await views.listFor(kind, toolset)).map((item) => capabilityKey(kind, item))] as const));
  const view = views.viewOf(toolset);
  return { ...(Object.fromEntries(held) as Record<KindSpec['viewField'], string[]>), left_out: degraded().filter((server) => view?.covers(server) ?? false) };
}
