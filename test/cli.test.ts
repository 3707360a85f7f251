// The coffer CLI: its pure parts, then the real binary as a child process
// against a real daemon in a temporary COFFER_HOME.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { parseKeyValues, parsePort } from '../src/cli/args.js';
import { isProcessAlive, readDaemonFile, tokenProof } from '../src/daemon/daemon-file.js';
import { EXIT, exitCodeForApiError } from '../src/cli/exit-codes.js';
import { CliError, formatError } from '../src/cli/output.js';
import { parseErrorEnvelope } from '../src/protocol/errors.js';
import { joinCommandLine, splitCommandLine } from '../src/cli/split.js';
import { PROJECT_ROOT } from '../src/paths.js';
import { runCli, tempDir } from './helpers/cli.js';
import { startGateway } from './helpers/gateway.js';



const tempHome = (): string => tempDir('coffer-cli-test-');

const EVERYTHING = join(PROJECT_ROOT, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');

t.test('splitCommandLine: shell-like words, quotes respected, nothing expanded', async (t) => {
  t.same(splitCommandLine('npx -y @mcp/server  /tmp/a'), ['npx', '-y', '@mcp/server', '/tmp/a']);
  t.same(splitCommandLine(`node "my dir/s.js" 'it''s' a\\ b`), ['node', 'my dir/s.js', 'its', 'a b']);
  t.same(splitCommandLine(`echo "say \\"hi\\" \\$HOME" '$HOME' ""`), ['echo', 'say "hi" $HOME', '$HOME', '']);
  t.same(splitCommandLine('  \t '), []);
  t.throws(() => splitCommandLine('node "open'), /unterminated double quote/);
  t.throws(() => splitCommandLine("node 'open"), /unterminated single quote/);
  t.throws(() => splitCommandLine('node \\'), /trailing backslash/);
  const words = ['node', 'a b', "it's", '', '$X', 'plain/path-1.js'];
  t.same(splitCommandLine(joinCommandLine(words)), words, 'joinCommandLine round-trips');
});

t.test('exit codes map from error code first, HTTP status second', async (t) => {
  t.equal(exitCodeForApiError(404, 'RESOURCE_NOT_FOUND'), EXIT.NOT_FOUND);
  t.equal(exitCodeForApiError(409, 'RESOURCE_ALREADY_EXISTS'), EXIT.CONFLICT);
  t.equal(exitCodeForApiError(422, 'CONFIG_INVALID'), EXIT.INVALID_INPUT);
  t.equal(exitCodeForApiError(400, 'BAD_REQUEST'), EXIT.INVALID_INPUT);
  t.equal(exitCodeForApiError(503, 'DAEMON_NOT_READY'), EXIT.DAEMON_UNREACHABLE);
  t.equal(exitCodeForApiError(503, 'UPSTREAM_UNAVAILABLE'), EXIT.ERROR);
  t.equal(exitCodeForApiError(409, 'SOMETHING_NEW'), EXIT.CONFLICT, 'unknown code: by status');
  t.equal(exitCodeForApiError(500, undefined), EXIT.ERROR);
});

t.test('parseErrorEnvelope: the API envelope as the CLI and the page read it', async (t) => {
  const body = JSON.stringify({ error: { code: 'CONFIG_INVALID', message: 'invalid server config', details: { errors: [{ field: 'name', message: 'bad' }] } } });
  t.same(parseErrorEnvelope(422, body), { code: 'CONFIG_INVALID', message: 'invalid server config', details: { errors: [{ field: 'name', message: 'bad' }] } });
  t.same(parseErrorEnvelope(502, '<html>bad gateway</html>'), { code: 'HTTP_502', message: '<html>bad gateway</html>', details: undefined }, 'not JSON: status and body');
  t.same(parseErrorEnvelope(500, ''), { code: 'HTTP_500', message: 'HTTP 500', details: undefined }, 'empty body');
  t.same(parseErrorEnvelope(500, 'null'), { code: 'HTTP_500', message: 'null', details: undefined }, 'JSON but no envelope');
  t.same(parseErrorEnvelope(400, JSON.stringify({ error: 'nope' })), { code: 'HTTP_400', message: '{"error":"nope"}', details: undefined }, 'an error that is not an object');
});

t.test('argument helpers', async (t) => {
  t.same(parseKeyValues(['A=1', 'B=x=y', 'C='], '--env'), { A: '1', B: 'x=y', C: '' });
  const error = t.throws(() => parseKeyValues(['=secret'], '--env')) as unknown as CliError;
  t.equal(error.exitCode, EXIT.USAGE);
  t.notMatch(error.message, /secret/, 'a value is never echoed');
  t.equal(parsePort('0', '--port'), 0);
  t.equal(parsePort(undefined, '--port'), undefined);
  t.throws(() => parsePort('70000', '--port'), /0-65535/);
  const invalid = new CliError(EXIT.INVALID_INPUT, 'CONFIG_INVALID', 'invalid server config', {
    errors: [{ field: 'name', message: 'must match ^[A-Za-z0-9_.-]{1,64}$' }],
  });
  t.equal(formatError(invalid), 'error: CONFIG_INVALID: invalid server config\n  name: must match ^[A-Za-z0-9_.-]{1,64}$');
});

t.test('without a daemon: exit 3 and how to start one; usage errors exit 2', async (t) => {
  const home = tempHome();
  for (const args of [['mcp', 'list'], ['mcp', 'show', 'x', '--json'], ['daemon', 'status']]) {
    const result = await runCli(home, ...args);
    t.equal(result.code, EXIT.DAEMON_UNREACHABLE, `${args.join(' ')} exits 3`);
    t.match(result.stderr, /^error: DAEMON_UNREACHABLE: .*coffer daemon start/m);
  }
  const status = await runCli(home, 'daemon', 'status', '--json');
  t.same(JSON.parse(status.stdout), { status: 'stopped' });
  t.notOk(existsSync(join(home, 'daemon.json')), 'no daemon was started');

  t.equal((await runCli(home, 'frobnicate')).code, EXIT.USAGE);
  t.equal((await runCli(home, 'mcp', 'add', 'x')).code, EXIT.USAGE, 'no transport');
  t.equal((await runCli(home, 'mcp', 'add', 'x', '--stdio', 'a', '--http', 'http://x')).code, EXIT.USAGE, 'two transports');
  t.equal((await runCli(home, 'mcp', 'add', 'x', '--http', 'http://x', '--env', 'A=1')).code, EXIT.USAGE, '--env with --http');
  t.equal((await runCli(home, 'mcp', 'list', '--bogus')).code, EXIT.USAGE);
  const help = await runCli(home, '--help');
  t.equal(help.code, EXIT.OK);
  t.match(help.stdout, /3 +daemon unreachable/);
});

type Route = (request: IncomingMessage, response: ServerResponse, url: URL) => void;

const notHere: Route = (_request, response) => {
  response.statusCode = 404;
  response.end(JSON.stringify({ error: { code: 'RESOURCE_NOT_FOUND', message: 'not here' } }));
};

/**
 * A stand-in daemon in this process (so its pid is alive) that holds daemon.json's token and proves
 * it as the daemon does; `route` answers the rest, `when` decides when each request is answered, and
 * `seen` gets every request's method and path.
 */
async function standInDaemon(
  t: Test,
  home: string,
  { route = notHere, when = (answer) => answer(), seen = [] }: { route?: Route; when?: (answer: () => void) => void; seen?: string[] },
): Promise<{ port: number; server: Server }> {
  const token = 'stand-in-token';
  let port = 0;
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    seen.push(`${request.method} ${url.pathname}`);
    when(() => {
      response.setHeader('content-type', 'application/json');
      if (url.pathname !== '/api/v1/daemon/status') return route(request, response, url);
      const challenge = url.searchParams.get('challenge');
      const proof = challenge === null ? {} : { proof: tokenProof(token, challenge) };
      const upstreams = { registered: 0, enabled: 0, healthy: 0, degraded: 0 };
      response.end(JSON.stringify({ status: 'ready', version: '0.0.0', started_at: new Date().toISOString(), port, pid: process.pid, upstreams, ...proof }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  port = (server.address() as AddressInfo).port;
  writeFileSync(join(home, 'daemon.json'), JSON.stringify({ port, pid: process.pid, token, started_at: new Date().toISOString() }), { mode: 0o600 });
  return { port, server };
}

t.test('daemon status --json makes no login code (scripts poll it); the human status prints one', async (t) => {
  // A stand-in daemon that records what the CLI asks of it.
  const home = tempHome();
  const requests: string[] = [];
  const loginCodes: Route = (request, response, url) => {
    if (request.method !== 'POST' || url.pathname !== '/api/v1/ui/login-codes') return notHere(request, response, url);
    response.statusCode = 201;
    response.end(JSON.stringify({ code: 'stand-in-code', expires_at: new Date(Date.now() + 120_000).toISOString() }));
  };
  const { port } = await standInDaemon(t, home, { route: loginCodes, seen: requests });

  const json = await runCli(home, 'daemon', 'status', '--json');
  t.equal(json.code, EXIT.OK, json.stderr);
  const status = JSON.parse(json.stdout) as Record<string, unknown>;
  t.match(status, { status: 'ready', port, pid: process.pid });
  t.notOk('ui_login_url' in status, 'no login link in the JSON');
  t.same(requests, ['GET /api/v1/daemon/status', 'GET /api/v1/daemon/readiness'], 'only the status and readiness are read: no login code was made');

  requests.length = 0;
  const human = await runCli(home, 'daemon', 'status');
  t.equal(human.code, EXIT.OK, human.stderr);
  t.match(human.stdout, new RegExp(`^web ui: +http://127\\.0\\.0\\.1:${port}/#login=stand-in-code {2}\\(one-time login link\\)$`, 'm'));
  t.same(requests, ['GET /api/v1/daemon/status', 'GET /api/v1/daemon/readiness', 'POST /api/v1/ui/login-codes'], 'the human status makes one');
});

t.test('a daemon that is alive but slow to answer (busy, or paused a moment) is waited for, not reported gone', async (t) => {
  const home = tempHome();
  let paused = true;
  const held: (() => void)[] = [];
  const servers: Route = (request, response, url) => (url.pathname === '/api/v1/servers' ? void response.end(JSON.stringify({ servers: [] })) : notHere(request, response, url));
  // It answers only once resumed.
  const { port, server } = await standInDaemon(t, home, { route: servers, when: (answer) => (paused ? void held.push(answer) : answer()) });
  const resumeAfter = (ms: number): void => {
    paused = true;
    setTimeout(() => {
      paused = false;
      for (const answer of held.splice(0)) answer();
    }, ms);
  };

  resumeAfter(3_500);
  const list = await runCli(home, 'mcp', 'list', '--json');
  t.equal(list.code, EXIT.OK, list.stderr);
  t.same(JSON.parse(list.stdout), { servers: [] }, 'the command went through once the daemon answered');

  resumeAfter(3_500);
  const status = await runCli(home, 'daemon', 'status', '--json');
  t.equal(status.code, EXIT.OK, status.stderr);
  t.match(JSON.parse(status.stdout), { status: 'ready', pid: process.pid }, 'daemon status reports it running');

  // Alive, but nothing listens on its port any more: not "stopped", and not told to start another.
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  const silent = await runCli(home, 'daemon', 'status', '--json');
  t.equal(silent.code, EXIT.DAEMON_UNREACHABLE);
  t.same(JSON.parse(silent.stdout), { status: 'unresponsive', pid: process.pid, port });
  t.match(silent.stderr, `(pid ${process.pid}) runs but does not answer on port ${port}`);
  t.match(silent.stderr, '`coffer daemon stop` ends it');
  t.notMatch(silent.stderr, 'start one with');
});

t.test("mcp refresh (admin WebSocket) and daemon stop send the token only to a daemon that proved it holds daemon.json's token", async (t) => {
  const home = tempHome();
  const reached: string[] = [];
  // The stale file's pid, taken by another process of this user since (pids are reused).
  const stale = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)']);
  t.teardown(() => stale.kill('SIGKILL'));
  // What took a stopped daemon's port: it answers the status probe, but cannot prove the token.
  const squatter = createServer((request, response) => {
    if (request.url?.startsWith('/api/v1/daemon/status')) return void response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ pid: stale.pid, status: 'ready', proof: 'made-up' }));
    reached.push(`${request.method} ${request.url} ${request.headers.authorization ?? ''}`);
    response.writeHead(500).end();
  });
  squatter.on('upgrade', (request, socket) => {
    reached.push(`upgrade ${request.url} ${request.headers.authorization ?? ''} ${request.headers['sec-websocket-protocol'] ?? ''}`);
    socket.destroy();
  });
  await new Promise<void>((resolve) => squatter.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    squatter.closeAllConnections();
    squatter.close();
  });
  const port = (squatter.address() as AddressInfo).port;
  writeFileSync(join(home, 'daemon.json'), JSON.stringify({ port, pid: stale.pid, token: 'the-token', started_at: new Date().toISOString() }), { mode: 0o600 });

  const refreshed = await runCli(home, 'mcp', 'refresh', 'files');
  t.equal(refreshed.code, EXIT.DAEMON_UNREACHABLE, refreshed.stderr);
  t.match(refreshed.stderr, "does not prove it holds that file's token");
  t.same(reached, [], 'nothing but the status probe reached the squatter');

  await runCli(home, 'daemon', 'stop');
  t.same(reached, [], 'daemon stop sent it nothing either');
});

