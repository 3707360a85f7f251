// The upstream server config as a zod schema: the one definition its TypeScript types are
// inferred from, its validation runs through, and a JSON Schema can be generated from.
// Every message is written for the CONFIG_INVALID envelope ("<field>: <message>"); secret
// values never appear in one.
import { isAbsolute } from 'node:path';
import { z } from 'zod';
import { DEFAULT_TIMEOUTS, DOT_SEGMENTS, NAMESPACE_SEPARATOR, SERVER_NAME_PATTERN } from '../protocol/server-config.js';
import { HEADER_VALUE_FORBIDDEN } from '../protocol/http-fields.js';
import { REDACTED } from './secret-args.js';

/** Upper bounds: beyond them a value is a typo (seconds taken for ms), not a choice. */
const TIMEOUT_MAX_MS = { connect_ms: 600_000, request_ms: 3_600_000, list_deadline_ms: 60_000 };
const MAX_DESCRIPTION = 1_000;
const MAX_STRING = 4_096;
const MAX_SECRET = 16_384;
const MAX_ITEMS = 256;

const isObject = (value: unknown) => typeof value === 'object' && value !== null && !Array.isArray(value);

const requiredOr = (message: string) => (issue: { input: unknown }) => (issue.input === undefined ? 'is required' : message);

/** A non-empty string (unless `allowEmpty`), bounded, without NUL: the first rule it breaks is its one problem. */
function text(options: { max?: number; allowEmpty?: boolean; allowExactlyEmpty?: boolean } = {}) {
  const max = options.max ?? MAX_STRING;
  const base = z.string({ error: requiredOr('must be a string') });
  const filled = options.allowEmpty
    ? base
    : base.refine((value) => value.trim() !== '' || (options.allowExactlyEmpty === true && value === ''), { error: 'must not be empty', abort: true });
  return filled
    .max(max, { error: `must be at most ${max} characters`, abort: true })
    .refine((value) => !value.includes('\0'), { error: 'must not contain NUL characters', abort: true });
}

/** Names and namespaces both become prefixes that parsing must split back; "" is no prefix (namespaces only). */
function prefix(options: { allowExactlyEmpty?: boolean } = {}) {
  return text(options).superRefine((value, ctx) => {
    if (value === '') return;
    if (!SERVER_NAME_PATTERN.test(value)) ctx.addIssue('must be 1-64 characters of letters, digits, "_", "." or "-"');
    if (value.includes(NAMESPACE_SEPARATOR)) ctx.addIssue(`must not contain "${NAMESPACE_SEPARATOR}" (it separates server and capability names)`);
    else if (value.endsWith('_')) ctx.addIssue(`must not end with "_" ("${value}${NAMESPACE_SEPARATOR}tool" would read as another server's tool)`);
    if (DOT_SEGMENTS.has(value)) ctx.addIssue(`must not be "${value}" (a URL path cannot hold it: /servers/${value} is resolved away)`);
  });
}

const flag = (fallback: boolean) => z.boolean({ error: 'must be true or false' }).default(fallback);

/**
 * env or headers: a string→string map whose values are secrets (never echoed in messages).
 * Checked entry by entry on the object as given, so every key is kept as its own property
 * (a record schema would drop "__proto__") and each entry's problems are listed together.
 */
interface SecretMapRules {
  key: RegExp;
  keyRule: string;
  forbidden: RegExp;
  forbiddenRule: string;
  caseInsensitive: boolean;
}

function secretMap(rules: SecretMapRules) {
  return checkedSecretMap(rules).default(() => ({})).meta(secretMapMeta(rules));
}

const secretMapMeta = (rules: SecretMapRules) => ({ type: 'object', maxProperties: MAX_ITEMS, propertyNames: { pattern: rules.key.source }, additionalProperties: { type: 'string', maxLength: MAX_SECRET } });

function checkedSecretMap(rules: SecretMapRules) {
  const value = z
    .string({ error: 'must be a string' })
    .max(MAX_SECRET, { error: `must be at most ${MAX_SECRET} characters`, abort: true })
    .refine((item) => !rules.forbidden.test(item), { error: `must not contain ${rules.forbiddenRule}`, abort: true })
    .refine((item) => item !== REDACTED, { error: `is the placeholder "${REDACTED}", not a value`, abort: true });
  return z
    .custom<Record<string, unknown>>(isObject, { error: 'must be an object of string values' })
    .superRefine((map, ctx) => {
      const entries = Object.entries(map);
      if (entries.length > MAX_ITEMS) ctx.addIssue(`must have at most ${MAX_ITEMS} entries`);
      const seen = new Set<string>();
      for (const [key, item] of entries) {
        if (!rules.key.test(key)) ctx.addIssue({ code: 'custom', path: [key], message: `is not a valid key: must be ${rules.keyRule}` });
        const folded = rules.caseInsensitive ? key.toLowerCase() : key;
        if (seen.has(folded)) ctx.addIssue({ code: 'custom', path: [key], message: 'repeats a key (case-insensitively)' });
        seen.add(folded);
        for (const issue of value.safeParse(item).error?.issues ?? []) ctx.addIssue({ code: 'custom', path: [key], message: issue.message });
      }
    })
    .transform((map) => map as Record<string, string>);
}

