// Validation of upstream server configs (pure): defaults applied, every problem
// reported at once as CONFIG_INVALID with details.errors [{field, message}].
import { isAbsolute } from 'node:path';
import type { Result } from '../protocol/errors.js';
import {
  DEFAULT_TIMEOUTS,
  NAMESPACE_SEPARATOR,
  SERVER_NAME_PATTERN,
  type ServerConfig,
  type SessionMode,
  type TimeoutsConfig,
  type TransportConfig,
} from '../protocol/server-config.js';
import { maskArgs, REDACTED } from './secret-args.js';

export { REDACTED };

export interface FieldError {
  field: string;
  message: string;
}

export type Json = Record<string, unknown>;

const TOP_LEVEL_FIELDS = ['name', 'description', 'enabled', 'transport', 'auto_enable_new_capabilities', 'timeouts', 'namespace', 'session_mode'];
const SESSION_MODES: readonly SessionMode[] = ['shared', 'per_session'];
const TRANSPORT_FIELDS = { stdio: ['type', 'command', 'args', 'env', 'cwd'], http: ['type', 'url', 'headers'], sse: ['type', 'url', 'headers'] };
/** Upper bounds: beyond them a value is a typo (seconds taken for ms), not a choice. */
const TIMEOUT_MAX_MS: TimeoutsConfig = { connect_ms: 600_000, request_ms: 3_600_000, list_deadline_ms: 60_000 };
const MAX_DESCRIPTION = 1_000;
const MAX_STRING = 4_096;
const MAX_SECRET = 16_384;
const MAX_ITEMS = 256;

/** The two secret maps: what a key may be and what a value may not hold. */
const SECRET_MAPS = {
  env: {
    key: /^[A-Za-z_][A-Za-z0-9_]{0,255}$/,
    keyRule: 'an environment variable name (letters, digits, "_"; no leading digit)',
    forbidden: /\0/,
    forbiddenRule: 'NUL characters',
    caseInsensitive: false,
  },
  headers: {
    // RFC 9110 token.
    key: /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,256}$/,
    keyRule: 'an HTTP header name',
    forbidden: /[\0\r\n]/,
    forbiddenRule: 'NUL or line breaks',
    // Two spellings of one header name would race for it.
    caseInsensitive: true,
  },
};

export function isJsonObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Readers push their problems and always answer a value (a placeholder when invalid): the config is kept only without errors. */
class Reader {
  readonly errors: FieldError[] = [];

  fail(field: string, message: string): void {
    this.errors.push({ field, message });
  }

  unknownFields(object: Json, allowed: string[], prefix: string): void {
    for (const field of Object.keys(object)) {
      if (!allowed.includes(field)) this.fail(prefix + field, 'is not a known field');
    }
  }

  string(value: unknown, field: string, options: { max?: number; allowEmpty?: boolean } = {}): string {
    const max = options.max ?? MAX_STRING;
    if (typeof value !== 'string') this.fail(field, value === undefined ? 'is required' : 'must be a string');
    else if (!options.allowEmpty && value.trim() === '') this.fail(field, 'must not be empty');
    else if (value.length > max) this.fail(field, `must be at most ${max} characters`);
    else if (value.includes('\0')) this.fail(field, 'must not contain NUL characters');
    else return value;
    return '';
  }

  boolean(value: unknown, field: string, fallback: boolean): boolean {
    if (value === undefined) return fallback;
    if (typeof value === 'boolean') return value;
    this.fail(field, 'must be true or false');
    return fallback;
  }

  name(value: unknown): string {
    const name = this.string(value, 'name');
    if (name !== '') this.prefixRules(name, 'name');
    return name;
  }

  /** Names and namespaces both become prefixes that parsing must split back. */
  private prefixRules(prefix: string, field: string): void {
    if (!SERVER_NAME_PATTERN.test(prefix)) this.fail(field, 'must be 1-64 characters of letters, digits, "_", "." or "-"');
    if (prefix.includes(NAMESPACE_SEPARATOR)) this.fail(field, `must not contain "${NAMESPACE_SEPARATOR}" (it separates server and capability names)`);
    else if (prefix.endsWith('_')) this.fail(field, `must not end with "_" ("${prefix}${NAMESPACE_SEPARATOR}tool" would read as another server's tool)`);
  }

