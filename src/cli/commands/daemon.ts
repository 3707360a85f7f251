// `coffer daemon start|stop|status|rotate-token`: the background daemon of one $COFFER_HOME.
import { daemonAlive, readDaemonFile, resolveHome } from '../../daemon/daemon-file.js';
import type { Readiness } from '../../ops/readiness.js';
import { messageOf } from '../../protocol/errors.js';
import { ApiClient, daemonUnreachable, daemonUrl, type DaemonStatus } from '../api-client.js';
import { expectPositionals, parseCommandArgs, parsePort } from '../args.js';
import type { Command } from '../command.js';
import { daemonLogPath, probeDaemon, startDaemonProcess, stopDaemonProcess } from '../daemon-control.js';
import { EXIT, type ExitCode } from '../exit-codes.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { CliError, printFields, printJson, printLine, printMessage, usageError } from '../output.js';
import { loginLink } from './ui.js';

const usage = `Usage: coffer daemon <start|stop|status|rotate-token> [--home DIR] [--json]

  start [--port N] [--config FILE]
                     start a background daemon (log: $COFFER_HOME/logs/daemon.log)
                     and wait until it is ready; does nothing if one already runs.
                     --config: servers declared in a file, as \`coffer serve --config\`
  stop               ask the daemon to shut down and wait until its process is gone
  status             show whether a daemon runs, its upstream counts, its readiness
                     (as GET /readyz: which upstream is not ready and why) and a
                     one-time login link to the web UI (exit 3 if none); with --json
                     no link is made (scripts poll it): \`coffer ui --json\` gives one
  rotate-token       give the daemon a new API token: the old one is rejected at once
                     and daemon.json (0600) holds the new one; the token is never printed
                     (clients that copied the old one must read daemon.json again)
  --json             machine-readable output on stdout`;

const options = { json: { type: 'boolean' }, port: { type: 'string' }, config: { type: 'string' } } as const;

type Handler = (home: string, values: { json?: boolean; port?: string; config?: string }) => Promise<ExitCode>;

const handlers: Record<string, Handler> = {
  async start(home, values) {
    const port = parsePort(values.port, '--port');
    const { file, status, alreadyRunning } = await startDaemonProcess(home, { port, config: values.config });
    if (values.json) printJson({ status: status.status, url: daemonUrl(file.port), port: file.port, pid: file.pid, already_running: alreadyRunning });
    else printLine(`coffer daemon ${alreadyRunning ? 'already running' : 'started'} on ${daemonUrl(file.port)} (pid ${file.pid}, log ${daemonLogPath(home)})`);
    return EXIT.OK;
  },

  async stop(home, values) {
    const stopped = await stopDaemonProcess(home);
    if (values.json) printJson({ stopped: stopped !== null, pid: stopped?.pid ?? null });
    else printLine(stopped ? `coffer daemon stopped (pid ${stopped.pid})` : 'coffer daemon is not running');
    return EXIT.OK;
  },

  async status(home, values) {
    const running = await probeDaemon(home, { patient: true });
    if (!running) {
      const file = readDaemonFile(home);
      if (file && daemonAlive(file)) {
        if (values.json) printJson({ status: 'unresponsive', pid: file.pid, port: file.port });
        throw new CliError(
          EXIT.DAEMON_UNREACHABLE,
          'DAEMON_UNREACHABLE',
          `the coffer daemon of ${home} (pid ${file.pid}) runs but does not answer on port ${file.port}; its log is ${daemonLogPath(home)}, and \`coffer daemon stop\` ends it`,
        );
      }
      if (values.json) printJson({ status: 'stopped' });
      throw daemonUnreachable(home, 'no coffer daemon is running');
    }
    const api = ApiClient.forProven(home, running.file);
    // A daemon of another version may not answer it: its status is still shown.
    const readiness = await api.get<Readiness>('/daemon/readiness').catch((error: unknown) => messageOf(error));
    // Scripts poll --json: it reads, and leaves no login code behind (`coffer ui --json` makes one).
    if (values.json) {
      printJson({ ...running.status, readiness: typeof readiness === 'string' ? null : readiness });
      return EXIT.OK;
    }
    // A person reads this: a fresh one-time link each time; a daemon that cannot issue one is still reported.
    const ui = await loginLink(api).catch(() => null);
    printStatus(running.status, readiness, home, ui?.url);
    return EXIT.OK;
  },

  async 'rotate-token'(home, values) {
    const api = ApiClient.forHome(home);
    const { token } = await api.post<{ token: string }>('/daemon/rotate-token');
    // The daemon rewrites daemon.json; a file that still holds another token would lock this CLI out.
    let written = readDaemonFile(home);
    for (let attempt = 0; attempt < 20 && written?.token !== token; attempt++) {
      await sleep(50);
      written = readDaemonFile(home);
    }
    if (written?.token !== token) printMessage(`warning: ${home}/daemon.json does not hold the new token; restart the daemon if later commands are refused`);
    if (values.json) printJson({ rotated: true });
    else printLine('token rotated: the old one is no longer accepted; daemon.json holds the new one');
    return EXIT.OK;
  },
};

/** One line per upstream that is not ready: what /readyz says, with the upstream's own words. */
function readinessLines(readiness: Readiness | string): Array<[string, string]> {
  if (typeof readiness === 'string') return [['readiness', `unknown (${readiness})`]];
  const summary = readiness.status === 'ready' ? 'ready' : `not ready (db writer ${readiness.db_writer}, ${readiness.not_ready.length} upstream(s) not ready)`;
  return [
    ['readiness', summary],
    ...readiness.not_ready.map((upstream): [string, string] => [`  ${upstream.server}`, `${upstream.reason}${upstream.detail ? `: ${upstream.detail}` : ''}`]),
  ];
}

function printStatus(status: DaemonStatus, readiness: Readiness | string, home: string, uiLink: string | undefined): void {
  const { registered, enabled, healthy, degraded } = status.upstreams;
  printFields([
    ['status', status.status],
    ['url', daemonUrl(status.port)],
    ['pid', String(status.pid)],
    ['version', status.version],
    ['started', status.started_at],
    ['home', home],
    ['upstreams', `${registered} registered, ${enabled} enabled, ${healthy} healthy, ${degraded} degraded`],
    ...readinessLines(readiness),
    ...(uiLink ? [['web ui', `${uiLink}  (one-time login link)`] as [string, string]] : []),
  ]);
}

export const daemonCommand: Command = {
  name: 'daemon',
  summary: 'start, stop or inspect the background daemon; rotate its API token',
  usage,
  async run(argv) {
    const { values, positionals } = parseCommandArgs(argv, options);
    const [action] = expectPositionals(positionals, ['an action (start, stop, status or rotate-token)']);
    if (!Object.hasOwn(handlers, action!)) throw usageError(`unknown daemon action '${action}'`);
    if ((values.port !== undefined || values.config !== undefined) && action !== 'start') throw usageError('--port and --config only apply to `coffer daemon start`');
    return handlers[action!]!(resolveHome(values.home), values);
  },
};
