// A port squatter does not get coffer's clients: an explicit --port or COFFER_PORT
// that another program listens on makes `coffer serve` exit 5 (PORT_IN_USE) naming
// the port; only the default port moves to a free neighbour, and says so.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type Server } from 'node:net';
import t, { type Test } from 'tap';
import { EXIT } from '../src/cli/exit-codes.js';
import { DEFAULT_PORT } from '../src/daemon/daemon.js';
import { CLI_ENTRY } from '../src/paths.js';
import { runCli, tempDir } from './helpers/cli.js';

/** A listener of "another program" on host:port (0: any free port); answers its port. */
async function squat(t: Test, host: string, port = 0): Promise<number> {
  const server: Server = createServer((socket) => socket.end('squatter\n'));
  server.listen(port, host);
  await once(server, 'listening');
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return (server.address() as { port: number }).port;
}

interface Served {
  /** The exit code, or null: it started listening (and was stopped). */
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `coffer serve`: runs until it exits or says it listens (then it is stopped with SIGTERM). */
async function serve(args: string[], env: Record<string, string>): Promise<Served> {
  const { COFFER_PORT: _inherited, ...base } = process.env;
  const child = spawn(process.execPath, [CLI_ENTRY, 'serve', ...args], { env: { ...base, COFFER_HOME: tempDir('coffer-port-'), ...env } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = once(child, 'exit').then(([code]) => code as number);
  const listening = new Promise<null>((resolve) => child.stdout.on('data', () => stdout.includes('listening on') && resolve(null)));
  const code = await Promise.race([exited, listening]);
  if (code === null) {
    child.kill('SIGTERM');
    await exited;
  }
  return { code, stdout, stderr };
}

for (const host of ['127.0.0.1', '0.0.0.0']) {
  t.test(`an explicit port another program listens on (${host}) is an error naming it`, async (t) => {
    const port = await squat(t, host);
    for (const [how, args, env] of [
      ['--port', ['--port', String(port)], {}],
      ['COFFER_PORT', [], { COFFER_PORT: String(port) }],
    ] as const) {
      const served = await serve([...args], env);
      t.equal(served.code, EXIT.CONFLICT, `${how}: exit 5 (${served.stdout})`);
      t.match(served.stderr, 'PORT_IN_USE', how);
      t.match(served.stderr, `port ${port} on 127.0.0.1 is already in use by another program`, how);
      t.notMatch(served.stdout, 'listening on', `${how}: no daemon on another port`);
    }
  });
}

t.test('only the default port falls back, and says which port it took', async (t) => {
  // Held here, unless another program already holds it: either way the default is taken.
  await squat(t, '127.0.0.1', DEFAULT_PORT).catch(() => undefined);
  const served = await serve([], {});
  t.equal(served.code, null, served.stderr);
  const port = Number(/listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(served.stdout)?.[1]);
  t.ok(port > DEFAULT_PORT && port < DEFAULT_PORT + 10, `a neighbour of ${DEFAULT_PORT}: ${port}`);
  t.match(served.stderr, `warning: the default port ${DEFAULT_PORT} is in use by another program; listening on ${port} instead`);
});

t.test('`daemon start --port N` on a taken port exits 5 too, with the reason', async (t) => {
  const port = await squat(t, '127.0.0.1');
  const started = await runCli(tempDir('coffer-port-start-'), 'daemon', 'start', '--port', String(port));
  t.equal(started.code, EXIT.CONFLICT, started.stderr);
  t.match(started.stderr, `port ${port} on 127.0.0.1 is already in use by another program`);
});
