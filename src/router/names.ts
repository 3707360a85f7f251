// Exposed tool and prompt names that every model host accepts: OpenAI and
// Anthropic refuse a whole request when one name breaks ^[a-zA-Z0-9_-]{1,64}$,
// and hosts add their own prefix (Claude Code: `mcp__<server>__`), so the
// length is a budget. A name that already fits is unchanged; any other is a
// readable head plus a hash of the full name, the same on every start and
// version of coffer (the hash and this rule are the contract), routed back by
// the merged list. A shortened name never contains `__`, so it can never be
// read as another server's prefix form. Pure.
import { createHash } from 'node:crypto';

/** What the model APIs accept. */
export const MODEL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;
export const DEFAULT_NAME_BUDGET = 64;
/** The smallest budget that leaves a shortened name a readable head. */
export const MIN_NAME_BUDGET = 24;
/** 12 hex digits (48 bits): at 10,000 shortened names two share a hash with odds under 1 in 5 million. */
const HASH_CHARS = 12;
/** Room a namespace must leave for `__` and a readable name. */
const NAME_ROOM = 2 + 16;
const FITS = /^[a-zA-Z0-9_-]+$/;

/** `full` itself when it fits the budget and the pattern; else `<head>-<hash>`, exactly `budget` characters at most. */
export function fitName(full: string, budget: number): string {
  if (full.length <= budget && FITS.test(full)) return full;
  const hash = createHash('sha256').update(full, 'utf8').digest('hex').slice(0, HASH_CHARS);
  // Each `_` followed by another becomes `-`: no `__` survives, not even at the cut.
  const head = full
    .replace(/[^a-zA-Z0-9_-]/g, '-')
    .replace(/_(?=_)/g, '-')
    .slice(0, budget - HASH_CHARS - 1)
    .replace(/_$/, '-');
  return `${head}-${hash}`;
}

/**
 * The prefixes a shortened name may have been made from: what comes before
 * each `-_`, which is how fitName writes the `__` after a prefix. A server
 * owns its shortened names as it owns its `prefix__` ones.
 */
export function shortenedHeads(name: string): string[] {
  const heads: string[] = [];
  for (let at = name.indexOf('-_'); at > 0; at = name.indexOf('-_', at + 1)) heads.push(name.slice(0, at));
  return heads;
}

/** The longest namespace that leaves room for `__` and a readable name. */
export function maxPrefixLength(budget: number): number {
  return budget - NAME_ROOM;
}

/**
 * Why a server's prefix (its namespace, or its name when the namespace is the
 * name) cannot give names that fit, with one that can; null when it can.
 */
export function prefixProblem(prefix: string, budget: number): { message: string; suggestion: string } | null {
  const max = maxPrefixLength(budget);
  if (prefix === '' || (FITS.test(prefix) && prefix.length <= max)) return null;
  const suggestion = prefix.replace(/[^a-zA-Z0-9_-]/g, '-').replace(/_(?=_)/g, '-').slice(0, max).replace(/[_-]+$/, '') || 'ns';
  const why = FITS.test(prefix) ? `is ${prefix.length} characters; at most ${max} leave room for '__' and a readable name within the ${budget}-character name budget` : 'has characters model hosts refuse in tool names (only letters, digits, _ and -)';
  return { message: `namespace "${prefix}" ${why}: use --namespace ${suggestion}`, suggestion };
}

/**
 * Why the user's own name for a tool or prompt cannot be exposed as it is
 * (`<prefix>__<name>`, or `<name>` unprefixed); null when it can. It must be
 * exposed unshortened (it is the user's word) and hold no `__` (it would read
 * as a prefix form).
 */
export function ownNameProblem(name: string, prefix: string, budget: number): string | null {
  if (!MODEL_NAME_PATTERN.test(name)) return `"${name}" is not a name model hosts accept: 1 to 64 letters, digits, _ and -`;
  if (name.includes('__')) return `"${name}" contains '__', which separates a namespace from a name`;
  const room = prefix === '' ? budget : budget - prefix.length - 2;
  if (name.length > room) return `"${name}" is ${name.length} characters; under the namespace "${prefix}" at most ${room} fit the ${budget}-character name budget`;
  return null;
}
