// `coffer serve`: the daemon in the foreground of this process.
import { DatabaseOpeningError, ensureHome, resolveHome } from '../../daemon/daemon-file.js';
import { HomeNotPrivateError } from '../../daemon/private-home.js';
import { DaemonRunningError } from '../../daemon/daemon-lock.js';
import { ConfigFileError, describeIssue } from '../../config-file/load.js';
import { PortTakenError } from '../../http/port-taken.js';
import type { McpAuthMode } from '../../http/mcp-auth.js';
import type { LogLevel } from '../../log.js';
import { daemonUrl } from '../api-client.js';
import { expectPositionals, parseCommandArgs, parsePort, parsePositiveInt } from '../args.js';
import { DEFAULT_PAGE_SIZE } from '../../router/pagination.js';
import { parsePin, PIN_SYNTAX, splitPins } from '../../search/pins.js';
import { parseToolsMode } from '../../search/search-mode.js';
import { DEFAULT_NAME_BUDGET, MIN_NAME_BUDGET } from '../../router/names.js';
import { EngineFlagsError, parseEngineFlags } from '../../upstreams/engine-flags.js';
import type { Command } from '../command.js';
import { probeDaemon } from '../daemon-control.js';
import { EXIT } from '../exit-codes.js';
import { CliError, printLine, printMessage } from '../output.js';

const usage = `Usage: coffer serve [--port N] [--mcp-auth token|none] [--config FILE] [--home DIR]

Runs the coffer daemon in the foreground until SIGINT or SIGTERM.
  --port N          port to bind on 127.0.0.1 (env COFFER_PORT); when it is taken, exit 5.
                    Without one: 7077, or when taken the next free of 7078-7086, with a warning
  --mcp-auth MODE   token (default): /mcp wants 'Authorization: Bearer' with a client's token
                    ('coffer client add') or the daemon's; none: any local process of any
                    user may use /mcp, for a single-user machine only (env COFFER_MCP_AUTH)
  --config FILE     servers declared in a YAML or JSON file (schema/coffer-config.schema.json):
                    applied at start and whenever the file changes; an invalid file is
                    refused (exit 6 at start) with its line and column, and nothing changes
  --home DIR        data directory (env COFFER_HOME; default ~/.coffer)

Environment: COFFER_CACHE_TTL_MS (list cache lifetime, default 60000),
COFFER_LOG_LEVEL (debug|info|warn|error, default info), COFFER_PAGE_SIZE (items
per page of tools/list and the other lists, default ${DEFAULT_PAGE_SIZE}: many clients
read only the first page), COFFER_NAME_BUDGET (longest exposed tool or prompt
name, ${MIN_NAME_BUDGET}-${DEFAULT_NAME_BUDGET}, default ${DEFAULT_NAME_BUDGET}; 51 when a host adds 'mcp__coffer__'),
COFFER_TOOLS_MODE (full|search, default full: what /mcp lists; a toolset has its own),
COFFER_PINNED_TOOLS (in search mode, tools /mcp lists beside the meta-tools:
SERVER/tool:<glob> entries separated by commas; a toolset has its own 'pinned'),
COFFER_V8_FLAGS (V8 options of the actors' isolates, separated by spaces; default
none: V8's own).`;

function cacheTuningFromEnv(): { cacheTtlMs?: number } {
  const raw = process.env.COFFER_CACHE_TTL_MS;
  if (raw === undefined) return {};
  const ttl = Number(raw);
  if (!Number.isInteger(ttl) || ttl < 0) throw new CliError(EXIT.USAGE, 'USAGE', `COFFER_CACHE_TTL_MS must be a whole number of milliseconds, not '${raw}'`);
  return { cacheTtlMs: ttl };
}

function mcpAuthMode(option: string | undefined): McpAuthMode {
  const [raw, source] = option !== undefined ? [option, '--mcp-auth'] : [process.env.COFFER_MCP_AUTH ?? 'token', 'COFFER_MCP_AUTH'];
  if (raw !== 'token' && raw !== 'none') throw new CliError(EXIT.USAGE, 'USAGE', `${source} must be token or none, not '${raw}'`);
  return raw;
}

function logLevelFromEnv(): LogLevel {
  const raw = process.env.COFFER_LOG_LEVEL ?? 'info';
  if (!['debug', 'info', 'warn', 'error'].includes(raw)) throw new CliError(EXIT.USAGE, 'USAGE', `COFFER_LOG_LEVEL must be debug, info, warn or error, not '${raw}'`);
  return raw as LogLevel;
}

function homeNotes(home: string): string[] {
  try {
    return ensureHome(home);
  } catch (error) {
    throw startFailure(error);
  }
}