t.test("a daemon.json left by a crash, its pid now another process's, neither blocks a start nor gets that process signalled by daemon stop", async (t) => {
  const home = tempHome();
  // The pid is reused by a process started after the daemon that wrote the file (pids come back; the file outlives a crash or a reboot).
  const reused = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)']);
  t.teardown(() => reused.kill('SIGKILL'));
  await once(reused, 'spawn');
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const port = (closed.address() as AddressInfo).port;
  await new Promise((resolve) => closed.close(resolve));
  // The crashed daemon's own process start (clock ticks after boot), not the reusing process's.
  const stale = () => writeFileSync(join(home, 'daemon.json'), JSON.stringify({ port, pid: reused.pid, token: 'old', started_at: new Date(Date.now() - 3_600_000).toISOString(), process_start: 1 }), { mode: 0o600 });

  stale();
  const gateway = await startGateway({}, home);
  t.equal(readDaemonFile(home)?.pid, process.pid, 'a daemon starts in its place');
  t.type(readDaemonFile(home)?.process_start, 'number', 'and names its own process start');
  await gateway.daemon.stop();

  stale();
  const stopped = await runCli(home, 'daemon', 'stop');
  t.equal(stopped.code, EXIT.OK, stopped.stderr);
  t.match(stopped.stdout, 'coffer daemon is not running');
  await new Promise((resolve) => setTimeout(resolve, 500));
  t.equal(reused.exitCode ?? reused.signalCode, null, 'the process that holds the pid now was not signalled');
  t.notOk(existsSync(join(home, 'daemon.json')), 'the stale file is gone');
});

