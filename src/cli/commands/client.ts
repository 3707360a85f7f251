// `coffer client add|list|revoke`: the named credentials MCP clients present on
// /mcp. A token is printed once, when the client is added; the daemon keeps only
// its hash, so a lost token is replaced, not recovered.
import { expectPositionals } from '../args.js';
import { groupCommand, defineAction, type Command } from '../command.js';
import type { ApiClient } from '../api-client.js';
import { EXIT } from '../exit-codes.js';
import { printJson, printLine, printMessage, printTable, usageError } from '../output.js';

interface ClientInfo {
  name: string;
  created_at: string;
  /** The one toolset it sees; null: the whole surface. */
  toolset: string | null;
}

export const clientPath = (name: string): string => `/clients/${encodeURIComponent(name)}`;

/** POST /clients: the only answer that carries the token. */
export function addClient(api: ApiClient, name: string, toolset?: string): Promise<ClientInfo & { token: string }> {
  return api.post<ClientInfo & { token: string }>('/clients', toolset === undefined ? { name } : { name, toolset });
}

const add = defineAction(
  'add',
  `add NAME [--toolset TOOLSET] [--json]
      A new client credential; prints its token once (only a hash is kept).
      Give it to the client as 'Authorization: Bearer <token>', or print a
      whole config with 'coffer mcp client-config'. Exit 5 if NAME exists.
      --toolset: the client sees only that toolset, on /mcp too.`,
  { toolset: { type: 'string' }, json: { type: 'boolean' } },
  async (positionals, values, { api }) => {
    const [name] = expectPositionals(positionals, ['NAME']);
    const client = await addClient(api(), name!, values.toolset);
    if (values.json) printJson({ client });
    else {
      printLine(client.token);
      printMessage(`client '${client.name}' added; the token above is shown only now`);
    }
    return EXIT.OK;
  },
);

const list = defineAction(
  'list',
  `list [--json]
      The client credentials /mcp accepts (names and dates; tokens are not stored).`,
  { json: { type: 'boolean' } },
  async (positionals, values, { api }) => {
    expectPositionals(positionals, []);
    const { clients } = await api().get<{ clients: ClientInfo[] }>('/clients');
    if (values.json) printJson({ clients });
    else printTable([['NAME', 'CREATED', 'TOOLSET'], ...clients.map((client) => [client.name, client.created_at, client.toolset ?? '(all)'])]);
    return EXIT.OK;
  },
);

const revoke = defineAction(
  'revoke',
  `revoke NAME
      Its token is refused from now on and its open sessions are closed. Exit 4 if unknown.`,
  {},
  async (positionals, _values, { api }) => {
    const [name] = expectPositionals(positionals, ['NAME']);
    await api().delete(clientPath(name!));
    printLine(`client '${name}' revoked`);
    return EXIT.OK;
  },
);

const bind = defineAction(
  'bind',
  `bind NAME (--toolset TOOLSET | --none)
      The client sees only TOOLSET from now on, on /mcp and /mcp/TOOLSET
      (--none: the whole surface again). Its open sessions are closed, so it
      initializes again on the new view. Exit 4 if the client or toolset is unknown.`,
  { toolset: { type: 'string' }, none: { type: 'boolean' } },
  async (positionals, values, { api }) => {
    const [name] = expectPositionals(positionals, ['NAME']);
    if ((values.toolset === undefined) === !values.none) throw usageError('give exactly one of --toolset TOOLSET or --none');
    const client = await api().patch<ClientInfo>(clientPath(name!), { toolset: values.toolset ?? null });
    printLine(client.toolset === null ? `client '${name}' sees the whole surface` : `client '${name}' sees toolset '${client.toolset}' only`);
    return EXIT.OK;
  },
);

export const clientCommand: Command = groupCommand('client', 'credentials of MCP clients on /mcp: add, list, bind, revoke', [add, list, bind, revoke]);