const env = secretMap({
  key: /^[A-Za-z_][A-Za-z0-9_]{0,255}$/,
  keyRule: 'an environment variable name (letters, digits, "_"; no leading digit)',
  forbidden: /\0/,
  forbiddenRule: 'NUL characters',
  caseInsensitive: false,
});

const headers = secretMap({
  // RFC 9110 token.
  key: /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,256}$/,
  keyRule: 'an HTTP header name',
  // What the actor's HTTP client can send (it refuses the rest at every connection).
  forbidden: HEADER_VALUE_FORBIDDEN,
  forbiddenRule: 'control characters, line breaks or characters beyond U+00FF (an HTTP header cannot carry them)',
  // Two spellings of one header name would race for it.
  caseInsensitive: true,
});

const OAUTH_GRANTS = ['authorization_code', 'client_credentials'];

function isHttpsUrlWithPath(value: string): boolean {
  try {
    const parsed = new URL(value);
    return parsed.protocol === 'https:' && parsed.pathname !== '/';
  } catch {
    return false;
  }
}

/**
 * An http/sse server's OAuth client (every value sealed like a header value): a
 * pre-registered client (client_id, and client_secret or a private_key in PEM,
 * PKCS#8, that signs private_key_jwt assertions with private_key_alg), a client
 * ID metadata document URL (client_metadata_url, https, for authorization
 * servers that support them), the scope to ask for when the server names none,
 * and the grant: authorization_code (a person signs in; the default) or
 * client_credentials (no person; needs client_id and a secret or key).
 */
const oauthRules: SecretMapRules = {
  key: /^(client_id|client_secret|private_key|private_key_alg|client_metadata_url|scope|grant_type)$/,
  keyRule: 'one of client_id, client_secret, private_key, private_key_alg, client_metadata_url, scope, grant_type',
  // A PEM key spans lines; line breaks in the other values are refused below.
  forbidden: /\0/,
  forbiddenRule: 'NUL',
  caseInsensitive: false,
};
/** RFC 7518 signature algorithms a private_key_jwt assertion may use. */
const JWT_ALGS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];
const oauth = checkedSecretMap(oauthRules)
  .superRefine((map, ctx) => {
    for (const [key, item] of Object.entries(map)) {
      if (key !== 'private_key' && typeof item === 'string' && /[\r\n]/.test(item)) ctx.addIssue({ code: 'custom', path: [key], message: 'must not contain line breaks' });
    }
    const grant = map.grant_type;
    if (grant !== undefined && !OAUTH_GRANTS.includes(grant)) ctx.addIssue({ code: 'custom', path: ['grant_type'], message: `must be one of ${OAUTH_GRANTS.join(', ')}` });
    if (grant === 'client_credentials' && (!map.client_id || !(map.client_secret || map.private_key))) ctx.addIssue('client_credentials needs client_id and client_secret or private_key');
    for (const key of ['client_secret', 'private_key'] as const) {
      if (map[key] !== undefined && !map.client_id) ctx.addIssue({ code: 'custom', path: [key], message: 'needs client_id' });
    }
    if (map.client_secret !== undefined && map.private_key !== undefined) ctx.addIssue({ code: 'custom', path: ['private_key'], message: 'give client_secret or private_key, not both' });
    if (map.private_key !== undefined && !/^-----BEGIN PRIVATE KEY-----/.test(map.private_key.trim())) ctx.addIssue({ code: 'custom', path: ['private_key'], message: 'must be a PKCS#8 PEM key (-----BEGIN PRIVATE KEY-----)' });
    if (map.private_key_alg !== undefined && !JWT_ALGS.includes(map.private_key_alg)) ctx.addIssue({ code: 'custom', path: ['private_key_alg'], message: `must be one of ${JWT_ALGS.join(', ')}` });
    if (map.client_metadata_url !== undefined && !isHttpsUrlWithPath(map.client_metadata_url)) {
      ctx.addIssue({ code: 'custom', path: ['client_metadata_url'], message: 'must be an https:// URL with a path (a client ID metadata document)' });
    }
  })
  .optional()
  .meta(secretMapMeta(oauthRules));

const arg = text({ allowEmpty: true }).refine((value) => !value.includes(REDACTED), {
  error: `holds the placeholder "${REDACTED}" but matches no stored argument: give the value`,
});

