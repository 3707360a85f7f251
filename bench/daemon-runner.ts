// Runs one coffer daemon in its own process, so the harness can read its RSS
// and profile it (node --cpu-prof dist/bench/daemon-runner.js ...). Prints
// {"port","token","pid"} on stdout once listening; stops cleanly on SIGTERM
// or when the harness (its IPC parent) goes away.
//
//   node dist/bench/daemon-runner.js --home DIR [--tuning JSON] [--page-size N]
import { parseArgs } from 'node:util';
import { startDaemon } from '../src/daemon/daemon.js';
import { parseEngineFlags } from '../src/upstreams/engine-flags.js';

const { values } = parseArgs({
  // No --page-size: the shipped default (1000 items per page), so clients page as they would for real.
  options: { home: { type: 'string' }, tuning: { type: 'string', default: '{}' }, 'page-size': { type: 'string' } },
});
if (!values.home) throw new Error('--home is required');

const daemon = await startDaemon({
  home: values.home,
  port: 0,
  logToStderr: false,
  logLevel: 'warn',
  tuning: JSON.parse(values.tuning) as object,
  ...(values['page-size'] ? { pageSize: Number(values['page-size']) } : {}),
  drainMs: 200,
  // COFFER_V8_FLAGS as `coffer serve` reads it, for A/B runs of the actors' V8 options.
  engineFlags: parseEngineFlags(process.env.COFFER_V8_FLAGS),
});
process.stdout.write(`${JSON.stringify({ port: daemon.port, token: daemon.token, pid: process.pid })}\n`);

let stopping = false;
async function stop(): Promise<void> {
  if (stopping) return;
  stopping = true;
  // Bounded: an actor that will not stop must not keep the benchmark waiting.
  const forced = setTimeout(() => process.exit(1), 8_000);
  forced.unref();
  await daemon.stop().catch(() => undefined);
  clearTimeout(forced);
  // process.exit flushes a --cpu-prof profile as well.
  process.exit(0);
}
process.on('SIGTERM', () => void stop());
process.on('SIGINT', () => void stop());
process.on('disconnect', () => void stop());
