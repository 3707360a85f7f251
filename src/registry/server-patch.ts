// A partial update of a stored server config (pure): what the patch gives replaces or
// merges over what is stored; secrets sent back masked keep their stored values,
// except headers and the OAuth client when the URL moves to another origin.
import type { Result } from '../protocol/errors.js';
import type { ServerConfig, TransportConfig } from '../protocol/server-config.js';
import { REDACTED, restoreMaskedArgs } from './secret-args.js';
import { invalid, isJsonObject, parseServerConfig, type FieldError, type Json } from './server-config.js';

/** A secret map from a patch, with "[redacted]" values (a config read back from the API) keeping the stored value. */
function keepStoredSecrets(patched: unknown, stored: Record<string, string> | undefined): unknown {
  if (!isJsonObject(patched) || stored === undefined) return patched;
  return Object.fromEntries(
    Object.entries(patched).map(([key, value]) => [key, value === REDACTED && Object.hasOwn(stored, key) ? stored[key] : value]),
  );
}

/** The origins of two URLs when they differ (both valid), else null. */
function originMove(from: string, to: unknown): { from: string; to: string } | null {
  try {
    const move = { from: new URL(from).origin, to: new URL(String(to)).origin };
    return move.from === move.to ? null : move;
  } catch {
    return null;
  }
}

/** The transport's sealed maps that are credentials for the upstream's origin, and what messages call their values. */
const ORIGIN_BOUND = { headers: { all: 'headers', each: 'header values' }, oauth: { all: 'OAuth client values', each: 'OAuth client values' } } as const;
type OriginBound = keyof typeof ORIGIN_BOUND;

/**
 * Headers and the OAuth client (its secret or key authenticates to whatever token endpoint the
 * upstream names) were given for one origin: a URL moved to another origin gets none of them
 * unless they are given again. Kept ones and "[redacted]" ones are refused, each with its own
 * message, rather than dropped unseen.
 */
function notAcrossOrigins(field: OriginBound, stored: Record<string, string>, move: { from: string; to: string }, merged: Json, patch: Json, errors: FieldError[]): void {
  if (Object.keys(stored).length === 0) return;
  const { all, each } = ORIGIN_BOUND[field];
  const why = `were given for ${move.from} and are not sent to ${move.to} unless given again`;
  if (merged[field] === stored) {
    errors.push({ field: `transport.${field}`, message: `the URL moves to another origin: the stored ${all} (${Object.keys(stored).join(', ')}) ${why}; give them again, or ${field} {} for none` });
  } else if (isJsonObject(patch[field])) {
    const kept = Object.entries(patch[field]).filter(([, value]) => value === REDACTED);
    for (const [key] of kept) errors.push({ field: `transport.${field}.${key}`, message: `the URL moves to another origin: stored ${each} ${why}; give its value, or leave it out` });
    merged[field] = Object.fromEntries(Object.entries(patch[field]).filter(([, value]) => value !== REDACTED));
  }
}

/**
 * Same transport type (or none given): fields merge over the stored ones. Another type: the
 * patch is the whole new transport. env and headers are replaced as a whole, so a key can be removed.
 */
function patchTransport(stored: TransportConfig, patch: Json, errors: FieldError[]): Json {
  const merged: Json = patch.type === undefined || patch.type === stored.type ? { ...stored, ...patch } : { ...patch };
  if ('env' in patch) merged.env = keepStoredSecrets(patch.env, stored.type === 'stdio' ? stored.env : undefined);
  if ('args' in patch && stored.type === 'stdio') merged.args = restoreMaskedArgs(patch.args, stored.args);
  if (stored.type === 'stdio' || merged.type === 'stdio') return merged;
  const move = originMove(stored.url, merged.url);
  for (const field of Object.keys(ORIGIN_BOUND) as OriginBound[]) {
    if (field in patch) merged[field] = keepStoredSecrets(patch[field], move ? undefined : stored[field]);
    if (move) notAcrossOrigins(field, stored[field] ?? {}, move, merged, patch, errors);
  }
  return merged;
}

/** A partial update: top-level fields replace, transport and timeouts merge; the name cannot change. */
export function applyServerPatch(existing: ServerConfig, patch: unknown): Result<ServerConfig> {
  if (!isJsonObject(patch)) return invalid([{ field: '(root)', message: 'must be a JSON object' }]);
  const errors: FieldError[] = [];
  if (patch.name !== undefined && patch.name !== existing.name) {
    errors.push({ field: 'name', message: 'cannot be changed (remove the server and add it again)' });
  }
  const merged: Json = { ...existing, ...patch, name: existing.name };
  if (isJsonObject(patch.transport)) merged.transport = patchTransport(existing.transport, patch.transport, errors);
  if (isJsonObject(patch.timeouts)) merged.timeouts = { ...existing.timeouts, ...patch.timeouts };
  const parsed = parseServerConfig(merged);
  if (!parsed.ok) errors.push(...(parsed.error.details as { errors: FieldError[] }).errors);
  return errors.length === 0 ? parsed : invalid(errors);
}
