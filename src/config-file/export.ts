// The running registry as a config file (pure): every secret field is written
// as a ${VAR} reference — the one the file used when the server came from it,
// else a name made from the server and the key — never as its value. Fields at
// their defaults are left out, so the file reads like one a person wrote.
import { DEFAULT_TIMEOUTS, type ServerConfig } from '../protocol/server-config.js';
import { toolsetOptions, type ToolsetRecord } from '../protocol/toolsets.js';
import { maskArgs, REDACTED } from '../registry/secret-args.js';
import { CONFIG_FILE_VERSION } from './schema.js';
import type { DeclaredSecrets } from './variables.js';

export interface ExportedConfig {
  document: { version: number; servers: Record<string, unknown>[]; toolsets?: Record<string, unknown>[] };
  /** Every variable the file reads: set them in coffer's environment before `coffer serve --config`. */
  variables: string[];
}

const REFERENCES = /(?<!\$)\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** Text that must read back as itself: a `${` in it is written `$${`. */
const literal = (text: string): string => text.replaceAll('${', '$${');

/** `github` + `API-Key` → `GITHUB_API_KEY`, unique within the export. */
function variableName(used: Set<string>, ...parts: string[]): string {
  const base = parts.join('_').toUpperCase().replace(/[^A-Z0-9_]+/g, '_').replace(/^(?=[0-9])/, '_');
  let name = base;
  for (let n = 2; used.has(name); n++) name = `${base}_${n}`;
  used.add(name);
  return name;
}

function secretMap(server: string, map: Record<string, string>, declared: Record<string, string> | undefined, used: Set<string>): Record<string, string> {
  return Object.fromEntries(Object.keys(map).map((key) => [key, declared?.[key] ?? `\${${variableName(used, server, key)}}`]));
}

/** Each argument as written in the file, else its mask with the secret part as a reference (unmasked arguments are not secrets). */
function exportArgs(server: string, args: string[], declared: (string | null)[] | undefined, used: Set<string>): string[] {
  const masked = maskArgs(args);
  return masked.map((arg, index) => declared?.[index] ?? literal(arg).replaceAll(REDACTED, () => `\${${variableName(used, server, 'arg', String(index + 1))}}`));
}

function exportTransport(config: ServerConfig, declared: DeclaredSecrets | undefined, used: Set<string>): Record<string, unknown> {
  const transport = config.transport;
  if (transport.type !== 'stdio') {
    const headers = secretMap(config.name, transport.headers, declared?.headers, used);
    // Every value of the OAuth client is sealed, as a header value is.
    const oauth = secretMap(config.name, transport.oauth ?? {}, declared?.oauth, used);
    return { type: transport.type, url: literal(transport.url), ...(Object.keys(headers).length > 0 ? { headers } : {}), ...(Object.keys(oauth).length > 0 ? { oauth } : {}) };
  }
  const args = exportArgs(config.name, transport.args, declared?.args, used);
  const env = secretMap(config.name, transport.env, declared?.env, used);
  return {
    type: 'stdio',
    command: literal(transport.command),
    ...(args.length > 0 ? { args } : {}),
    ...(Object.keys(env).length > 0 ? { env } : {}),
    ...(transport.cwd !== null ? { cwd: literal(transport.cwd) } : {}),
  };
}

function exportServer(config: ServerConfig, declared: DeclaredSecrets | undefined, used: Set<string>): Record<string, unknown> {
  const timeouts = Object.fromEntries(Object.entries(config.timeouts).filter(([key, value]) => DEFAULT_TIMEOUTS[key as keyof typeof DEFAULT_TIMEOUTS] !== value));
  return {
    name: config.name,
    ...(config.description !== '' ? { description: literal(config.description) } : {}),
    ...(!config.enabled ? { enabled: false } : {}),
    ...(config.namespace !== config.name ? { namespace: config.namespace } : {}),
    ...(config.session_mode !== 'shared' ? { session_mode: config.session_mode } : {}),
    ...(!config.auto_enable_new_capabilities ? { auto_enable_new_capabilities: false } : {}),
    ...(Object.keys(timeouts).length > 0 ? { timeouts } : {}),
    transport: exportTransport(config, declared, used),
  };
}

/** A toolset holds no secret: written as stored, defaults left out. */
function exportToolset({ name, description, servers, mode, pinned }: ToolsetRecord): Record<string, unknown> {
  return { name, ...(description !== '' ? { description } : {}), servers, ...toolsetOptions({ mode, pinned }) };
}

export function exportConfig(configs: readonly ServerConfig[], toolsets: readonly ToolsetRecord[], declared: (server: string) => DeclaredSecrets | undefined): ExportedConfig {
  const used = new Set<string>();
  const servers = [...configs].sort((a, b) => (a.name < b.name ? -1 : 1)).map((config) => exportServer(config, declared(config.name), used));
  const variables = new Set<string>();
  for (const match of JSON.stringify(servers).matchAll(REFERENCES)) variables.add(match[1]!);
  const sets = toolsets.map(exportToolset);
  return { document: { version: CONFIG_FILE_VERSION, servers, ...(sets.length > 0 ? { toolsets: sets } : {}) }, variables: [...variables].sort() };
}
