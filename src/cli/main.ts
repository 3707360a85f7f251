#!/usr/bin/env node
// The `coffer` command line: thin commands over the daemon's REST API.
import { VERSION } from '../version.js';
import { isVerbose } from './args.js';
import type { Command } from './command.js';
import { EXIT, EXIT_CODES_HELP, type ExitCode } from './exit-codes.js';
import { CliError, formatError, printLine, usageError } from './output.js';

// Each command's module is loaded only when it runs: a command line (and every shim a
// client starts) then loads its own few modules, not the daemon's and every parser's.
const COMMANDS: Record<string, () => Promise<Command>> = {
  serve: async () => (await import('./commands/serve.js')).serveCommand,
  daemon: async () => (await import('./commands/daemon.js')).daemonCommand,
  mcp: async () => (await import('./commands/mcp.js')).mcpCommand,
  config: async () => (await import('./commands/config.js')).configCommand,
  client: async () => (await import('./commands/client.js')).clientCommand,
  toolset: async () => (await import('./commands/toolset.js')).toolsetCommand,
  audit: async () => (await import('./commands/audit.js')).auditCommand,
  retention: async () => (await import('./commands/retention.js')).retentionCommand,
  shim: async () => (await import('./commands/shim.js')).shimCommand,
  ui: async () => (await import('./commands/ui.js')).uiCommand,
};

async function mainUsage(): Promise<string> {
  const commands = await Promise.all(Object.values(COMMANDS).map((load) => load()));
  const width = Math.max(...commands.map((c) => c.name.length)) + 2;
  return [
    'Usage: coffer <command> [options]',
    '',
    'Commands:',
    ...commands.map((c) => `  ${c.name.padEnd(width)}${c.summary}`),
    '',
    'Synopsis:',
    '  coffer serve [--port N] [--mcp-auth token|none] [--config FILE]   run the daemon in the foreground (env COFFER_PORT)',
    '  coffer daemon start [--port N] [--config FILE] | stop | status | rotate-token',
    '  coffer config export [--format yaml|json] | status      servers as a file (secrets as ${VAR}); the watched file',
    '  coffer shim [--toolset NAME]            stdio MCP entry point for clients (starts a daemon if none runs)',
    '  coffer mcp add NAME (--stdio "CMD ARGS" | --http URL | --sse URL) [--env K=V]... [--header K=V]...',
    '                 [--no-auto-enable] [--description TEXT] [--namespace NS] [--session-mode shared|per_session]',
    '                 [--protocol auto|2025-11-25|2026-07-28]',
    '  coffer mcp update NAME [the options of add] [--unset-env KEY]... [--unset-header KEY]...',
    '                 [--auto-enable] [--enabled true|false]',
    '  coffer mcp list | show NAME | remove NAME | enable NAME | disable NAME',
    '  coffer mcp cap list NAME | cap enable|disable NAME tool:<name>|prompt:<name>|resource:<uri>...',
    '  coffer mcp cap set NAME tool:<name>|prompt:<name> [--name NEW] [--description TEXT]   your own words',
    '  coffer mcp refresh NAME                 over the admin WebSocket, with progress on stderr',
    '  coffer mcp test NAME                    temporary connection; exit 7 when it fails',
    '  coffer mcp auth NAME [--logout] [--no-browser]   OAuth sign-in to a remote server',
    '  coffer mcp invocations [NAME] [--status ok|error|timeout|denied] [--since ISO|30m|2h|7d] [--limit N]',
    '  coffer mcp import FILE [--dry-run]     mcpServers JSON of Claude Desktop / Claude Code / Cursor, VS Code',
    '  coffer mcp client-config claude-code|cursor|vscode [--client NAME] [--toolset TOOLSET] [--replace]',
    '  coffer client add NAME [--toolset TOOLSET] | list | bind NAME (--toolset TOOLSET | --none) | revoke NAME',
    '  coffer toolset add|update NAME (--server S | --include S/PATTERN)... [--exclude S/PATTERN]...',
    '                 [--mode full|search] [--pin S/tool:GLOB]... [--description TEXT]',
    '  coffer toolset list | show NAME [--holds] | rm NAME      views served at /mcp/<toolset>',
    '  coffer audit list [--server NAME] [--event TYPE] [--since ISO|30m|2h|7d] [--limit N]',
    '  coffer retention list | set TABLE (--days N | --forever) | prune      TABLE: audit, invocations',
    '  coffer ui                               a one-time login link to the web UI',
    '',
    'Every read takes --json. Management commands never start a daemon: with none running they exit 3.',
    '',
    'Global options:',
    '  --home DIR     data directory (env COFFER_HOME; default ~/.coffer)',
    '  --json         machine-readable output on stdout (where supported); errors stay on stderr',
    '  --verbose      on errors, also print their details (as JSON) and, when the daemon',
    '                 cannot be reached, the underlying cause',
    '  -h, --help     help; `coffer <command> --help` for one command',
    '  --version      print the version',
    '',
    EXIT_CODES_HELP,
  ].join('\n');
}

/** `coffer --home DIR --verbose mcp list` is `coffer mcp list --home DIR --verbose`. */
function hoistGlobalOptions(argv: string[]): string[] {
  const leading: string[] = [];
  let i = 0;
  while (argv[i] === '--home' || argv[i]?.startsWith('--home=') || argv[i] === '--verbose') {
    const step = argv[i] === '--home' ? 2 : 1;
    leading.push(...argv.slice(i, i + step));
    i += step;
  }
  return [...argv.slice(i), ...leading];
}

async function main(argv: string[]): Promise<ExitCode> {
  const [name, ...rest] = hoistGlobalOptions(argv);
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    printLine(await mainUsage());
    return name === undefined ? EXIT.USAGE : EXIT.OK;
  }
  if (name === '--version') {
    printLine(VERSION);
    return EXIT.OK;
  }
  const load = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!load) throw usageError(`unknown command '${name}'`);
  const command = await load();
  if (rest.includes('--help') || rest.includes('-h')) {
    printLine(command.helpFor?.(rest) ?? command.usage);
    return EXIT.OK;
  }
  return command.run(rest);
}

let code: ExitCode;
const argv = process.argv.slice(2);
try {
  code = await main(argv);
} catch (error) {
  const cliError =
    error instanceof CliError ? error : new CliError(EXIT.ERROR, 'INTERNAL', error instanceof Error ? error.message : String(error), undefined, error instanceof Error ? error.cause : undefined);
  process.stderr.write(formatError(cliError, isVerbose(argv)) + '\n');
  code = cliError.exitCode;
}
// Explicit: idle keep-alive sockets or a stopped daemon's leftovers must not hold the exit.
process.exit(code);
