// How the CLI reports: results on stdout (only JSON with --json), messages and
// errors on stderr, and one error type that carries its exit code. Human output
// quotes upstreams and clients (tool names, descriptions, errors): every path
// here escapes control characters, so none of that text can drive the terminal
// (set its title, clear it, write the clipboard). --json is printed exactly.
import { escapeControls } from '../protocol/untrusted-text.js';
import { EXIT, type ExitCode } from './exit-codes.js';

export class CliError extends Error {
  constructor(
    readonly exitCode: ExitCode,
    readonly code: string,
    message: string,
    readonly details?: unknown,
    /** What went wrong underneath (a connection failure): shown with --verbose. */
    cause?: unknown,
  ) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'CliError';
  }
}

export function usageError(message: string): CliError {
  return new CliError(EXIT.USAGE, 'USAGE', message);
}

export function printJson(value: unknown): void {
  process.stdout.write(JSON.stringify(value, null, 2) + '\n');
}

export function printLine(line: string): void {
  process.stdout.write(escapeControls(line) + '\n');
}

export function printMessage(line: string): void {
  process.stderr.write(escapeControls(line) + '\n');
}

/** One value inside a line (a cell, a field): a line break in it could forge a line of its own. */
const inline = (text: string): string => escapeControls(text, { lines: true });

interface FieldError {
  field: string;
  message: string;
}

function fieldErrors(details: unknown): FieldError[] {
  const errors = (details as { errors?: unknown } | null | undefined)?.errors;
  if (!Array.isArray(errors)) return [];
  return errors.filter(
    (e): e is FieldError => typeof e === 'object' && e !== null && typeof e.field === 'string' && typeof e.message === 'string',
  );
}

/** One line per link of an error's cause chain (`Error: connect ECONNREFUSED 127.0.0.1:7077`, ...). */
function causeLines(cause: unknown): string[] {
  const lines: string[] = [];
  const seen = new Set<unknown>();
  while (cause !== undefined && cause !== null && !seen.has(cause) && lines.length < 5) {
    seen.add(cause);
    if (cause instanceof Error) {
      const code = (cause as NodeJS.ErrnoException).code;
      lines.push(`cause: ${cause.name}${code !== undefined && !cause.message.includes(String(code)) ? ` [${code}]` : ''}: ${cause.message}`);
      // AggregateError (e.g. fetch trying 127.0.0.1 and ::1): each attempt.
      if (cause instanceof AggregateError) for (const inner of cause.errors) lines.push(`cause: ${inner instanceof Error ? `${inner.name}: ${inner.message}` : String(inner)}`);
      cause = cause.cause;
    } else {
      lines.push(`cause: ${typeof cause === 'string' ? cause : JSON.stringify(cause)}`);
      break;
    }
  }
  return lines;
}

/**
 * `error: <CODE>: <message>`, then one line per invalid field. `verbose` (the global
 * --verbose) adds the error's details as JSON and the underlying cause of a connection failure.
 */
export function formatError(error: CliError, verbose = false): string {
  const lines = [`error: ${error.code}: ${error.message}`];
  for (const { field, message } of fieldErrors(error.details)) lines.push(`  ${field}: ${message}`);
  if (verbose) {
    if (error.details !== undefined && error.details !== null) lines.push(`details: ${JSON.stringify(error.details, null, 2)}`);
    lines.push(...causeLines(error.cause));
  }
  if (error.exitCode === EXIT.USAGE) lines.push('run `coffer --help` for usage');
  return escapeControls(lines.join('\n'));
}

/** Aligned `key: value` lines for human output. */
export function printFields(fields: Array<[string, string]>): void {
  const width = Math.max(...fields.map(([key]) => key.length)) + 2;
  for (const [key, value] of fields) printLine(`${(key + ':').padEnd(width)}${inline(value)}`);
}

/** Rows of cells as aligned columns (two spaces apart; the last column is not padded). */
export function formatTable(cells: string[][], indent = ''): string[] {
  const rows = cells.map((row) => row.map(inline));
  const columns = Math.max(0, ...rows.map((row) => row.length));
  const widths = Array.from({ length: columns }, (_, column) => Math.max(...rows.map((row) => (row[column] ?? '').length)));
  return rows.map((row) => indent + row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]!))).join('  '));
}

export function printTable(rows: string[][], indent = ''): void {
  for (const line of formatTable(rows, indent)) printLine(line);
}