/** What the daemon refuses to start with, as a stable code and exit status. */
function startFailure(error: unknown): unknown {
  if (error instanceof PortTakenError) return new CliError(EXIT.CONFLICT, 'PORT_IN_USE', error.message, { port: error.port });
  if (error instanceof HomeNotPrivateError) return new CliError(EXIT.INVALID_INPUT, 'HOME_NOT_PRIVATE', error.message);
  if (error instanceof DatabaseOpeningError || error instanceof DaemonRunningError) return new CliError(EXIT.CONFLICT, 'DAEMON_ALREADY_RUNNING', error.message, { pid: error.pid });
  if (error instanceof ConfigFileError) {
    const lines = error.errors.map((issue) => `  ${describeIssue(issue)}`);
    return new CliError(EXIT.INVALID_INPUT, error.code, [`config file ${error.path} refused; the daemon did not start:`, ...lines].join('\n'), error.details);
  }
  return error;
}

function engineFlagsFromEnv(): readonly string[] {
  try {
    return parseEngineFlags(process.env.COFFER_V8_FLAGS);
  } catch (error) {
    if (error instanceof EngineFlagsError) throw new CliError(EXIT.USAGE, 'USAGE', error.message);
    throw error;
  }
}

export const serveCommand: Command = {
  name: 'serve',
  summary: 'run the daemon in the foreground',
  usage,
  async run(argv) {
    const { values, positionals } = parseCommandArgs(argv, { port: { type: 'string' }, 'mcp-auth': { type: 'string' }, config: { type: 'string' } });
    expectPositionals(positionals, []);
    const port = parsePort(values.port, '--port') ?? parsePort(process.env.COFFER_PORT, 'COFFER_PORT');
    const home = resolveHome(values.home);
    const mcpAuth = mcpAuthMode(values['mcp-auth']);
    const pageSize = parsePositiveInt(process.env.COFFER_PAGE_SIZE, 'COFFER_PAGE_SIZE');
    const nameBudget = parsePositiveInt(process.env.COFFER_NAME_BUDGET, 'COFFER_NAME_BUDGET');
    if (nameBudget !== undefined && (nameBudget < MIN_NAME_BUDGET || nameBudget > DEFAULT_NAME_BUDGET)) {
      throw new CliError(EXIT.USAGE, 'USAGE', `COFFER_NAME_BUDGET must be ${MIN_NAME_BUDGET} to ${DEFAULT_NAME_BUDGET} (model hosts accept 64 characters), not '${nameBudget}'`);
    }

    const toolsMode = parseToolsMode(process.env.COFFER_TOOLS_MODE);
    if (toolsMode === null) throw new CliError(EXIT.USAGE, 'USAGE', `COFFER_TOOLS_MODE must be full or search, not '${process.env.COFFER_TOOLS_MODE}'`);

    const engineFlags = engineFlagsFromEnv();
    const pinnedTools = splitPins(process.env.COFFER_PINNED_TOOLS);
    const badPin = pinnedTools.find((pin) => parsePin(pin) === null);
    if (badPin !== undefined) throw new CliError(EXIT.USAGE, 'USAGE', `COFFER_PINNED_TOOLS: '${badPin}' must be ${PIN_SYNTAX}`);

    for (const note of homeNotes(home)) printMessage(`coffer: ${note}`);
    const running = await probeDaemon(home);
    if (running) {
      throw new CliError(EXIT.CONFLICT, 'DAEMON_ALREADY_RUNNING', `a coffer daemon already runs for ${home} on port ${running.file.port} (pid ${running.file.pid})`);
    }
    // Loaded here, not at the top: every other command stays free of the daemon's heavy imports.
    const { startDaemon, DEFAULT_PORT } = await import('../../daemon/daemon.js');
    const daemon = await startDaemon({ home, port, logLevel: logLevelFromEnv(), tuning: cacheTuningFromEnv(), mcpAuth, configFile: values.config, pageSize, nameBudget, toolsMode, pinnedTools, engineFlags }).catch((error: unknown) => {
      throw startFailure(error);
    });
    if (port === undefined && daemon.port !== DEFAULT_PORT) {
      printMessage(
        `warning: the default port ${DEFAULT_PORT} is in use by another program; listening on ${daemon.port} instead. ` +
          `Clients configured for ${DEFAULT_PORT} reach that program, not coffer: point them at ${daemon.port}, or free ${DEFAULT_PORT}`,
      );
    }
    printLine(`coffer daemon listening on ${daemonUrl(daemon.port)} (pid ${process.pid}, home ${home})`);
    if (mcpAuth === 'none') printMessage('WARNING: /mcp authentication is off (--mcp-auth none): any local process of any user can use every tool as you');

    // Until a signal, or until the daemon stops on its own (POST /daemon/shutdown).
    const signal = await Promise.race([
      new Promise<NodeJS.Signals>((resolve) => {
        process.once('SIGINT', resolve);
        process.once('SIGTERM', resolve);
      }),
      daemon.stopped.then(() => null),
    ]);
    if (signal) {
      // A second signal while stopping means "now".
      const forceExit = (): never => process.exit(EXIT.ERROR);
      process.once('SIGINT', forceExit);
      process.once('SIGTERM', forceExit);
      printMessage(`coffer daemon stopping (${signal})`);
      await daemon.stop();
    }
    return EXIT.OK;
  },
};
