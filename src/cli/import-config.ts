// Reading MCP client config files for `coffer mcp import` (pure: text in,
// server configs and reasons out). Understood shapes:
//   Claude Desktop, Cursor:  {"mcpServers": {NAME: {command, args, env} | {url, headers}}}
//   Claude Code .mcp.json:   the same, plus type "stdio" | "http" | "sse"
//   VS Code .vscode/mcp.json {"servers": {NAME: {type, command, args, env, cwd} | {type, url, headers}}, "inputs": [...]}
//   VS Code settings.json    {"mcp": {"servers": {...}}}
// VS Code files may carry comments and trailing commas (JSONC). Nothing is ever
// expanded: an entry using a variable (${input:...}, ${env:...}, ${VAR}) is skipped
// with the reason, as is one with a field coffer cannot honour (envFile, ...).
import { FileSyntaxError, parseSource } from '../config-file/source.js';
import { isServerName } from '../protocol/server-config.js';
import { parseServerConfig, type FieldError } from '../registry/server-config.js';

export type ImportFormat = 'mcpServers' | 'vscode' | 'vscode-settings';

export type SkipReason = 'already_exists' | 'invalid_name' | 'unsupported' | 'invalid_config';

/** The body of POST /servers for one importable entry. */
export interface ImportedServer {
  name: string;
  description: string;
  enabled: boolean;
  transport: Record<string, unknown>;
  auto_enable_new_capabilities: boolean;
}

export interface ImportEntry {
  /** The name as written in the file. */
  name: string;
  /** Set when the entry can be registered. */
  config?: ImportedServer;
  /** Set when it cannot. */
  skip?: { reason: SkipReason; message: string; suggested_name?: string; errors?: FieldError[] };
  /** Fields that were dropped because they only mean something to the client. */
  notes: string[];
}

export interface ParsedClientConfig {
  format: ImportFormat;
  entries: ImportEntry[];
}

export class ImportFileError extends Error {
  override name = 'ImportFileError';
}

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Fields a coffer server config is made from. */
const TRANSPORT_FIELDS = ['type', 'command', 'args', 'env', 'cwd', 'url', 'serverUrl', 'headers'];
const MAPPED_FIELDS = ['description', 'disabled', 'enabled'];
/** Client-side settings with no meaning behind a gateway: dropped, with a note. */
const CLIENT_ONLY_FIELDS = ['autoApprove', 'alwaysAllow', 'dev', 'gallery', 'version', 'timeout'];

const TYPE_ALIASES: Record<string, 'stdio' | 'http' | 'sse'> = {
  stdio: 'stdio',
  http: 'http',
  'streamable-http': 'http',
  streamable_http: 'http',
  streamableHttp: 'http',
  sse: 'sse',
};

/**
 * JSON with comments and trailing commas (JSONC as VS Code writes it), read as a config
 * file is (nesting bounded, a key written twice refused); the first problem with its line and column.
 */
export function parseJsonc(text: string): unknown {
  try {
    return parseSource(text, 'json').value;
  } catch (error) {
    if (error instanceof FileSyntaxError) throw new ImportFileError(error.message);
    throw error;
  }
}

/** A valid coffer server name close to `name` (invalid characters become '-', `__` becomes '_'). */
export function sanitiseServerName(name: string): string {
  const cleaned = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^A-Za-z0-9_.-]+/g, '-')
    .replace(/_{2,}/g, '_')
    .replace(/-{2,}/g, '-')
    .replace(/^[-.]+|[-.]+$/g, '')
    .slice(0, 64)
    .replace(/[-.]+$/g, '');
  return cleaned === '' ? 'server' : cleaned;
}

export function isValidServerName(name: string): boolean {
  return isServerName(name);
}

/** Every `${...}` in the string values of `value`, e.g. ['${input:token}']. */
function variablesIn(value: unknown): string[] {
  if (typeof value === 'string') return value.match(/\$\{[^}]*\}/g) ?? [];
  if (Array.isArray(value)) return value.flatMap(variablesIn);
  if (isObject(value)) return Object.values(value).flatMap(variablesIn);
  return [];
}

function describeVariable(variable: string): string {
  if (variable.startsWith('${input:')) return `${variable} (a VS Code input prompt)`;
  if (variable.startsWith('${env:') || /^\$\{[A-Za-z_][A-Za-z0-9_]*(:-[^}]*)?\}$/.test(variable)) return `${variable} (an environment variable)`;
  return variable;
}

/** The servers section of a parsed file, and which client shape it has. */
function serversSection(document: unknown): { format: ImportFormat; servers: Json } {
  if (!isObject(document)) throw new ImportFileError('the file is not a JSON object');
  const pick = (format: ImportFormat, value: unknown, where: string): { format: ImportFormat; servers: Json } => {
    if (!isObject(value)) throw new ImportFileError(`"${where}" must be an object of servers by name`);
    return { format, servers: value };
  };
  if (document.mcpServers !== undefined) return pick('mcpServers', document.mcpServers, 'mcpServers');
  if (document.servers !== undefined) return pick('vscode', document.servers, 'servers');
  if (isObject(document.mcp) && document.mcp.servers !== undefined) return pick('vscode-settings', document.mcp.servers, 'mcp.servers');
  throw new ImportFileError('found no "mcpServers" (Claude Desktop, Claude Code, Cursor), "servers" or "mcp.servers" (VS Code) section');
}

