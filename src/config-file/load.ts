// Reading a config file into server configs: parse (YAML or JSON), read the
// ${VAR} references, validate with the API's schema. Every refusal is a
// CONFIG_FILE_INVALID naming the file and, per problem, its line and column.
import { closeSync, openSync, readSync } from 'node:fs';
import type { z } from 'zod';
import { CofferError, messageOf } from '../protocol/errors.js';
import type { ServerConfig } from '../protocol/server-config.js';
import type { ToolsetSpec } from '../protocol/toolsets.js';
import { fieldOf } from '../registry/server-config.js';
import { othersControl } from './file-trust.js';
import { configFileSchema } from './schema.js';
import { FileSyntaxError, formatOf, parseSource, type FileIssue, type SourceDocument } from './source.js';
import { expandVariables, type DeclaredSecrets, type PathIssue } from './variables.js';

export interface LoadedConfig {
  path: string;
  /** The text it was read from: a rewrite with the same text is no change. */
  text: string;
  servers: ServerConfig[];
  toolsets: ToolsetSpec[];
  /** By server name: the secret fields written with references. */
  declared: Map<string, DeclaredSecrets>;
  /** A problem found later (against the running registry), placed in the file. */
  issueAt(path: readonly PropertyKey[], message: string): FileIssue;
}

/** "line 3, column 7: servers[0].name: must not be empty" */
export const describeIssue = (issue: FileIssue): string => `line ${issue.line}, column ${issue.column}: ${issue.field === '(file)' ? '' : `${issue.field}: `}${issue.message}`;

export class ConfigFileError extends CofferError {
  constructor(
    readonly path: string,
    readonly errors: FileIssue[],
  ) {
    const more = errors.length > 1 ? ` (and ${errors.length - 1} more)` : '';
    super('CONFIG_FILE_INVALID', `config file ${path} refused: ${describeIssue(errors[0]!)}${more}; nothing was changed`, { path, errors });
  }
}

function located(source: SourceDocument, issues: { path: readonly PropertyKey[]; message: string; key?: boolean }[]): FileIssue[] {
  return issues.map(({ path, message, key }) => ({ ...source.locate(path, key), field: fieldOf(path), message }));
}

/** zod's issues in the file's terms: an unknown field points at its key. */
function schemaIssues(issues: z.core.$ZodIssue[]): { path: readonly PropertyKey[]; message: string; key?: boolean }[] {
  return issues.flatMap((issue) =>
    issue.code === 'unrecognized_keys'
      ? issue.keys.map((key) => ({ path: [...issue.path, key], message: 'is not a known field', key: true }))
      : [{ path: issue.path, message: issue.message }],
  );
}

const byPosition = (a: FileIssue, b: FileIssue): number => a.line - b.line || a.column - b.column;

/** The file's text as server configs, or ConfigFileError. Pure but for `env`. */
export function parseConfigText(path: string, text: string, env: NodeJS.ProcessEnv): LoadedConfig {
  let source: SourceDocument;
  try {
    source = parseSource(text, formatOf(path));
  } catch (error) {
    if (error instanceof FileSyntaxError) throw new ConfigFileError(path, [error.issue]);
    throw error;
  }
  const expanded = expandVariables(source.value, env);
  const parsed = configFileSchema.safeParse(expanded.value);
  const issues: PathIssue[] | { path: readonly PropertyKey[]; message: string }[] = [...expanded.issues, ...(parsed.success ? [] : schemaIssues(parsed.error.issues))];
  if (issues.length > 0 || !parsed.success) throw new ConfigFileError(path, located(source, issues).sort(byPosition));
  const servers = parsed.data.servers;
  return {
    path,
    text,
    servers,
    toolsets: parsed.data.toolsets,
    declared: new Map(servers.map((server, index) => [server.name, expanded.declared[index]!])),
    issueAt: (at, message) => located(source, [{ path: at, message }])[0]!,
  };
}

const fileRefusal = (path: string, message: string): ConfigFileError => new ConfigFileError(path, [{ line: 1, column: 1, field: '(file)', message }]);

/** Far more than any config file holds; parsing runs on the daemon's one thread (about a second per MiB), so more is refused unread. */
const MAX_CONFIG_BYTES = 1024 * 1024;

/** The file's first MAX_CONFIG_BYTES + 1 bytes at most (a pipe or a file that grows meanwhile included), as text; null when larger. */
function boundedText(path: string): string | null {
  const fd = openSync(path, 'r');
  try {
    const buffer = Buffer.alloc(MAX_CONFIG_BYTES + 1);
    let length = 0;
    for (let read = -1; read !== 0 && length < buffer.length; length += read) read = readSync(fd, buffer, length, buffer.length - length, null);
    return length > MAX_CONFIG_BYTES ? null : buffer.toString('utf8', 0, length);
  } finally {
    closeSync(fd);
  }
}

/** The file's text, once no other user (but root) could have written it; `owner`: this process's user. */
export function readConfigText(path: string, owner = process.getuid?.()): string {
  let problem: string | null;
  let text: string | null;
  try {
    problem = owner === undefined ? null : othersControl(path, owner);
    text = boundedText(path);
  } catch (error) {
    throw fileRefusal(path, `cannot be read: ${messageOf(error)}`);
  }
  if (problem) throw fileRefusal(path, problem);
  if (text === null) throw fileRefusal(path, 'is larger than 1 MiB, more than any config file needs: is --config the right file?');
  return text;
}

export function loadConfigFile(path: string, env: NodeJS.ProcessEnv = process.env): LoadedConfig {
  return parseConfigText(path, readConfigText(path), env);
}
