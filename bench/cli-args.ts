// Command-line options of the bench entry points (run.ts, soak.ts): --help
// prints the usage (exit 0); an unknown or malformed option prints the reason
// and the usage (exit 2) instead of a stack trace.
import { parseArgs, type ParseArgsConfig } from 'node:util';

type Options = NonNullable<ParseArgsConfig['options']>;

/** `check` answers a problem with the parsed values (or null). */
export function parseOrExit<T extends Options>(options: T, usage: string, check: (values: ReturnType<typeof parseArgs<{ options: T }>>['values']) => string | null = () => null) {
  const fail = (message: string): never => {
    process.stderr.write(`${message}\n${usage}\n`);
    process.exit(2);
  };
  let values: ReturnType<typeof parseArgs<{ options: T }>>['values'];
  try {
    values = parseArgs({ options: { ...options, help: { type: 'boolean', default: false } } }).values as typeof values;
  } catch (error) {
    return fail((error as Error).message);
  }
  if ((values as { help?: boolean }).help) {
    process.stdout.write(`${usage}\n`);
    process.exit(0);
  }
  const problem = check(values);
  if (problem !== null) fail(problem);
  return values;
}

/** A positive integer option, or undefined when not given. */
export function positiveInteger(text: string | undefined): number | undefined | null {
  if (text === undefined) return undefined;
  const value = Number(text);
  return Number.isInteger(value) && value > 0 ? value : null;
}
