// Argument parsing on node:util parseArgs. Every command also accepts the
// global --home, --verbose and --help, so they may appear anywhere on the line.
import { parseArgs } from 'node:util';
import { messageOf } from '../protocol/errors.js';
import { usageError } from './output.js';

export type OptionSpec = { type: 'string' | 'boolean'; multiple?: boolean; short?: string };
export type OptionSpecs = Record<string, OptionSpec>;

type ValueOf<S extends OptionSpec> = S['type'] extends 'string'
  ? S['multiple'] extends true
    ? string[]
    : string
  : S['multiple'] extends true
    ? boolean[]
    : boolean;

export type ParsedArgs<S extends OptionSpecs> = {
  values: { [K in keyof S]?: ValueOf<S[K]> } & { home?: string; help?: boolean; verbose?: boolean };
  positionals: string[];
};

const GLOBAL_OPTIONS = {
  home: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  // Read by main.ts (isVerbose): more detail on errors.
  verbose: { type: 'boolean' },
} as const satisfies OptionSpecs;

export function parseCommandArgs<S extends OptionSpecs>(argv: string[], options: S): ParsedArgs<S> {
  try {
    const { values, positionals } = parseArgs({
      args: argv,
      options: { ...GLOBAL_OPTIONS, ...options },
      allowPositionals: true,
      strict: true,
    });
    return { values: values as ParsedArgs<S>['values'], positionals };
  } catch (error) {
    // parseArgs throws TypeErrors with ERR_PARSE_ARGS_* codes: a usage problem.
    throw usageError(messageOf(error));
  }
}

/** `K=V` pairs of --env / --header; the key may not be empty, the value may. */
export function parseKeyValues(pairs: string[] | undefined, flag: string): Record<string, string> {
  const result: Record<string, string> = {};
  for (const pair of pairs ?? []) {
    const at = pair.indexOf('=');
    if (at <= 0) throw usageError(`${flag} expects KEY=VALUE, got '${pair.split('=')[0]}'`);
    result[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return result;
}

export function parsePort(raw: string | undefined, source: string): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  const port = Number(raw);
  // 0: any free port (what tests use).
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw usageError(`${source} must be a port number 0-65535, got '${raw}'`);
  return port;
}

/** Exactly the named positionals, in order (e.g. ['NAME']); anything missing or extra is a usage error. */
export function expectPositionals(positionals: string[], names: string[]): string[] {
  if (positionals.length < names.length) throw usageError(`missing ${names[positionals.length]}`);
  if (positionals.length > names.length) throw usageError(`unexpected argument '${positionals[names.length]}'`);
  return positionals;
}

/** `true` or `false` (also yes/no, on/off, 1/0) for flags such as --enabled. */
export function parseBooleanValue(raw: string, flag: string): boolean {
  const value = raw.trim().toLowerCase();
  if (['true', 'yes', 'on', '1'].includes(value)) return true;
  if (['false', 'no', 'off', '0'].includes(value)) return false;
  throw usageError(`${flag} expects true or false, got '${raw}'`);
}

/** A positive integer flag such as --limit. */
export function parsePositiveInt(raw: string | undefined, flag: string): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || !Number.isSafeInteger(n) || n < 1) throw usageError(`${flag} expects a positive integer, got '${raw}'`);
  return n;
}

/**
 * The action word of a command group (`coffer mcp <action> ...`) and the rest of the line:
 * the first word that is neither an option nor the value of one. `valueOptions` names the
 * options that take a value (so `--description x add` does not take `x` for the action).
 */
export function splitAction(argv: string[], valueOptions: Iterable<string>): { action: string | undefined; rest: string[] } {
  const takesValue = new Set(['home', ...valueOptions]);
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i]!;
    if (word === '--') break;
    if (word.startsWith('-') && word.length > 1) {
      if (word.startsWith('--') && !word.includes('=') && takesValue.has(word.slice(2))) i++;
      continue;
    }
    return { action: word, rest: [...argv.slice(0, i), ...argv.slice(i + 1)] };
  }
  return { action: undefined, rest: argv };
}

/** The global --verbose, wherever it is on the line (before a `--`). */
export function isVerbose(argv: string[]): boolean {
  const end = argv.indexOf('--');
  return (end === -1 ? argv : argv.slice(0, end)).includes('--verbose');
}
