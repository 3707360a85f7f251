// The MCP 2026-07-28 ("modern") wire vocabulary coffer's /mcp speaks: the
// reserved _meta keys, the versions, and the value encoding of the Mcp-Name
// header. Pure constants and helpers; the era classifier and the modern
// exchange share them.

export const PROTOCOL_VERSION_META_KEY = 'io.modelcontextprotocol/protocolVersion';
export const CLIENT_CAPABILITIES_META_KEY = 'io.modelcontextprotocol/clientCapabilities';
export const CLIENT_INFO_META_KEY = 'io.modelcontextprotocol/clientInfo';
export const LOG_LEVEL_META_KEY = 'io.modelcontextprotocol/logLevel';
export const SERVER_INFO_META_KEY = 'io.modelcontextprotocol/serverInfo';
export const SUBSCRIPTION_ID_META_KEY = 'io.modelcontextprotocol/subscriptionId';

/** Every revision from this date on carries its metadata per request (string comparison of ISO dates). */
export const FIRST_MODERN_VERSION = '2026-07-28';
/** The modern revisions coffer serves (server/discover advertises exactly these). */
export const MODERN_VERSIONS: readonly string[] = [FIRST_MODERN_VERSION];

export function isModernVersion(version: string): boolean {
  return version >= FIRST_MODERN_VERSION;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The `_meta` object of a message's params, when there is one. */
export function metaOf(params: unknown): Record<string, unknown> | undefined {
  if (!isPlainObject(params)) return undefined;
  return isPlainObject(params._meta) ? params._meta : undefined;
}

const SENTINEL_PREFIX = '=?base64?';
const SENTINEL_SUFFIX = '?=';
const CANONICAL_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** A header value as the spec encodes it: plain when safe, else the Base64 sentinel; undefined when a sentinel is malformed. */
export function decodeHeaderValue(value: string): string | undefined {
  if (!(value.startsWith(SENTINEL_PREFIX) && value.endsWith(SENTINEL_SUFFIX))) return value;
  const payload = value.slice(SENTINEL_PREFIX.length, value.length - SENTINEL_SUFFIX.length);
  if (!CANONICAL_BASE64.test(payload)) return undefined;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(payload, 'base64'));
  } catch {
    return undefined;
  }
}

const SPACE = 32;
const TAB = 9;

/** RFC 9110 field parsing drops optional whitespace (space, tab) around a value. */
export function stripOws(value: string): string {
  // Most values have none: no regex and no new string for them (every modern request has two or three such headers).
  const first = value.charCodeAt(0);
  const last = value.charCodeAt(value.length - 1);
  if (first !== SPACE && first !== TAB && last !== SPACE && last !== TAB) return value;
  return value.replace(/^[ \t]+|[ \t]+$/g, '');
}
