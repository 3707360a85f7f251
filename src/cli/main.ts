#!/usr/bin/env node
// The `coffer` command line: thin commands over the daemon's REST API.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../paths.js';
import type { Command } from './command.js';
import { auditCommand } from './commands/audit.js';
import { daemonCommand } from './commands/daemon.js';
import { mcpCommand } from './commands/mcp.js';
import { serveCommand } from './commands/serve.js';
import { shimCommand } from './commands/shim.js';
import { EXIT, EXIT_CODES_HELP, type ExitCode } from './exit-codes.js';
import { CliError, formatError, printLine, usageError } from './output.js';

const COMMANDS: Command[] = [serveCommand, daemonCommand, mcpCommand, auditCommand, shimCommand];

function mainUsage(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length)) + 2;
  return [
    'Usage: coffer <command> [options]',
    '',
    'Commands:',
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}${c.summary}`),
    '',
    'Synopsis:',
    '  coffer serve [--port N]                 run the daemon in the foreground (env COFFER_PORT)',
    '  coffer daemon start [--port N] | stop | status | rotate-token',
    '  coffer shim                             stdio MCP entry point for clients (starts a daemon if none runs)',
    '  coffer mcp add NAME (--stdio "CMD ARGS" | --http URL | --sse URL) [--env K=V]... [--header K=V]...',
    '                 [--no-auto-enable] [--description TEXT]',
    '  coffer mcp update NAME [--stdio "CMD ARGS" | --http URL | --sse URL] [--env K=V]... [--header K=V]...',
    '                 [--unset-env KEY]... [--unset-header KEY]... [--auto-enable | --no-auto-enable]',
    '                 [--description TEXT] [--enabled true|false]',
    '  coffer mcp list | show NAME | remove NAME | enable NAME | disable NAME',
    '  coffer mcp cap list NAME | cap enable|disable NAME tool:<name>|prompt:<name>|resource:<uri>...',
    '  coffer mcp refresh NAME | test NAME',
    '  coffer mcp import FILE [--dry-run]     mcpServers JSON of Claude Desktop / Claude Code / Cursor, VS Code',
    '  coffer audit list [--server NAME] [--event TYPE] [--since ISO|30m|2h|7d] [--limit N]',
    '',
    'Management commands never start a daemon: with none running they exit 3.',
    '',
    'Global options:',
    '  --home DIR     data directory (env COFFER_HOME; default ~/.coffer)',
    '  --json         machine-readable output on stdout (where supported)',
    '  -h, --help     help; `coffer <command> --help` for one command',
    '  --version      print the version',
    '',
    EXIT_CODES_HELP,
  ].join('\n');
}

function version(): string {
  return (JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
}

/** `coffer --home DIR mcp list` is `coffer mcp list --home DIR`. */
function hoistGlobalOptions(argv: string[]): string[] {
  const leading: string[] = [];
  let i = 0;
  while (argv[i] === '--home' || argv[i]?.startsWith('--home=')) {
    const step = argv[i] === '--home' ? 2 : 1;
    leading.push(...argv.slice(i, i + step));
    i += step;
  }
  return [...argv.slice(i), ...leading];
}

async function main(argv: string[]): Promise<ExitCode> {
  const [name, ...rest] = hoistGlobalOptions(argv);
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    printLine(mainUsage());
    return name === undefined ? EXIT.USAGE : EXIT.OK;
  }
  if (name === '--version') {
    printLine(version());
    return EXIT.OK;
  }
  const command = COMMANDS.find((c) => c.name === name);
  if (!command) throw usageError(`unknown command '${name}'`);
  if (rest.includes('--help') || rest.includes('-h')) {
    printLine(command.helpFor?.(rest) ?? command.usage);
    return EXIT.OK;
  }
  return command.run(rest);
}

let code: ExitCode;
try {
  code = await main(process.argv.slice(2));
} catch (error) {
  const cliError = error instanceof CliError ? error : new CliError(EXIT.ERROR, 'INTERNAL', error instanceof Error ? error.message : String(error));
  process.stderr.write(formatError(cliError) + '\n');
  code = cliError.exitCode;
}
// Explicit: idle keep-alive sockets or a stopped daemon's leftovers must not hold the exit.
process.exit(code);
