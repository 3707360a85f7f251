// Merging per-upstream lists into the one downstream list. Pure.
// Each server's names and URIs get its namespace as prefix; a server with the
// empty namespace passes them through, except those that would collide with
// another exposed name: those fall back to the server-name prefix, so every
// exposed name routes to exactly one capability. An unprefixed name in another
// registered server's prefix form is that server's: it is hidden, not exposed.
import { capabilityKey, IDENTITY_FIELD, type ListKind } from '../protocol/capabilities.js';
import { namespaceName, namespaceUri, type Namespaced } from './namespace.js';

export type Item = Record<string, unknown>;

export interface UpstreamList {
  server: string;
  /** The server's prefix; "" passes names through unprefixed. */
  namespace: string;
  items: Item[];
}

/** Whether one capability of one server is exposed (R10); the preference snapshot answers it. */
export type IsEnabled = (server: string, kind: ListKind, key: string) => boolean;

/** An unprefixed name that another server's name took: it is exposed as `exposed` instead. */
export interface Collision extends Namespaced {
  kind: ListKind;
  exposed: string;
}

/** The registered server whose prefix form an exposed name or URI is in, if any. */
export type ClaimedBy = (kind: ListKind, exposed: string) => string | undefined;

/** An unprefixed item hidden because its name is in another server's prefix form. */
export interface Hidden extends Namespaced {
  kind: ListKind;
  claimedBy: string;
}

export interface Merged {
  /** The gated, namespaced items, servers in name order, items in upstream order. */
  items: Item[];
  /** Every exposed name (enabled or not) → its server and original name; the first wins a duplicate. */
  routes: Map<string, Namespaced>;
  collisions: Collision[];
  hidden: Hidden[];
}

/** Makes an exposed tool or prompt name one that model hosts accept (names.ts); identity when absent. */
export type FitName = (name: string) => string;

/** The exposed form of an original name or URI under `prefix` ("" = unchanged); names made to fit. */
function expose(kind: ListKind, prefix: string, original: string, fit: FitName): string {
  if (IDENTITY_FIELD[kind] !== 'name') return prefix === '' ? original : namespaceUri(prefix, original);
  return fit(prefix === '' ? original : namespaceName(prefix, original));
}

/** Returns a copy of the item with its identity exposed as `exposed`; every other field unchanged. */
function namespaceItem(kind: ListKind, exposed: string, item: Item): Item {
  return { ...item, [IDENTITY_FIELD[kind]]: exposed };
}

interface Entry {
  server: string;
  unprefixed: boolean;
  original: string;
  exposed: string;
  item: Item;
}

function counts(entries: Entry[]): Map<string, number> {
  const seen = new Map<string, number>();
  for (const entry of entries) seen.set(entry.exposed, (seen.get(entry.exposed) ?? 0) + 1);
  return seen;
}

/**
 * Unprefixed entries whose name is taken fall back to the server prefix; a
 * fallback may take another unprefixed name in turn, so repeat until stable
 * (each round only moves entries to the prefixed form: it ends).
 */
function resolveCollisions(kind: ListKind, entries: Entry[], fit: FitName): Entry[] {
  const fallen: Entry[] = [];
  for (;;) {
    const seen = counts(entries);
    const taken = entries.filter((entry) => entry.unprefixed && seen.get(entry.exposed)! > 1);
    if (taken.length === 0) return fallen;
    for (const entry of taken) {
      entry.unprefixed = false;
      entry.exposed = expose(kind, entry.server, entry.original, fit);
      fallen.push(entry);
    }
  }
}

export function mergeLists(kind: ListKind, lists: UpstreamList[], isEnabled: IsEnabled, claimedBy: ClaimedBy = () => undefined, fit: FitName = (name) => name): Merged {
  const entries: Entry[] = [];
  const hidden: Hidden[] = [];
  for (const { server, namespace, items } of [...lists].sort((a, b) => (a.server < b.server ? -1 : a.server > b.server ? 1 : 0))) {
    for (const item of items) {
      const original = capabilityKey(kind, item);
      const exposed = expose(kind, namespace, original, fit);
      // Whose prefix form a name is in is a question about the name as the upstream gave it.
      const owner = namespace === '' ? claimedBy(kind, original) : undefined;
      if (owner !== undefined && owner !== server) hidden.push({ kind, server, original, claimedBy: owner });
      else entries.push({ server, unprefixed: namespace === '', original, exposed, item });
    }
  }
  const collisions = resolveCollisions(kind, entries, fit).map(({ server, original, exposed }) => ({ kind, server, original, exposed }));
  const routes = new Map<string, Namespaced>();
  const items: Item[] = [];
  for (const entry of entries) {
    if (!routes.has(entry.exposed)) routes.set(entry.exposed, { server: entry.server, original: entry.original });
    if (isEnabled(entry.server, kind, entry.original)) items.push(entry.exposed === entry.original ? entry.item : namespaceItem(kind, entry.exposed, entry.item));
  }
  return { items, routes, collisions, hidden };
}
