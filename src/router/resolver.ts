// Which server an exposed name or URI belongs to. A name or URI in the prefix
// form of a registered server is that server's, whatever its state: an
// unprefixed server listing such a name cannot take it over. Otherwise the
// merged lists know every exposed name exactly; a name they do not know
// belongs to the one unprefixed server, if there is exactly one (of those
// that declared the capability at all). Never a guess between two. A user's
// own name is routed to the upstream's name as the merged list routes it.
// A name routed without the merged lists knowing it is marked `unlisted`:
// the caller asks that server's own list before forwarding it. coffer's own
// prefix is owned like a server's, so no upstream's name in its form is
// exposed or routed.
import { IDENTITY_FIELD, type ListKind } from '../protocol/capabilities.js';
import { OWN_PREFIX, prefixOf, type ServerConfig } from '../protocol/server-config.js';
import { parseNamespacedName, parseNamespacedUri, type Namespaced } from './namespace.js';
import { shortenedHeads } from './names.js';

export interface ResolverDirectory {
  /** The routes of the last merged list of this kind, unless a switch or an own name changed since it was made. */
  routes(kind: ListKind): Map<string, Namespaced> | undefined;
  /** Lists this kind again (bounded by the upstreams' deadlines) and returns its routes. */
  refresh(kind: ListKind): Promise<Map<string, Namespaced> | undefined>;
  /** The prefixes of every registered server, enabled or not (rebuilt only when a server changes). */
  prefixes(): PrefixIndex;
  /** The upstream's name of a tool or prompt of `server` exposed as `name` (the user's own name, else `name` itself). */
  original(server: string, kind: ListKind, name: string): string;
  /** Whether the connected `server` declared the capability of `kind`; undefined while that is not known. */
  serves?(server: string, kind: ListKind): boolean | undefined;
  /** Whether `server`'s own live list of `kind` names `key`; undefined when no live list can tell (failed, slow, not connected). */
  lists?(server: string, kind: ListKind, key: string): Promise<boolean | undefined>;
}

export interface PrefixIndex {
  /** prefix → server name (coffer's own prefix → itself, unless a server stored before that rule has it). */
  owners: Map<string, string>;
  /** server name → its namespace (what its names are exposed under). */
  namespaces: Map<string, string>;
  /** Servers with the empty namespace. */
  unprefixed: string[];
}

export function prefixIndex(configs: Iterable<Pick<ServerConfig, 'name' | 'namespace'>>): PrefixIndex {
  const owners = new Map<string, string>([[OWN_PREFIX, OWN_PREFIX]]);
  const namespaces = new Map<string, string>();
  const unprefixed: string[] = [];
  for (const config of configs) {
    owners.set(prefixOf(config), config.name);
    namespaces.set(config.name, config.namespace);
    if (config.namespace === '') unprefixed.push(config.name);
  }
  return { owners, namespaces, unprefixed };
}

/** Splits `<prefix>__<name>` or `coffer://<prefix>/<uri>` (`server` is the prefix); null if `value` has no prefix form. */
function splitPrefix(kind: ListKind, value: string): Namespaced | null {
  return IDENTITY_FIELD[kind] === 'name' ? parseNamespacedName(value) : parseNamespacedUri(value);
}

/** The registered server whose prefix form `value` is in, or whose shortened name it has the form of, if any. */
export function claimant(index: PrefixIndex, kind: ListKind, value: string): string | undefined {
  const split = splitPrefix(kind, value);
  const owner = split ? index.owners.get(split.server) : undefined;
  if (owner !== undefined || IDENTITY_FIELD[kind] !== 'name') return owner;
  for (const head of shortenedHeads(value)) {
    const server = index.owners.get(head);
    if (server !== undefined) return server;
  }
  return undefined;
}

/** `unlisted`: no merged list routes the name here (it is not listed, listed under a switch that is off, or not merged yet). */
export type Routed = Namespaced & { unlisted?: true };

export type Resolution = Routed | { ambiguous: string[] } | null;

export async function resolveExposed(directory: ResolverDirectory, kind: ListKind, value: string): Promise<Resolution> {
  const index = directory.prefixes();
  const { owners, unprefixed } = index;
  const split = splitPrefix(kind, value);
  const owner = split ? owners.get(split.server) : undefined;
  if (split && owner !== undefined) {
    // coffer's own prefix (a server may bear its name under another prefix): its names are answered before routing, so any other is nobody's.
    const namespace = index.namespaces.get(owner);
    if (namespace === undefined || prefixOf({ name: owner, namespace }) !== split.server) return null;
    // An own name yields to an upstream name it meets (merge.ts): only a merged list can tell, so one is made for it if there is none.
    const original = originalOf(directory, owner, kind, split.original);
    const routes = original === split.original ? directory.routes(kind) : (directory.routes(kind) ?? (await directory.refresh(kind)));
    const known = routes?.get(value);
    return known?.server === owner ? known : { server: owner, original, unlisted: true };
  }
  // With unprefixed servers a name may be anything, and a shortened name has no prefix form: know the exposed names.
  const routes = directory.routes(kind) ?? (unprefixed.length > 0 || !split ? await directory.refresh(kind) : undefined);
  const known = routes?.get(value);
  if (known) return known;
  // A shortened name of a server that lists nothing now (switched off, down) is nobody else's to answer.
  if (claimant(index, kind, value) !== undefined) return null;
  // A server known to have none of this kind (no capability) cannot own the name; that rules out, it never picks.
  const candidates = unprefixed.length > 1 ? unprefixed.filter((server) => directory.serves?.(server, kind) !== false) : unprefixed;
  if (candidates.length === 1) return { server: candidates[0]!, original: originalOf(directory, candidates[0]!, kind, value), unlisted: true };
  return unprefixed.length > 1 ? { ambiguous: candidates.length > 0 ? candidates : unprefixed } : null;
}

/** Resources and templates have no own names. */
function originalOf(directory: ResolverDirectory, server: string, kind: ListKind, name: string): string {
  return IDENTITY_FIELD[kind] === 'name' ? directory.original(server, kind, name) : name;
}
