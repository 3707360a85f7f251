// How the CLI reports: results on stdout (only JSON with --json), messages and
// errors on stderr, and one error type that carries its exit code.
import { EXIT, type ExitCode } from './exit-codes.js';

export class CliError extends Error {
  constructor(
    readonly exitCode: ExitCode,
    readonly code: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
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
  process.stdout.write(line + '\n');
}

export function printMessage(line: string): void {
  process.stderr.write(line + '\n');
}

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

/** `error: <CODE>: <message>`, then one line per invalid field. */
export function formatError(error: CliError): string {
  const lines = [`error: ${error.code}: ${error.message}`];
  for (const { field, message } of fieldErrors(error.details)) lines.push(`  ${field}: ${message}`);
  if (error.exitCode === EXIT.USAGE) lines.push('run `coffer --help` for usage');
  return lines.join('\n');
}

/** Aligned `key: value` lines for human output. */
export function printFields(fields: Array<[string, string]>): void {
  const width = Math.max(...fields.map(([key]) => key.length)) + 2;
  for (const [key, value] of fields) printLine(`${(key + ':').padEnd(width)}${value}`);
}

/** Rows of cells as aligned columns (two spaces apart; the last column is not padded). */
export function formatTable(rows: string[][], indent = ''): string[] {
  const columns = Math.max(0, ...rows.map((row) => row.length));
  const widths = Array.from({ length: columns }, (_, column) => Math.max(...rows.map((row) => (row[column] ?? '').length)));
  return rows.map((row) => indent + row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]!))).join('  '));
}

export function printTable(rows: string[][], indent = ''): void {
  for (const line of formatTable(rows, indent)) printLine(line);
}
