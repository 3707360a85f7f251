// `coffer shim`: stdio MCP entry point for clients that cannot speak HTTP.
import { resolveHome } from '../../daemon/daemon-file.js';
import { expectPositionals, parseCommandArgs } from '../args.js';
import type { Command } from '../command.js';

const usage = `Usage: coffer shim [--home DIR]

A stdio MCP server that relays every JSON-RPC message unchanged to the daemon's
/mcp endpoint. Starts a daemon if none runs, and survives daemon restarts.
Configure MCP clients with: command "coffer", args ["shim"].
Diagnostics go to $COFFER_HOME/logs/shim.log (and to stderr with COFFER_DEBUG=1).
Env COFFER_SHIM_RECONNECT_MS: how long a request waits for an absent daemon
before it fails with a JSON-RPC error (default 30000).`;

export const shimCommand: Command = {
  name: 'shim',
  summary: 'stdio MCP entry point for clients (bridges to the daemon)',
  usage,
  async run(argv) {
    const { values, positionals } = parseCommandArgs(argv, {});
    expectPositionals(positionals, []);
    // Loaded here: the SDK transports would slow every other command's start.
    const { runShim } = await import('../../shim/shim.js');
    return runShim({ home: resolveHome(values.home) });
  },
};