export interface ParseOptions {
  /**
   * Where a project-scoped file's stdio servers run when they name no cwd (Claude Code
   * and VS Code start them in the project directory; coffer would use its home).
   */
  projectDir?: string;
}

/** The project directory of a project-scoped config file (`.mcp.json`, `.vscode/mcp.json`), else undefined. */
export function projectDirOf(absolutePath: string): string | undefined {
  const parts = absolutePath.split('/');
  const base = parts.at(-1);
  if (base === '.mcp.json') return parts.slice(0, -1).join('/') || '/';
  if (base === 'mcp.json' && parts.at(-2) === '.vscode') return parts.slice(0, -2).join('/') || '/';
  return undefined;
}

function entry(name: string, raw: unknown, options: ParseOptions): ImportEntry {
  const notes: string[] = [];
  const skip = (reason: SkipReason, message: string, extra: Partial<NonNullable<ImportEntry['skip']>> = {}): ImportEntry => ({
    name,
    skip: { reason, message, ...extra },
    notes,
  });

  if (!isValidServerName(name)) {
    const suggested = sanitiseServerName(name);
    return skip(
      'invalid_name',
      `'${name}' is not a valid coffer server name (1-64 letters, digits, "_", "." or "-", no "__"); add it as '${suggested}' with \`coffer mcp add ${suggested} ...\``,
      { suggested_name: suggested },
    );
  }
  if (!isObject(raw)) return skip('invalid_config', 'the entry is not a JSON object');

  for (const field of Object.keys(raw)) {
    if (TRANSPORT_FIELDS.includes(field) || MAPPED_FIELDS.includes(field)) continue;
    if (CLIENT_ONLY_FIELDS.includes(field)) notes.push(`ignored '${field}' (a client-side setting)`);
    else return skip('unsupported', `uses '${field}', which coffer does not support`);
  }
  const variables = [...new Set(TRANSPORT_FIELDS.flatMap((field) => variablesIn(raw[field])))];
  if (variables.length > 0) {
    return skip('unsupported', `uses ${variables.map(describeVariable).join(', ')}; coffer never expands variables: add it with the values written out`);
  }

  const url = raw.url ?? raw.serverUrl;
  let type: 'stdio' | 'http' | 'sse';
  if (raw.type !== undefined) {
    const alias = typeof raw.type === 'string' ? TYPE_ALIASES[raw.type] : undefined;
    if (!alias) return skip('unsupported', `has transport type ${JSON.stringify(raw.type)}; coffer supports stdio, http and sse`);
    type = alias;
  } else if (raw.command !== undefined) {
    type = 'stdio';
  } else if (url !== undefined) {
    // Cursor infers the transport; an endpoint named /sse is the legacy one.
    type = typeof url === 'string' && /\/sse\/?$/.test(url.split(/[?#]/)[0]!) ? 'sse' : 'http';
  } else {
    return skip('invalid_config', 'has neither "command" nor "url"');
  }

  let transport: Record<string, unknown>;
  if (type === 'stdio') {
    if (url !== undefined || raw.headers !== undefined) return skip('invalid_config', 'a stdio server takes "command", "args", "env", not "url" or "headers"');
    let cwd = raw.cwd ?? null;
    if (cwd === null && options.projectDir !== undefined) {
      cwd = options.projectDir;
      notes.push(`runs in ${cwd} (the project directory, as its client would)`);
    }
    transport = { type, command: raw.command, args: raw.args ?? [], env: raw.env ?? {}, cwd };
  } else {
    if (raw.command !== undefined || raw.args !== undefined || raw.env !== undefined || raw.cwd !== undefined) {
      return skip('invalid_config', `an ${type} server takes "url" and "headers", not "command", "args", "env" or "cwd"`);
    }
    transport = { type, url, headers: raw.headers ?? {} };
  }

  let enabled = true;
  if (raw.disabled !== undefined) {
    if (typeof raw.disabled !== 'boolean') return skip('invalid_config', '"disabled" must be true or false');
    enabled = !raw.disabled;
  }
  if (raw.enabled !== undefined) {
    if (typeof raw.enabled !== 'boolean') return skip('invalid_config', '"enabled" must be true or false');
    enabled = enabled && raw.enabled;
  }
  if (raw.description !== undefined && typeof raw.description !== 'string') return skip('invalid_config', '"description" must be a string');

  const config: ImportedServer = {
    name,
    description: (raw.description as string | undefined) ?? '',
    enabled,
    transport,
    auto_enable_new_capabilities: true,
  };
  // The daemon's own validation, run here so nothing half-valid is sent.
  const parsed = parseServerConfig(config);
  if (!parsed.ok) {
    const errors = (parsed.error.details as { errors: FieldError[] }).errors;
    return skip('invalid_config', errors.map((e) => `${e.field}: ${e.message}`).join('; '), { errors });
  }
  return { name, config, notes };
}

/** Parses a client config file's text. Throws ImportFileError when it is not one. */
export function parseClientConfig(text: string, options: ParseOptions = {}): ParsedClientConfig {
  const { format, servers } = serversSection(parseJsonc(text));
  return { format, entries: Object.entries(servers).map(([name, raw]) => entry(name, raw, options)) };
}
