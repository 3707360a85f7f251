// The shape of one upstream server's configuration, as stored by the DB writer,
// validated by src/registry/server-config.ts, and handed to its actor.

export interface StdioTransportConfig {
  type: 'stdio';
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd: string | null;
}

export interface HttpTransportConfig {
  /** Streamable HTTP. */
  type: 'http';
  url: string;
  headers: Record<string, string>;
}

export interface SseTransportConfig {
  /** Legacy HTTP+SSE. */
  type: 'sse';
  url: string;
  headers: Record<string, string>;
}

export type TransportConfig = StdioTransportConfig | HttpTransportConfig | SseTransportConfig;

export interface TimeoutsConfig {
  /** Connect + initialize. */
  connect_ms: number;
  /** One forwarded request (tools/call, resources/read, ...) and one list on the actor. */
  request_ms: number;
  /** How long the router waits for this upstream during a list fan-out. */
  list_deadline_ms: number;
}

/**
 * shared: one upstream connection serves every client session. per_session: the
 * actor opens one connection per client session (lazily; closed with the
 * session or when idle), so stateful features (subscriptions, log level,
 * roots, sampling) know their client.
 */
export type SessionMode = 'shared' | 'per_session';

export interface ServerConfig {
  name: string;
  description: string;
  enabled: boolean;
  transport: TransportConfig;
  auto_enable_new_capabilities: boolean;
  timeouts: TimeoutsConfig;
  /** Prefix of this server's names and URIs (default: the name); "" passes them through unprefixed. */
  namespace: string;
  session_mode: SessionMode;
}

/** The prefix a server's names can always be reached by: its namespace, or its name when the namespace is empty. */
export function prefixOf(config: Pick<ServerConfig, 'name' | 'namespace'>): string {
  return config.namespace === '' ? config.name : config.namespace;
}

/** Configs stored before a field existed read with its default. */
export function withConfigDefaults(config: Omit<ServerConfig, 'namespace' | 'session_mode'> & Partial<ServerConfig>): ServerConfig {
  return { ...config, namespace: config.namespace ?? config.name, session_mode: config.session_mode ?? 'shared' };
}

export const DEFAULT_TIMEOUTS: TimeoutsConfig = {
  connect_ms: 30_000,
  request_ms: 120_000,
  list_deadline_ms: 2_000,
};

/** `^[A-Za-z0-9_.-]{1,64}$` and no `__` (the namespace separator). */
export const SERVER_NAME_PATTERN = /^[A-Za-z0-9_.-]{1,64}$/;
export const NAMESPACE_SEPARATOR = '__';

/**
 * A server name that namespacing can always split back: the pattern, no `__`,
 * and no trailing `_` (`a_` + `__` + `x` would read back as server `a`).
 */
export function isServerName(name: string): boolean {
  return SERVER_NAME_PATTERN.test(name) && !name.includes(NAMESPACE_SEPARATOR) && !name.endsWith('_');
}
