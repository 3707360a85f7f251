// Merging per-upstream lists into the one downstream list. Pure.
import { capabilityKey, type ListKind } from '../protocol/capabilities.js';
import { namespaceName, namespaceUri } from './namespace.js';

export type Item = Record<string, unknown>;

export interface UpstreamList {
  server: string;
  items: Item[];
}

/** Whether one capability of one server is exposed (R10); the preference snapshot answers it. */
export type IsEnabled = (server: string, kind: ListKind, key: string) => boolean;

/** Returns a copy of the item with its identity namespaced; every other field unchanged. */
export function namespaceItem(kind: ListKind, server: string, item: Item): Item {
  switch (kind) {
    case 'tools':
    case 'prompts':
      return { ...item, name: namespaceName(server, String(item.name)) };
    case 'resources':
      return { ...item, uri: namespaceUri(server, String(item.uri)) };
    case 'resourceTemplates':
      return { ...item, uriTemplate: namespaceUri(server, String(item.uriTemplate)) };
  }
}

/** Servers in name order so the merged list is stable between calls; items in upstream order. */
export function mergeLists(kind: ListKind, lists: UpstreamList[], isEnabled: IsEnabled): Item[] {
  const merged: Item[] = [];
  for (const { server, items } of [...lists].sort((a, b) => (a.server < b.server ? -1 : a.server > b.server ? 1 : 0))) {
    for (const item of items) {
      if (isEnabled(server, kind, capabilityKey(kind, item))) merged.push(namespaceItem(kind, server, item));
    }
  }
  return merged;
}
