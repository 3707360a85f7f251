// `coffer mcp ...`: the upstream servers registered with the daemon. This file has
// the group and the server actions (add, list, show, update, remove, enable,
// disable); capabilities, refresh and test are in mcp-cap.ts, the invocation log in
// mcp-invocations.ts, import in mcp-import.ts.
import type { TransportConfig } from '../../protocol/server-config.js';
import { expectPositionals, parseBooleanValue, parseKeyValues } from '../args.js';
import { actionGroup, defineAction, type Command } from '../command.js';
import { EXIT } from '../exit-codes.js';
import { CliError, printFields, printJson, printLine, printMessage, printTable, usageError } from '../output.js';
import { splitCommandLine } from '../split.js';
import { authAction } from './mcp-auth.js';
import { capActions } from './mcp-cap.js';
import { clientConfigAction } from './mcp-client-config.js';
import { importAction } from './mcp-import.js';
import { invocationsAction } from './mcp-invocations.js';
import { describeTransport, serverPath, type Server } from './mcp-shared.js';

const transportOptions = {
  stdio: { type: 'string' },
  http: { type: 'string' },
  sse: { type: 'string' },
  env: { type: 'string', multiple: true },
  header: { type: 'string', multiple: true },
} as const;

/** How the server appears downstream: its prefix and whether each client gets its own connection. */
const surfaceOptions = { namespace: { type: 'string' }, 'session-mode': { type: 'string' }, protocol: { type: 'string' } } as const;

function surfacePatch(values: { namespace?: string; 'session-mode'?: string; protocol?: string }): Record<string, unknown> {
  const patch: Record<string, unknown> = {};
  if (values.namespace !== undefined) patch.namespace = values.namespace;
  // The server validates the values and names the allowed ones.
  if (values['session-mode'] !== undefined) patch.session_mode = values['session-mode'];
  if (values.protocol !== undefined) patch.protocol = values.protocol;
  return patch;
}

const add = defineAction(
  'add',
  `add NAME (--stdio "CMD ARGS" | --http URL | --sse URL) [--env K=V]... [--header K=V]...
           [--no-auto-enable] [--description TEXT] [--namespace NS] [--session-mode shared|per_session]
           [--protocol auto|2025-11-25|2026-07-28] [--json]
      Register an upstream server. --stdio is split like a shell line (quotes
      respected, nothing expanded); --env only with --stdio, --header only with
      --http (Streamable HTTP) or --sse. New capabilities are enabled as they
      appear unless --no-auto-enable. --namespace prefixes its names (default:
      NAME; "" keeps them unprefixed). --protocol: the MCP era to speak (auto, the
      default, probes with server/discover and falls back to initialize).
      Exit 5 if the name is taken, 6 if invalid.`,
  { ...transportOptions, ...surfaceOptions, json: { type: 'boolean' }, 'no-auto-enable': { type: 'boolean' }, description: { type: 'string' } },
  async (positionals, values, { api }) => {
    const [name] = expectPositionals(positionals, ['NAME']);
    const chosen = chosenTransport(values);
    if (!chosen) throw usageError('give exactly one of --stdio "CMD ARGS", --http URL, --sse URL');
    const body = {
      name,
      description: values.description ?? '',
      enabled: true,
      transport: newTransport(chosen, parseKeyValues(values.env, '--env'), parseKeyValues(values.header, '--header')),
      auto_enable_new_capabilities: !values['no-auto-enable'],
      ...surfacePatch(values),
    };
    const server = await api().post<Server>('/servers', body);
    for (const warning of server.warnings ?? []) printMessage(`warning: ${warning}`);
    if (values.json) printJson({ server });
    else printLine(`added server '${server.name}' (${describeTransport(server.transport)})`);
    return EXIT.OK;
  },
);

const list = defineAction(
  'list',
  `list [--json]
      Registered servers with their health.`,
  { json: { type: 'boolean' } },
  async (positionals, values, { api }) => {
    expectPositionals(positionals, []);
    const { servers } = await api().get<{ servers: Server[] }>('/servers');
    if (values.json) printJson({ servers });
    else if (servers.length === 0) printLine('no servers registered (add one with `coffer mcp add` or `coffer mcp import`)');
    else {
      printTable([
        ['NAME', 'ENABLED', 'HEALTH', 'TRANSPORT'],
        ...servers.map((s) => [s.name, s.enabled ? 'yes' : 'no', s.health.state, describeTransport(s.transport)]),
      ]);
    }
    return EXIT.OK;
  },
);

const show = defineAction(
  'show',
  `show NAME [--json]
      One server's configuration and health (env and header values redacted).`,
  { json: { type: 'boolean' } },
  async (positionals, values, { api }) => {
    const [name] = expectPositionals(positionals, ['NAME']);
    const server = await api().get<Server>(serverPath(name!));
    if (values.json) printJson({ server });
    else printServer(server);
    return EXIT.OK;
  },
);