const url = text().superRefine((value, ctx) => {
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    return ctx.addIssue('is not a valid URL');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') ctx.addIssue('must be an http:// or https:// URL');
  // The URL is stored in clear; only env and header values are encrypted.
  if (parsed.username !== '' || parsed.password !== '') ctx.addIssue('must not carry credentials: put them in a header');
});

const stdioTransport = z.strictObject({
  type: z.literal('stdio'),
  command: text(),
  args: z
    .array(arg, { error: 'must be an array of strings' })
    .superRefine((args, ctx) => {
      if (args.length > MAX_ITEMS) ctx.addIssue(`must have at most ${MAX_ITEMS} items`);
    }, { when: (payload) => Array.isArray(payload.value) })
    .meta({ maxItems: MAX_ITEMS })
    .default(() => []),
  env,
  cwd: text()
    .refine(isAbsolute, { error: 'must be an absolute path or null' })
    .nullish()
    .transform((cwd) => cwd ?? null),
});

const httpFields = { url, headers, oauth };
const transport = z.discriminatedUnion(
  'type',
  [
    stdioTransport,
    z.strictObject({ type: z.literal('http').describe('Streamable HTTP'), ...httpFields }),
    z.strictObject({ type: z.literal('sse').describe('legacy HTTP+SSE'), ...httpFields }),
  ],
  {
    error: (issue) => {
      if (issue.code !== 'invalid_union') return requiredOr('must be an object')(issue);
      const type = (issue.input as { type?: unknown } | undefined)?.type;
      return type === undefined ? 'is required' : 'must be one of "stdio", "http", "sse"';
    },
  },
);

const timeout = (field: keyof typeof TIMEOUT_MAX_MS) => {
  const error = `must be an integer from 1 to ${TIMEOUT_MAX_MS[field]} (milliseconds)`;
  return z.number({ error }).int({ error, abort: true }).min(1, { error, abort: true }).max(TIMEOUT_MAX_MS[field], { error, abort: true }).default(DEFAULT_TIMEOUTS[field]);
};

const timeouts = z
  .strictObject(
    {
      connect_ms: timeout('connect_ms').describe('connect + initialize'),
      request_ms: timeout('request_ms').describe('one forwarded request (tools/call, resources/read, ...) and one list on the actor'),
      list_deadline_ms: timeout('list_deadline_ms').describe('how long the router waits for this upstream during a list fan-out'),
    },
    { error: 'must be an object' },
  )
  .default(() => ({ ...DEFAULT_TIMEOUTS }));

const SESSION_MODES = ['shared', 'per_session'] as const;
const PROTOCOLS = ['auto', '2025-11-25', '2026-07-28'] as const;

export const serverConfigSchema = z
  .strictObject(
    {
      name: prefix().meta({ pattern: SERVER_NAME_PATTERN.source }),
      description: text({ max: MAX_DESCRIPTION, allowEmpty: true }).default(''),
      enabled: flag(true),
      transport,
      auto_enable_new_capabilities: flag(true),
      timeouts,
      namespace: prefix({ allowExactlyEmpty: true })
        .optional()
        .describe('prefix of this server\'s names and URIs (default: the name); "" passes them through unprefixed'),
      session_mode: z
        .enum(SESSION_MODES, { error: `must be one of ${SESSION_MODES.map((mode) => `"${mode}"`).join(', ')}` })
        .default('shared')
        .describe(
          'shared: one upstream connection serves every client session. per_session: one connection per client session ' +
            '(lazily; closed with the session or when idle), so stateful features (subscriptions, log level, roots, sampling) know their client.',
        ),
      protocol: z
        .enum(PROTOCOLS, { error: `must be one of ${PROTOCOLS.map((era) => `"${era}"`).join(', ')}` })
        .default('auto')
        .describe(
          'the MCP era spoken to this upstream. auto: probe with server/discover (2026-07-28) and fall back to initialize (2025-11-25); ' +
            'a version: speak only that era (2026-07-28 fails the connection when the upstream does not offer it).',
        ),
    },
    { error: 'must be a JSON object' },
  )
  .transform(({ namespace, session_mode, protocol, ...config }) => ({ ...config, namespace: namespace ?? config.name, session_mode, protocol }));

export type ServerConfig = z.output<typeof serverConfigSchema>;
export type TransportConfig = ServerConfig['transport'];
export type StdioTransportConfig = Extract<TransportConfig, { type: 'stdio' }>;
export type HttpTransportConfig = Extract<TransportConfig, { type: 'http' }>;
export type SseTransportConfig = Extract<TransportConfig, { type: 'sse' }>;
export type TimeoutsConfig = ServerConfig['timeouts'];
export type SessionMode = ServerConfig['session_mode'];
export type ProtocolSetting = ServerConfig['protocol'];

/** The config file format (what a user writes: defaults optional), as JSON Schema. */
export function serverConfigJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(serverConfigSchema, { io: 'input', unrepresentable: 'any' });
}
