// `coffer shim`: stdio MCP entry point for clients that cannot speak HTTP.
import { resolveHome } from '../../daemon/daemon-file.js';
import { expectPositionals, parseCommandArgs } from '../args.js';
import type { Command } from '../command.js';
import { usageError } from '../output.js';
import { TOOLSET_NAME_PATTERN } from '../../protocol/toolsets.js';

const usage = `Usage: coffer shim [--toolset NAME] [--home DIR]

A stdio MCP server that relays every JSON-RPC message unchanged to the daemon's
/mcp endpoint. Starts a daemon if none runs, and survives daemon restarts.
Configure MCP clients with: command "coffer", args ["shim"]. With --toolset NAME
it relays to /mcp/NAME: the client sees only that toolset ('coffer toolset list').
Diagnostics go to $COFFER_HOME/logs/shim.log (and to stderr with COFFER_DEBUG=1).
Env COFFER_SHIM_RECONNECT_MS: how long a request waits for an absent daemon
before it fails with a JSON-RPC error (default 30000).`;

export const shimCommand: Command = {
  name: 'shim',
  summary: 'stdio MCP entry point for clients (bridges to the daemon)',
  usage,
  async run(argv) {
    const { values, positionals } = parseCommandArgs(argv, { toolset: { type: 'string' } });
    expectPositionals(positionals, []);
    const toolset = values.toolset;
    if (toolset !== undefined && !TOOLSET_NAME_PATTERN.test(toolset)) throw usageError(`'${toolset}' is not a toolset name: see 'coffer toolset list'`);
    // Loaded here: the SDK transports would slow every other command's start.
    const { runShim } = await import('../../shim/shim.js');
    return runShim({ home: resolveHome(values.home), ...(toolset === undefined ? {} : { toolset }) });
  },
};
