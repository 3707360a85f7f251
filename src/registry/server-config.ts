// Validation of upstream server configs (pure): defaults applied, every problem
// reported at once as CONFIG_INVALID with details.errors [{field, message}].
import type { z } from 'zod';
import type { Result } from '../protocol/errors.js';
import type { ServerConfig } from '../protocol/server-config.js';
import { REDACTED, maskArgs } from './secret-args.js';
import { serverConfigSchema } from './server-config-schema.js';

export { REDACTED };

export interface FieldError {
  field: string;
  message: string;
}

export type Json = Record<string, unknown>;

export function isJsonObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function invalid(errors: FieldError[], what = 'server config'): Result<never> {
  const summary = errors.map((error) => `${error.field}: ${error.message}`).join('; ');
  return { ok: false, error: { code: 'CONFIG_INVALID', message: `invalid ${what}: ${summary}`, details: { errors } } };
}

/** `transport.args[1]`, `transport.env.A=B`; the config itself is "(root)". */
export function fieldOf(path: readonly PropertyKey[]): string {
  const field = path.map((key, index) => (typeof key === 'number' ? `[${key}]` : `${index === 0 ? '' : '.'}${String(key)}`)).join('');
  return field === '' ? '(root)' : field;
}

const isInside = (path: readonly PropertyKey[], parent: readonly PropertyKey[]) => path.length > parent.length && parent.every((key, index) => path[index] === key);

/** zod issues as field errors; a problem of a whole object or list (an unknown field, too many items) comes before those of its parts, as a reader meets them. */
export function fieldErrors(issues: z.core.$ZodIssue[]): FieldError[] {
  const ordered: { path: readonly PropertyKey[]; error: FieldError }[] = [];
  for (const issue of issues) {
    const errors =
      issue.code === 'unrecognized_keys'
        ? issue.keys.map((key) => ({ field: fieldOf([...issue.path, key]), message: 'is not a known field' }))
        : [{ field: fieldOf(issue.path), message: issue.message }];
    const first = ordered.findIndex((entry) => isInside(entry.path, issue.path));
    ordered.splice(first === -1 ? ordered.length : first, 0, ...errors.map((error) => ({ path: issue.path, error })));
  }
  return ordered.map((entry) => entry.error);
}

/** A complete, valid config with defaults applied, or CONFIG_INVALID listing every problem. */
export function parseServerConfig(input: unknown): Result<ServerConfig> {
  const parsed = serverConfigSchema.safeParse(input);
  return parsed.success ? { ok: true, value: parsed.data } : invalid(fieldErrors(parsed.error.issues));
}

/**
 * The config as API answers show it: every env, header and OAuth client value replaced by "[redacted]"
 * (keys kept), and the secret part of every argument that looks like one.
 * `allArgs`: every argument replaced (audit entries, kept in the database file, hold none in clear).
 */
export function redactConfig(config: ServerConfig, options: { allArgs?: boolean } = {}): ServerConfig {
  const redact = (map: Record<string, string>) => Object.fromEntries(Object.keys(map).map((key) => [key, REDACTED]));
  const transport = config.transport;
  if (transport.type !== 'stdio') {
    return { ...config, transport: { ...transport, headers: redact(transport.headers), ...(transport.oauth ? { oauth: redact(transport.oauth) } : {}) } };
  }
  const args = options.allArgs ? transport.args.map(() => REDACTED) : maskArgs(transport.args);
  return { ...config, transport: { ...transport, args, env: redact(transport.env) } };
}
