// V8 options for the actor isolates. Each actor is its own isolate and tiers
// up its own code only after many of its own calls, so with calls spread over
// many upstreams every actor runs interpreted. V8 reads these options when it
// compiles a function, in every isolate of the process: a worker cannot be
// given its own (Worker execArgv refuses V8 options), so the daemon sets them
// once, before its first worker starts.
import { setFlagsFromString } from 'node:v8';

/**
 * None: V8's own. Options that make a cold actor's code faster sooner were
 * measured and each costs more than it gives (docs/performance.md, Spread load): feedback
 * vectors on the first call (`--no-lazy-feedback-allocation`) made every
 * actor's start about a fifth dearer in instructions and a process's whole life
 * of calls dearer too; Sparkplug for everything and an earlier tier-up cost
 * compiling in every isolate.
 */
export const DEFAULT_ENGINE_FLAGS: readonly string[] = [];

/** A V8 option, optionally with a value: nothing a shell or V8's parser could read as two. */
const FLAG = /^--[a-z0-9][a-z0-9_-]*(=[A-Za-z0-9_.-]+)?$/;

export class EngineFlagsError extends Error {
  readonly code = 'CONFIG_INVALID';
}

/**
 * COFFER_V8_FLAGS: V8 options separated by spaces, instead of the defaults;
 * empty for none. Unset: the defaults.
 */
export function parseEngineFlags(raw: string | undefined): readonly string[] {
  if (raw === undefined) return DEFAULT_ENGINE_FLAGS;
  const flags = raw.split(/\s+/).filter((flag) => flag !== '');
  const bad = flags.find((flag) => !FLAG.test(flag));
  if (bad !== undefined) throw new EngineFlagsError(`COFFER_V8_FLAGS: '${bad}' is not a V8 option (--name or --name=value, separated by spaces; empty for none)`);
  return flags;
}

/** Process-wide: applies to every isolate created afterwards (call before the first worker starts). */
export function applyEngineFlags(flags: readonly string[]): void {
  for (const flag of flags) setFlagsFromString(flag);
}
