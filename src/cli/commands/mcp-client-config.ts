// `coffer mcp client-config <client>`: the snippet that points Claude Code,
// Cursor or VS Code at this daemon's /mcp with a client credential filled in.
// A new credential is made for it (tokens are shown once and not stored).
import { daemonUrl } from '../api-client.js';
import { expectPositionals } from '../args.js';
import { defineAction } from '../command.js';
import { EXIT } from '../exit-codes.js';
import { CliError, printJson, printMessage, usageError } from '../output.js';
import { addClient, clientPath } from './client.js';

export const CLIENT_KINDS = ['claude-code', 'cursor', 'vscode'] as const;
export type ClientKind = (typeof CLIENT_KINDS)[number];

/** Where each client reads its MCP servers from, for the hint on stderr. */
const CONFIG_FILE: Record<ClientKind, string> = {
  'claude-code': '.mcp.json in your project (or: claude mcp add-json coffer \'<the "coffer" object>\')',
  cursor: '~/.cursor/mcp.json (or .cursor/mcp.json in your project)',
  vscode: '.vscode/mcp.json in your workspace',
};

/** The config file fragment for one client kind (pure). */
export function clientConfig(kind: ClientKind, mcpUrl: string, token: string): Record<string, unknown> {
  const headers = { Authorization: `Bearer ${token}` };
  switch (kind) {
    case 'claude-code':
      return { mcpServers: { coffer: { type: 'http', url: mcpUrl, headers } } };
    case 'cursor':
      return { mcpServers: { coffer: { url: mcpUrl, headers } } };
    case 'vscode':
      return { servers: { coffer: { type: 'http', url: mcpUrl, headers } } };
  }
}

export const clientConfigAction = defineAction(
  'client-config',
  `client-config claude-code|cursor|vscode [--client NAME] [--toolset TOOLSET] [--replace]
      Prints the client's MCP config for this daemon with a new client token
      (named after the client kind unless --client). Exit 5 if that client
      exists: its token cannot be shown again; --replace revokes it and makes
      a new one. --toolset: the client is bound to that toolset and pointed at
      /mcp/TOOLSET.`,
  { client: { type: 'string' }, toolset: { type: 'string' }, replace: { type: 'boolean' } },
  async (positionals, values, { api }) => {
    const [kind] = expectPositionals(positionals, ['CLIENT']);
    if (!(CLIENT_KINDS as readonly string[]).includes(kind!)) throw usageError(`unknown client '${kind}': one of ${CLIENT_KINDS.join(', ')}`);
    const name = values.client ?? kind!;
    const daemon = api();
    if (values.replace) {
      await daemon.delete(clientPath(name)).catch((error: unknown) => {
        if (!(error instanceof CliError && error.exitCode === EXIT.NOT_FOUND)) throw error;
      });
    }
    const client = await addClient(daemon, name, values.toolset).catch((error: unknown) => {
      if (error instanceof CliError && error.exitCode === EXIT.CONFLICT) {
        throw new CliError(EXIT.CONFLICT, error.code, `client '${name}' exists and its token is not stored: pass --replace (its old token stops working) or --client OTHER_NAME`);
      }
      throw error;
    });
    const endpoint = client.toolset === null ? '/mcp' : `/mcp/${client.toolset}`;
    printJson(clientConfig(kind as ClientKind, `${daemonUrl(daemon.port)}${endpoint}`, client.token));
    printMessage(`client '${client.name}' added; put this in ${CONFIG_FILE[kind as ClientKind]}`);
    return EXIT.OK;
  },
);