  /** Absent: the server name. "": unprefixed. */
  namespace(value: unknown, name: string): string {
    if (value === undefined) return name;
    if (value === '') return '';
    const namespace = this.string(value, 'namespace');
    if (namespace !== '') this.prefixRules(namespace, 'namespace');
    return namespace;
  }

  sessionMode(value: unknown): SessionMode {
    if (value === undefined) return 'shared';
    if (SESSION_MODES.includes(value as SessionMode)) return value as SessionMode;
    this.fail('session_mode', `must be one of ${SESSION_MODES.map((mode) => `"${mode}"`).join(', ')}`);
    return 'shared';
  }

  transport(value: unknown): TransportConfig {
    const placeholder: TransportConfig = { type: 'stdio', command: '', args: [], env: {}, cwd: null };
    if (!isJsonObject(value)) {
      this.fail('transport', value === undefined ? 'is required' : 'must be an object');
      return placeholder;
    }
    const type = value.type;
    if (type !== 'stdio' && type !== 'http' && type !== 'sse') {
      this.fail('transport.type', type === undefined ? 'is required' : 'must be one of "stdio", "http", "sse"');
      return placeholder;
    }
    this.unknownFields(value, TRANSPORT_FIELDS[type], 'transport.');
    if (type === 'stdio') {
      return {
        type,
        command: this.string(value.command, 'transport.command'),
        args: value.args === undefined ? [] : this.args(value.args),
        env: value.env === undefined ? {} : this.secrets(value.env, 'env'),
        cwd: value.cwd === undefined || value.cwd === null ? null : this.cwd(value.cwd),
      };
    }
    return {
      type,
      url: this.url(value.url),
      headers: value.headers === undefined ? {} : this.secrets(value.headers, 'headers'),
    };
  }

  args(value: unknown): string[] {
    if (!Array.isArray(value)) {
      this.fail('transport.args', 'must be an array of strings');
      return [];
    }
    if (value.length > MAX_ITEMS) this.fail('transport.args', `must have at most ${MAX_ITEMS} items`);
    return value.map((arg, index) => {
      const field = `transport.args[${index}]`;
      const text = this.string(arg, field, { allowEmpty: true });
      if (text.includes(REDACTED)) this.fail(field, `holds the placeholder "${REDACTED}" but matches no stored argument: give the value`);
      return text;
    });
  }

  cwd(value: unknown): string {
    const cwd = this.string(value, 'transport.cwd');
    if (cwd !== '' && !isAbsolute(cwd)) this.fail('transport.cwd', 'must be an absolute path or null');
    return cwd;
  }

  url(value: unknown): string {
    const url = this.string(value, 'transport.url');
    if (url === '') return url;
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      this.fail('transport.url', 'is not a valid URL');
      return url;
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') this.fail('transport.url', 'must be an http:// or https:// URL');
    // The URL is stored in clear; only env and header values are encrypted.
    if (parsed.username !== '' || parsed.password !== '') this.fail('transport.url', 'must not carry credentials: put them in a header');
    return url;
  }