t.test('daemon start, mcp add/list/show/remove, daemon stop', async (t) => {
  const home = tempHome();
  const started = await runCli(home, 'daemon', 'start', '--json');
  t.equal(started.code, EXIT.OK, started.stderr);
  const { pid, port } = JSON.parse(started.stdout) as { pid: number; port: number };
  t.teardown(() => {
    if (isProcessAlive(pid)) process.kill(pid, 'SIGKILL');
  });
  t.ok(isProcessAlive(pid));

  const again = await runCli(home, 'daemon', 'start');
  t.equal(again.code, EXIT.OK);
  t.match(again.stdout, /already running/);

  const status = await runCli(home, 'daemon', 'status', '--json');
  t.equal(status.code, EXIT.OK);
  t.match(JSON.parse(status.stdout), { status: 'ready', port, pid });
  t.notOk('ui_login_url' in JSON.parse(status.stdout), 'no login link (and no code) in the JSON status');

  const add = ['mcp', 'add', 'every', '--stdio', `"${process.execPath}" "${EVERYTHING}" stdio`, '--env', 'SECRET_TOKEN=hunter2', '--description', 'test server'];
  const added = await runCli(home, ...add);
  t.equal(added.code, EXIT.OK, added.stderr);
  t.match(added.stdout, /added server 'every'/);
  t.notMatch(added.stdout, /hunter2/);

  const duplicate = await runCli(home, ...add);
  t.equal(duplicate.code, EXIT.CONFLICT);
  t.match(duplicate.stderr, /^error: RESOURCE_ALREADY_EXISTS: /);

  const invalid = await runCli(home, 'mcp', 'add', 'bad__name', '--http', 'not a url');
  t.equal(invalid.code, EXIT.INVALID_INPUT);
  t.match(invalid.stderr, /^error: CONFIG_INVALID: /);
  t.match(invalid.stderr, /^ {2}name: /m, 'field details are listed');

  const list = await runCli(home, 'mcp', 'list', '--json');
  t.equal(list.code, EXIT.OK);
  const { servers } = JSON.parse(list.stdout) as { servers: Array<{ name: string; transport: { env: Record<string, string> } }> };
  t.same(servers.map((s) => s.name), ['every']);
  t.same(Object.keys(servers[0]!.transport.env), ['SECRET_TOKEN']);
  t.notMatch(list.stdout, /hunter2/, 'env values are never printed');

  const table = await runCli(home, 'mcp', 'list');
  t.match(table.stdout, /^NAME +ENABLED +HEALTH +TRANSPORT\nevery +yes /);

  const show = await runCli(home, 'mcp', 'show', 'every', '--json');
  t.equal(show.code, EXIT.OK);
  t.match(JSON.parse(show.stdout), { server: { name: 'every', description: 'test server', transport: { type: 'stdio', command: process.execPath } } });
  const human = await runCli(home, 'mcp', 'show', 'every');
  t.match(human.stdout, /env keys: +SECRET_TOKEN\n/);
  t.notMatch(human.stdout, /hunter2/);

  const missing = await runCli(home, 'mcp', 'show', 'nope');
  t.equal(missing.code, EXIT.NOT_FOUND);
  t.match(missing.stderr, /^error: RESOURCE_NOT_FOUND: /);

  t.equal((await runCli(home, 'mcp', 'remove', 'every')).code, EXIT.OK);
  t.equal((await runCli(home, 'mcp', 'remove', 'every')).code, EXIT.NOT_FOUND);
  t.same(JSON.parse((await runCli(home, 'mcp', 'list', '--json')).stdout), { servers: [] });

  const stopped = await runCli(home, 'daemon', 'stop', '--json');
  t.equal(stopped.code, EXIT.OK, stopped.stderr);
  t.same(JSON.parse(stopped.stdout), { stopped: true, pid });
  t.notOk(isProcessAlive(pid), 'the daemon process is gone');
  t.notOk(existsSync(join(home, 'daemon.json')));
  t.equal((await runCli(home, 'mcp', 'list')).code, EXIT.DAEMON_UNREACHABLE);
  const idle = await runCli(home, 'daemon', 'stop');
  t.equal(idle.code, EXIT.OK);
  t.match(idle.stdout, /not running/);
  t.match(readFileSync(join(home, 'logs', 'daemon.log'), 'utf8'), /coffer daemon listening on http:\/\/127\.0\.0\.1:/);
});
