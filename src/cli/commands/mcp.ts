// `coffer mcp add|list|show|remove`: the upstream servers registered with the daemon.
import { resolveHome } from '../../daemon/daemon-file.js';
import type { ServerConfig, TransportConfig } from '../../protocol/server-config.js';
import { ApiClient } from '../api-client.js';
import { expectPositionals, parseCommandArgs, parseKeyValues, type ParsedArgs } from '../args.js';
import type { Command } from '../command.js';
import { EXIT, type ExitCode } from '../exit-codes.js';
import { printFields, printJson, printLine, usageError } from '../output.js';
import { joinCommandLine, splitCommandLine } from '../split.js';

const usage = `Usage: coffer mcp <action> ... [--home DIR]

  add NAME (--stdio "CMD ARGS" | --http URL | --sse URL) [--env K=V]... [--header K=V]...
           [--no-auto-enable] [--description TEXT] [--json]
                     register an upstream server; --stdio is split like a shell line
                     (quotes respected, nothing expanded); --env only with --stdio,
                     --header only with --http/--sse
  list [--json]      registered servers with their health
  show NAME [--json] one server's configuration and health
  remove NAME        unregister a server (its capability preferences go with it)

Env and header values are never shown: the daemon answers them redacted.`;

interface Health {
  state: string;
  last_error?: string | null;
}

type Server = ServerConfig & { health: Health };

const options = {
  json: { type: 'boolean' },
  stdio: { type: 'string' },
  http: { type: 'string' },
  sse: { type: 'string' },
  env: { type: 'string', multiple: true },
  header: { type: 'string', multiple: true },
  'no-auto-enable': { type: 'boolean' },
  description: { type: 'string' },
} as const;

type Values = ParsedArgs<typeof options>['values'];
type Handler = (api: () => ApiClient, positionals: string[], values: Values) => Promise<ExitCode>;

/** Flags that only `add` takes; any other action rejects them. */
const ADD_ONLY = ['stdio', 'http', 'sse', 'env', 'header', 'no-auto-enable', 'description'] as const;

const serverPath = (name: string): string => `/servers/${encodeURIComponent(name)}`;

const handlers: Record<string, Handler> = {
  async add(api, positionals, values) {
    const [name] = expectPositionals(positionals, ['NAME']);
    const body = {
      name,
      description: values.description ?? '',
      enabled: true,
      transport: transportFromFlags(values),
      auto_enable_new_capabilities: !values['no-auto-enable'],
    };
    const server = await api().post<Server>('/servers', body);
    if (values.json) printJson({ server });
    else printLine(`added server '${server.name}' (${describeTransport(server.transport)})`);
    return EXIT.OK;
  },

  async list(api, positionals, values) {
    expectPositionals(positionals, []);
    const { servers } = await api().get<{ servers: Server[] }>('/servers');
    if (values.json) printJson({ servers });
    else if (servers.length === 0) printLine('no servers registered (add one with `coffer mcp add`)');
    else printTable(servers);
    return EXIT.OK;
  },

  async show(api, positionals, values) {
    const [name] = expectPositionals(positionals, ['NAME']);
    const server = await api().get<Server>(serverPath(name!));
    if (values.json) printJson({ server });
    else printServer(server);
    return EXIT.OK;
  },

  async remove(api, positionals, values) {
    const [name] = expectPositionals(positionals, ['NAME']);
    await api().delete(serverPath(name!));
    if (values.json) printJson({ removed: name });
    else printLine(`removed server '${name}'`);
    return EXIT.OK;
  },
};

function transportFromFlags(values: Values): TransportConfig {
  const chosen = (['stdio', 'http', 'sse'] as const).filter((flag) => values[flag] !== undefined);
  if (chosen.length !== 1) throw usageError('give exactly one of --stdio "CMD ARGS", --http URL, --sse URL');
  if (values.stdio !== undefined) {
    if (values.header) throw usageError('--header only applies to --http and --sse');
    let words: string[];
    try {
      words = splitCommandLine(values.stdio);
    } catch (error) {
      throw usageError(`--stdio: ${(error as Error).message}`);
    }
    const [command, ...args] = words;
    if (command === undefined) throw usageError('--stdio needs a command');
    return { type: 'stdio', command, args, env: parseKeyValues(values.env, '--env'), cwd: null };
  }
  if (values.env) throw usageError('--env only applies to --stdio');
  const type = chosen[0] as 'http' | 'sse';
  return { type, url: values[type]!, headers: parseKeyValues(values.header, '--header') };
}

function describeTransport(transport: TransportConfig): string {
  return transport.type === 'stdio'
    ? `stdio: ${joinCommandLine([transport.command, ...transport.args])}`
    : `${transport.type}: ${transport.url}`;
}

function describeHealth(health: Health): string {
  return health.last_error ? `${health.state} (last error: ${health.last_error})` : health.state;
}

function printTable(servers: Server[]): void {
  const rows = [
    ['NAME', 'ENABLED', 'HEALTH', 'TRANSPORT'],
    ...servers.map((s) => [s.name, s.enabled ? 'yes' : 'no', s.health.state, describeTransport(s.transport)]),
  ];
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  for (const row of rows) printLine(row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]!))).join('  '));
}

function printServer(server: Server): void {
  const { transport } = server;
  const keys = (values: Record<string, string>): string => Object.keys(values).join(' ') || '-';
  printFields([
    ['name', server.name],
    ['description', server.description || '-'],
    ['enabled', server.enabled ? 'yes' : 'no'],
    ['transport', describeTransport(transport)],
    ...(transport.type === 'stdio'
      ? ([['env keys', keys(transport.env)], ['cwd', transport.cwd ?? '-']] as Array<[string, string]>)
      : ([['header keys', keys(transport.headers)]] as Array<[string, string]>)),
    ['auto-enable', server.auto_enable_new_capabilities ? 'yes' : 'no'],
    ['timeouts', `connect ${server.timeouts.connect_ms} ms, request ${server.timeouts.request_ms} ms, list deadline ${server.timeouts.list_deadline_ms} ms`],
    ['health', describeHealth(server.health)],
  ]);
}

export const mcpCommand: Command = {
  name: 'mcp',
  summary: 'add, list, show or remove upstream MCP servers',
  usage,
  async run(argv) {
    const { values, positionals } = parseCommandArgs(argv, options);
    const [action, ...rest] = positionals;
    if (action === undefined) throw usageError('missing action (add, list, show or remove)');
    if (!Object.hasOwn(handlers, action)) throw usageError(`unknown mcp action '${action}'`);
    if (action !== 'add') {
      const misplaced = ADD_ONLY.find((flag) => values[flag] !== undefined);
      if (misplaced) throw usageError(`--${misplaced} only applies to \`coffer mcp add\``);
    }
    const home = resolveHome(values.home);
    // Lazy: usage errors are reported before looking for a daemon.
    return handlers[action]!(() => ApiClient.forHome(home), rest, values);
  },
};