  /** env or headers: a string→string map whose values are secrets (never echoed in messages). */
  secrets(value: unknown, kind: keyof typeof SECRET_MAPS): Record<string, string> {
    const field = `transport.${kind}`;
    const rules = SECRET_MAPS[kind];
    if (!isJsonObject(value)) {
      this.fail(field, 'must be an object of string values');
      return {};
    }
    const entries = Object.entries(value);
    if (entries.length > MAX_ITEMS) this.fail(field, `must have at most ${MAX_ITEMS} entries`);
    const seen = new Set<string>();
    const result: [string, string][] = [];
    for (const [key, item] of entries) {
      const at = `${field}.${key}`;
      if (!rules.key.test(key)) this.fail(at, `is not a valid key: must be ${rules.keyRule}`);
      const folded = rules.caseInsensitive ? key.toLowerCase() : key;
      if (seen.has(folded)) this.fail(at, 'repeats a key (case-insensitively)');
      seen.add(folded);
      if (typeof item !== 'string') this.fail(at, 'must be a string');
      else if (item.length > MAX_SECRET) this.fail(at, `must be at most ${MAX_SECRET} characters`);
      else if (rules.forbidden.test(item)) this.fail(at, `must not contain ${rules.forbiddenRule}`);
      else if (item === REDACTED) this.fail(at, `is the placeholder "${REDACTED}", not a value`);
      else result.push([key, item]);
    }
    return Object.fromEntries(result);
  }

  timeouts(value: unknown): TimeoutsConfig {
    if (value === undefined) return { ...DEFAULT_TIMEOUTS };
    if (!isJsonObject(value)) {
      this.fail('timeouts', 'must be an object');
      return { ...DEFAULT_TIMEOUTS };
    }
    const fields = Object.keys(DEFAULT_TIMEOUTS) as (keyof TimeoutsConfig)[];
    this.unknownFields(value, fields, 'timeouts.');
    const timeouts = { ...DEFAULT_TIMEOUTS };
    for (const field of fields) {
      const ms = value[field];
      if (ms === undefined) continue;
      if (typeof ms === 'number' && Number.isInteger(ms) && ms >= 1 && ms <= TIMEOUT_MAX_MS[field]) timeouts[field] = ms;
      else this.fail(`timeouts.${field}`, `must be an integer from 1 to ${TIMEOUT_MAX_MS[field]} (milliseconds)`);
    }
    return timeouts;
  }
}

export function invalid(errors: FieldError[]): Result<never> {
  const summary = errors.map((error) => `${error.field}: ${error.message}`).join('; ');
  return { ok: false, error: { code: 'CONFIG_INVALID', message: `invalid server config: ${summary}`, details: { errors } } };
}

/** A complete, valid config with defaults applied, or CONFIG_INVALID listing every problem. */
export function parseServerConfig(input: unknown): Result<ServerConfig> {
  if (!isJsonObject(input)) return invalid([{ field: '(root)', message: 'must be a JSON object' }]);
  const reader = new Reader();
  reader.unknownFields(input, TOP_LEVEL_FIELDS, '');
  const name = reader.name(input.name);
  const config: ServerConfig = {
    name,
    description: input.description === undefined ? '' : reader.string(input.description, 'description', { max: MAX_DESCRIPTION, allowEmpty: true }),
    enabled: reader.boolean(input.enabled, 'enabled', true),
    transport: reader.transport(input.transport),
    auto_enable_new_capabilities: reader.boolean(input.auto_enable_new_capabilities, 'auto_enable_new_capabilities', true),
    timeouts: reader.timeouts(input.timeouts),
    namespace: reader.namespace(input.namespace, name),
    session_mode: reader.sessionMode(input.session_mode),
  };
  return reader.errors.length === 0 ? { ok: true, value: config } : invalid(reader.errors);
}

/**
 * The config as API answers show it: every env and header value replaced by "[redacted]"
 * (keys kept), and the secret part of every argument that looks like one.
 * `allArgs`: every argument replaced (audit entries, kept in the database file, hold none in clear).
 */
export function redactConfig(config: ServerConfig, options: { allArgs?: boolean } = {}): ServerConfig {
  const redact = (map: Record<string, string>) => Object.fromEntries(Object.keys(map).map((key) => [key, REDACTED]));
  const transport = config.transport;
  if (transport.type !== 'stdio') return { ...config, transport: { ...transport, headers: redact(transport.headers) } };
  const args = options.allArgs ? transport.args.map(() => REDACTED) : maskArgs(transport.args);
  return { ...config, transport: { ...transport, args, env: redact(transport.env) } };
}
