// Which server an exposed name or URI belongs to. The merged lists know every
// exposed name exactly; before a list exists (or for a URI from a resource
// template) the prefix tells; a name without a known prefix belongs to the
// one unprefixed server, if there is exactly one. Never a guess between two.
import type { ListKind } from '../protocol/capabilities.js';
import type { ServerConfig } from '../protocol/server-config.js';
import { identityField } from './merge.js';
import { parseNamespacedName, parseNamespacedUri, type Namespaced } from './namespace.js';

export interface ResolverDirectory {
  /** The routes of the last merged list of this kind, if any. */
  routes(kind: ListKind): Map<string, Namespaced> | undefined;
  /** Lists this kind again (bounded by the upstreams' deadlines) and returns its routes. */
  refresh(kind: ListKind): Promise<Map<string, Namespaced> | undefined>;
  /** Every registered server, enabled or not. */
  configs(): ServerConfig[];
}

/** The prefix a server's names can always be reached by: its namespace, or its name when the namespace is empty. */
export function prefixOf(config: Pick<ServerConfig, 'name' | 'namespace'>): string {
  return config.namespace === '' ? config.name : config.namespace;
}

/** Splits `<prefix>__<name>` or `coffer://<prefix>/<uri>` (`server` is the prefix); null if `value` has no prefix form. */
export function splitPrefix(kind: ListKind, value: string): Namespaced | null {
  return identityField(kind) === 'name' ? parseNamespacedName(value) : parseNamespacedUri(value);
}

export type Resolution = Namespaced | { ambiguous: string[] } | null;

export async function resolveExposed(directory: ResolverDirectory, kind: ListKind, value: string): Promise<Resolution> {
  const configs = directory.configs();
  const unprefixed = configs.filter((config) => config.namespace === '').map((config) => config.name);
  // With unprefixed servers a name may be anything: know the exposed names before reading prefixes.
  const routes = directory.routes(kind) ?? (unprefixed.length > 0 ? await directory.refresh(kind) : undefined);
  const known = routes?.get(value);
  if (known) return known;
  const split = splitPrefix(kind, value);
  const owner = split ? configs.find((config) => prefixOf(config) === split.server) : undefined;
  if (split && owner) return { server: owner.name, original: split.original };
  if (unprefixed.length === 1) return { server: unprefixed[0]!, original: value };
  return unprefixed.length > 1 ? { ambiguous: unprefixed } : null;
}