const update = defineAction(
  'update',
  `update NAME [--stdio "CMD ARGS" | --http URL | --sse URL] [--env K=V]... [--header K=V]...
           [--unset-env KEY]... [--unset-header KEY]... [--auto-enable | --no-auto-enable]
           [--description TEXT] [--enabled true|false] [--namespace NS] [--session-mode MODE]
           [--protocol auto|2025-11-25|2026-07-28] [--json]
      Change a registered server; what is not given stays. --env/--header set
      those keys and keep the others (--unset-env/--unset-header remove one).
      A new transport of another type replaces the old one, env or headers
      included. Changing the transport, the session mode or the protocol
      restarts the server's connection; its capability preferences stay.
      Exit 4 if unknown, 6 if the result is invalid.`,
  {
    ...transportOptions,
    'unset-env': { type: 'string', multiple: true },
    'unset-header': { type: 'string', multiple: true },
    'auto-enable': { type: 'boolean' },
    'no-auto-enable': { type: 'boolean' },
    description: { type: 'string' },
    enabled: { type: 'string' },
    ...surfaceOptions,
    json: { type: 'boolean' },
  },
  async (positionals, values, { api }) => {
    const [name] = expectPositionals(positionals, ['NAME']);
    const patch: Record<string, unknown> = surfacePatch(values);
    if (values.description !== undefined) patch.description = values.description;
    if (values.enabled !== undefined) patch.enabled = parseBooleanValue(values.enabled, '--enabled');
    if (values['auto-enable'] && values['no-auto-enable']) throw usageError('give --auto-enable or --no-auto-enable, not both');
    if (values['auto-enable']) patch.auto_enable_new_capabilities = true;
    if (values['no-auto-enable']) patch.auto_enable_new_capabilities = false;
    const chosen = chosenTransport(values, true);
    const secrets: SecretEdits = {
      env: parseKeyValues(values.env, '--env'),
      headers: parseKeyValues(values.header, '--header'),
      unsetEnv: values['unset-env'] ?? [],
      unsetHeaders: values['unset-header'] ?? [],
    };
    const touchesSecrets = [secrets.env, secrets.headers].some((map) => Object.keys(map).length > 0) || secrets.unsetEnv.length + secrets.unsetHeaders.length > 0;
    if (chosen === null && !touchesSecrets && Object.keys(patch).length === 0) {
      throw usageError('nothing to update: give a transport, --env, --header, --description, --enabled, --namespace, --session-mode or --[no-]auto-enable');
    }
    if (chosen !== null || touchesSecrets) {
      const current = await api().get<Server>(serverPath(name!));
      patch.transport = transportPatch(name!, current.transport, chosen, secrets);
    }
    const server = await api().patch<Server>(serverPath(name!), patch);
    for (const warning of server.warnings ?? []) printMessage(`warning: ${warning}`);
    if (values.json) printJson({ server });
    else printLine(`updated server '${server.name}' (${Object.keys(patch).map((key) => key.replaceAll('_', '-')).join(', ')})`);
    return EXIT.OK;
  },
);

const remove = defineAction(
  'remove',
  `remove NAME [--json]
      Unregister a server; its capability preferences go with it.`,
  { json: { type: 'boolean' } },
  async (positionals, values, { api }) => {
    const [name] = expectPositionals(positionals, ['NAME']);
    await api().delete(serverPath(name!));
    if (values.json) printJson({ removed: name });
    else printLine(`removed server '${name}'`);
    return EXIT.OK;
  },
);

function switchAction(verb: 'enable' | 'disable') {
  return defineAction(
    verb,
    `${verb} NAME [--json]
      ${verb === 'enable' ? 'Turn a whole server on (its connection starts).' : 'Turn a whole server off: it offers no capabilities; its preferences stay.'}`,
    { json: { type: 'boolean' } },
    async (positionals, values, { api }) => {
      const [name] = expectPositionals(positionals, ['NAME']);
      const server = await api().post<Server>(`${serverPath(name!)}/${verb}`);
      if (values.json) printJson({ server });
      else printLine(`${verb}d server '${server.name}'`);
      return EXIT.OK;
    },
  );
}

type TransportFlags = { stdio?: string; http?: string; sse?: string; env?: string[]; header?: string[] };
type ChosenTransport = { type: 'stdio'; command: string; args: string[] } | { type: 'http' | 'sse'; url: string };

/** The one transport flag given (null for none, if allowed), checked against --env/--header. */
function chosenTransport(values: TransportFlags, optional = false): ChosenTransport | null {
  const chosen = (['stdio', 'http', 'sse'] as const).filter((flag) => values[flag] !== undefined);
  if (chosen.length > 1 || (chosen.length === 0 && !optional)) throw usageError('give exactly one of --stdio "CMD ARGS", --http URL, --sse URL');
  if (chosen.length === 0) return null;
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
    return { type: 'stdio', command, args };
  }
  if (values.env) throw usageError('--env only applies to --stdio');
  const type = chosen[0] as 'http' | 'sse';
  return { type, url: values[type]! };
}

