// The shape of one upstream server's configuration, as stored by the DB writer,
// validated by src/registry/server-config.ts, and handed to its actor.

// The types are inferred from the zod schema, which also documents each field.
export type {
  HttpTransportConfig,
  ProtocolSetting,
  ServerConfig,
  SessionMode,
  SseTransportConfig,
  StdioTransportConfig,
  TimeoutsConfig,
  TransportConfig,
} from '../registry/server-config-schema.js';
import type { ServerConfig } from '../registry/server-config-schema.js';

/** The prefix a server's names can always be reached by: its namespace, or its name when the namespace is empty. */
export function prefixOf(config: Pick<ServerConfig, 'name' | 'namespace'>): string {
  return config.namespace === '' ? config.name : config.namespace;
}

/** Configs stored before a field existed read with its default. */
export function withConfigDefaults(config: Omit<ServerConfig, 'namespace' | 'session_mode' | 'protocol'> & Partial<ServerConfig>): ServerConfig {
  return { ...config, namespace: config.namespace ?? config.name, session_mode: config.session_mode ?? 'shared', protocol: config.protocol ?? 'auto' };
}

export const DEFAULT_TIMEOUTS = {
  connect_ms: 30_000,
  request_ms: 120_000,
  list_deadline_ms: 2_000,
};

/** `^[A-Za-z0-9_.-]{1,64}$` and no `__` (the namespace separator). */
export const SERVER_NAME_PATTERN = /^[A-Za-z0-9_.-]{1,64}$/;
export const NAMESPACE_SEPARATOR = '__';
/** coffer's own names (its search-mode meta-tools) are in this prefix's form: no server may have it as its prefix. */
export const OWN_PREFIX = 'coffer';

/** Names a URL path cannot hold as a segment: clients resolve `/servers/..` away before it is sent. */
export const DOT_SEGMENTS: ReadonlySet<string> = new Set(['.', '..']);

/**
 * A server name that namespacing can always split back and a URL path can
 * carry: the pattern, no `__`, no trailing `_` (`a_` + `__` + `x` would read
 * back as server `a`), and not `.` or `..`.
 */
export function isServerName(name: string): boolean {
  return SERVER_NAME_PATTERN.test(name) && !name.includes(NAMESPACE_SEPARATOR) && !name.endsWith('_') && !DOT_SEGMENTS.has(name);
}
