// Merging per-upstream lists into the one downstream list. Pure.
// Each server's names and URIs get its namespace as prefix; a server with the
// empty namespace passes them through, except those that would collide with
// another exposed name: those fall back to the server-name prefix, so every
// exposed name routes to exactly one capability. An unprefixed name in another
// registered server's prefix form is that server's: it is hidden, not exposed.
// A tool or prompt with the user's own name is exposed under it in place of the
// upstream's (the namespace stays), and routed to the upstream's; with the
// user's own description, that replaces the upstream's.
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

/** The user's own name and description of one tool or prompt, if any (null: the upstream's). */
export type WordsOf = (server: string, kind: ListKind, key: string) => { name: string | null; description: string | null } | undefined;

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
  /** What is exposed in place of `original`: the user's own name, else `original`. */
  named: string;
  exposed: string;
  item: Item;
}

/**
 * Unprefixed entries whose name is taken fall back to the server prefix; a
 * fallback may take another unprefixed name in turn, so each round looks at
 * the names the last round's fallbacks took (a hostile list can chain
 * thousands of rounds: t, a__t, a__a__t, ...). Every unprefixed holder of a
 * shared name falls in the same round, so a name once shared holds no
 * unprefixed entry again; each round only moves entries to the prefixed form: it ends.
 */
function resolveCollisions(kind: ListKind, entries: Entry[], fit: FitName): Entry[] {
  const holders = new Map<string, Entry[]>();
  const hold = (entry: Entry): Entry[] => {
    let held = holders.get(entry.exposed);
    if (held) held.push(entry);
    else holders.set(entry.exposed, (held = [entry]));
    return held;
  };
  entries.forEach(hold);
  const position = new Map(entries.map((entry, index) => [entry, index]));
  const fallen: Entry[] = [];
  let shared = new Set([...holders.values()].filter((held) => held.length > 1));
  while (shared.size > 0) {
    // In list order within a round, as they are announced.
    const taken = [...shared].flatMap((held) => held.filter((entry) => entry.unprefixed)).sort((a, b) => position.get(a)! - position.get(b)!);
    shared = new Set();
    for (const entry of taken) {
      entry.unprefixed = false;
      entry.exposed = expose(kind, entry.server, entry.named, fit);
      const held = hold(entry);
      if (held.length > 1) shared.add(held);
      fallen.push(entry);
    }
  }
  return fallen;
}

/**
 * The item as the user words it: own description in place of the upstream's, and the name
 * to expose. An own name the upstream now gives another of its items is not applied: the
 * upstream's name keeps its item (the user's was refused while that name was known).
 */
function worded(kind: ListKind, server: string, original: string, item: Item, upstreamNames: Set<string>, wordsOf: WordsOf): { named: string; item: Item } {
  const words = IDENTITY_FIELD[kind] === 'name' ? wordsOf(server, kind, original) : undefined;
  if (!words) return { named: original, item };
  const named = words.name !== null && !upstreamNames.has(words.name) ? words.name : original;
  return { named, item: words.description === null ? item : { ...item, description: words.description } };
}

export function mergeLists(
  kind: ListKind,
  lists: UpstreamList[],
  isEnabled: IsEnabled,
  claimedBy: ClaimedBy = () => undefined,
  fit: FitName = (name) => name,
  wordsOf: WordsOf = () => undefined,
): Merged {
  const entries: Entry[] = [];
  const hidden: Hidden[] = [];
  for (const { server, namespace, items } of [...lists].sort((a, b) => (a.server < b.server ? -1 : a.server > b.server ? 1 : 0))) {
    const upstreamNames = new Set(items.map((item) => capabilityKey(kind, item)));
    for (const upstreamItem of items) {
      const original = capabilityKey(kind, upstreamItem);
      const { named, item } = worded(kind, server, original, upstreamItem, upstreamNames, wordsOf);
      const exposed = expose(kind, namespace, named, fit);
      // Whose prefix form a name is in is a question about the name as the upstream gave it (own names never contain `__`).
      const owner = namespace === '' ? claimedBy(kind, original) : undefined;
      if (owner !== undefined && owner !== server) hidden.push({ kind, server, original, claimedBy: owner });
      else entries.push({ server, unprefixed: namespace === '', original, named, exposed, item });
    }
  }
  const collisions = resolveCollisions(kind, entries, fit).map(({ server, original, exposed }) => ({ kind, server, original, exposed }));
  const routes = new Map<string, Namespaced>();
  const items: Item[] = [];
  for (const entry of entries) {
    if (!routes.has(entry.exposed)) routes.set(entry.exposed, { server: entry.server, original: entry.original });
    if (isEnabled(entry.server, kind, entry.original)) items.push(entry.exposed === capabilityKey(kind, entry.item) ? entry.item : namespaceItem(kind, entry.exposed, entry.item));
  }
  return { items, routes, collisions, hidden };
}