function newTransport(chosen: ChosenTransport, env: Record<string, string>, headers: Record<string, string>): TransportConfig {
  return chosen.type === 'stdio' ? { ...chosen, env, cwd: null } : { ...chosen, headers };
}

interface SecretEdits {
  env: Record<string, string>;
  headers: Record<string, string>;
  unsetEnv: string[];
  unsetHeaders: string[];
}

/**
 * The `transport` of a PATCH. The API replaces env/headers as a whole and keeps a stored value
 * for a "[redacted]" one, so the stored keys are sent back redacted beside the changed ones.
 */
function transportPatch(name: string, current: TransportConfig, chosen: ChosenTransport | null, edits: SecretEdits): Record<string, unknown> {
  const type = chosen?.type ?? current.type;
  const [own, foreign, ownFlag, foreignFlag] =
    type === 'stdio'
      ? ([{ set: edits.env, unset: edits.unsetEnv }, { set: edits.headers, unset: edits.unsetHeaders }, 'env', 'header'] as const)
      : ([{ set: edits.headers, unset: edits.unsetHeaders }, { set: edits.env, unset: edits.unsetEnv }, 'header', 'env'] as const);
  if (Object.keys(foreign.set).length > 0 || foreign.unset.length > 0) {
    throw new CliError(
      EXIT.INVALID_INPUT,
      'INVALID_INPUT',
      `--${foreignFlag} and --unset-${foreignFlag} do not apply to server '${name}', which uses ${type}` +
        (chosen ? '' : ` (use --${ownFlag}, or change its transport with --stdio, --http or --sse)`),
    );
  }
  const sameType = current.type === type;
  const stored = !sameType ? {} : current.type === 'stdio' ? current.env : current.headers;
  const map: Record<string, string> = { ...stored, ...own.set };
  for (const key of own.unset) {
    if (!Object.hasOwn(map, key)) throw new CliError(EXIT.INVALID_INPUT, 'INVALID_INPUT', `server '${name}' has no ${ownFlag} key '${key}'`);
    delete map[key];
  }
  const secretsTouched = Object.keys(own.set).length > 0 || own.unset.length > 0;
  const mapField = type === 'stdio' ? 'env' : 'headers';
  // Same type: fields merge over the stored ones. Another type: the whole new transport.
  const patch: Record<string, unknown> = sameType ? { ...(chosen ?? {}), type } : { ...newTransport(chosen!, {}, {}) };
  if (secretsTouched || !sameType) patch[mapField] = map;
  return patch;
}

function printServer(server: Server): void {
  const { transport } = server;
  const keys = (values: Record<string, string>): string => Object.keys(values).join(' ') || '-';
  const health = server.health.last_error ? `${server.health.state} (last error: ${server.health.last_error})` : server.health.state;
  printFields([
    ['name', server.name],
    ['description', server.description || '-'],
    ['enabled', server.enabled ? 'yes' : 'no'],
    ['transport', describeTransport(transport)],
    ...(transport.type === 'stdio'
      ? ([['env keys', keys(transport.env)], ['cwd', transport.cwd ?? '-']] as Array<[string, string]>)
      : ([['header keys', keys(transport.headers)]] as Array<[string, string]>)),
    ['auto-enable', server.auto_enable_new_capabilities ? 'yes' : 'no'],
    ['namespace', server.namespace === '' ? '"" (unprefixed)' : server.namespace],
    ['session mode', server.session_mode],
    ['protocol', `${server.protocol}${server.health.protocol_version ? ` (speaking ${server.health.protocol_version}, ${server.health.era} era)` : ''}`],
    ['timeouts', `connect ${server.timeouts.connect_ms} ms, request ${server.timeouts.request_ms} ms, list deadline ${server.timeouts.list_deadline_ms} ms`],
    ['health', health],
  ]);
}

const actions = [add, list, show, update, remove, switchAction('enable'), switchAction('disable'), ...capActions, authAction, invocationsAction, importAction, clientConfigAction];
const group = actionGroup('coffer mcp', actions);

export const mcpCommand: Command = {
  name: 'mcp',
  summary: `upstream MCP servers: ${[...new Set(actions.map((action) => action.name))].join(', ')}`,
  usage: [
    'Usage: coffer mcp <action> ... [--home DIR]',
    '',
    actions.map((action) => '  ' + action.usage).join('\n\n'),
    '',
    'Env and header values are never shown: the daemon answers them redacted.',
    '`coffer mcp <action> --help` shows one action.',
  ].join('\n'),
  helpFor: (argv) => group.helpFor(argv),
  run: (argv) => group.run(argv),
};
