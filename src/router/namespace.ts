// Namespacing of capability names and resource URIs (docs/architecture.md).
// Pure: tools and prompts become `<prefix>__<name>`, resources and templates
// `coffer://<prefix>/<original uri>`; parsing gives back the original exactly.
// The prefix is the server's namespace (by default its name).
import { isServerName, NAMESPACE_SEPARATOR } from '../protocol/server-config.js';

export const RESOURCE_SCHEME = 'coffer://';

export interface Namespaced {
  server: string;
  original: string;
}

export function namespaceName(server: string, name: string): string {
  return `${server}${NAMESPACE_SEPARATOR}${name}`;
}

/** Splits at the first `__`: server names never contain it, tool names may. */
export function parseNamespacedName(namespaced: string): Namespaced | null {
  const at = namespaced.indexOf(NAMESPACE_SEPARATOR);
  if (at <= 0) return null;
  const server = namespaced.slice(0, at);
  const original = namespaced.slice(at + NAMESPACE_SEPARATOR.length);
  if (!isServerName(server) || original.length === 0) return null;
  return { server, original };
}

export function namespaceUri(server: string, uri: string): string {
  return `${RESOURCE_SCHEME}${server}/${uri}`;
}

/** The scheme is case-insensitive (RFC 3986 §3.1): `COFFER://srv/x` is srv's too. */
export function parseNamespacedUri(uri: string): Namespaced | null {
  if (uri.slice(0, RESOURCE_SCHEME.length).toLowerCase() !== RESOURCE_SCHEME) return null;
  const rest = uri.slice(RESOURCE_SCHEME.length);
  const slash = rest.indexOf('/');
  if (slash <= 0) return null;
  const server = rest.slice(0, slash);
  const original = rest.slice(slash + 1);
  if (!isServerName(server) || original.length === 0) return null;
  return { server, original };
}
