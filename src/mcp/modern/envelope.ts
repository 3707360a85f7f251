// The per-request `_meta` envelope of the modern era: which keys are missing
// or malformed, in the order the SDK reports them (missing required keys
// first, then problems inside present keys in schema order). Pure.
import { isLogLevel } from '../../router/log-levels.js';
import { CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY, isPlainObject, LOG_LEVEL_META_KEY, PROTOCOL_VERSION_META_KEY } from './wire.js';

export interface EnvelopeIssue {
  key: string;
  problem: string;
}

function isProgressToken(value: unknown): boolean {
  return typeof value === 'string' || (typeof value === 'number' && Number.isSafeInteger(value));
}

function isOptionalString(value: unknown): boolean {
  return value === undefined || typeof value === 'string';
}

/** JSON objects all the way down (what the schema's JSONObject admits). */
function isJsonObject(value: unknown): boolean {
  return isPlainObject(value);
}

function implementationProblem(value: unknown): string | undefined {
  if (!isPlainObject(value)) return 'expected an object';
  if (typeof value.name !== 'string') return 'name: expected a string';
  if (typeof value.version !== 'string') return 'version: expected a string';
  for (const key of ['title', 'websiteUrl', 'description']) if (!isOptionalString(value[key])) return `${key}: expected a string`;
  if (value.icons !== undefined && !(Array.isArray(value.icons) && value.icons.every((icon) => isPlainObject(icon) && typeof icon.src === 'string'))) {
    return 'icons: expected an array of icons';
  }
  return undefined;
}

function capabilitiesProblem(value: unknown): string | undefined {
  if (!isPlainObject(value)) return 'expected an object';
  for (const key of ['experimental', 'extensions'] as const) {
    const entry = value[key];
    if (entry !== undefined && !(isPlainObject(entry) && Object.values(entry).every(isJsonObject))) return `${key}: expected an object of objects`;
  }
  const { sampling, elicitation, roots } = value;
  if (sampling !== undefined && !(isPlainObject(sampling) && [sampling.context, sampling.tools].every((part) => part === undefined || isJsonObject(part)))) {
    return 'sampling: expected an object';
  }
  if (elicitation !== undefined && !(isPlainObject(elicitation) && [elicitation.form, elicitation.url].every((part) => part === undefined || isJsonObject(part)))) {
    return 'elicitation: expected an object';
  }
  if (roots !== undefined && !(isPlainObject(roots) && (roots.listChanged === undefined || typeof roots.listChanged === 'boolean'))) {
    return 'roots: expected an object';
  }
  return undefined;
}

/** The envelope's problems; empty when it is valid. */
export function envelopeIssues(meta: Record<string, unknown>): EnvelopeIssue[] {
  // Checked on every modern request: straight-line checks, no table of them built per call.
  const hasVersion = PROTOCOL_VERSION_META_KEY in meta;
  const hasCapabilities = CLIENT_CAPABILITIES_META_KEY in meta;
  const issues: EnvelopeIssue[] = [];
  const add = (key: string, problem: string | undefined): void => void (problem !== undefined && issues.push({ key, problem }));
  if (!hasVersion) add(PROTOCOL_VERSION_META_KEY, 'missing');
  if (!hasCapabilities) add(CLIENT_CAPABILITIES_META_KEY, 'missing');
  if (meta.progressToken !== undefined && !isProgressToken(meta.progressToken)) add('progressToken', 'expected a string or an integer');
  if (hasVersion && typeof meta[PROTOCOL_VERSION_META_KEY] !== 'string') add(PROTOCOL_VERSION_META_KEY, 'expected a string');
  if (meta[CLIENT_INFO_META_KEY] !== undefined) add(CLIENT_INFO_META_KEY, implementationProblem(meta[CLIENT_INFO_META_KEY]));
  if (hasCapabilities) add(CLIENT_CAPABILITIES_META_KEY, capabilitiesProblem(meta[CLIENT_CAPABILITIES_META_KEY]));
  if (meta[LOG_LEVEL_META_KEY] !== undefined && !isLogLevel(meta[LOG_LEVEL_META_KEY])) add(LOG_LEVEL_META_KEY, 'expected a logging level');
  return issues;
}
