// The actors' V8 options: the daemon sets them before its first worker
// starts, so every actor isolate compiles with them; COFFER_V8_FLAGS replaces
// them, and anything that is not a V8 option stops `coffer serve` with a usage error.
import { execFile } from 'node:child_process';
import { setFlagsFromString } from 'node:v8';
import { Worker } from 'node:worker_threads';
import t from 'tap';
import { EXIT } from '../src/cli/exit-codes.js';
import { startDaemon } from '../src/daemon/daemon.js';
import { CLI_ENTRY } from '../src/paths.js';
import { DEFAULT_ENGINE_FLAGS, parseEngineFlags } from '../src/upstreams/engine-flags.js';
import { tempHome } from './helpers/gateway.js';

/** V8's OptimizationStatus bit for a function that has Sparkplug (baseline) code. */
const BASELINE = 1 << 15;

/** Calls a fresh function once in a new worker isolate and reads its tier (natives syntax, for this test only). */
function tierAfterOneCall(): Promise<number> {
  const source = `
    const { parentPort } = require('node:worker_threads');
    function perCall(x) { return x + 1; }
    perCall(1);
    parentPort.postMessage(new Function('f', 'return %GetOptimizationStatus(f)')(perCall));`;
  return new Promise((resolve, reject) => {
    const worker = new Worker(source, { eval: true });
    worker.once('message', (status: number) => void worker.terminate().then(() => resolve(status)));
    worker.once('error', reject);
  });
}

t.test('COFFER_V8_FLAGS: unset gives the defaults, empty gives none, otherwise V8 options separated by spaces', async (t) => {
  t.same(parseEngineFlags(undefined), DEFAULT_ENGINE_FLAGS);
  t.same(parseEngineFlags(''), []);
  t.same(parseEngineFlags(' --no-lazy-feedback-allocation  --interrupt-budget=16384 '), ['--no-lazy-feedback-allocation', '--interrupt-budget=16384']);
  for (const bad of ['always-sparkplug', '--x;rm', '--stack-size 1', '--a=$(id)']) {
    t.throws(() => parseEngineFlags(bad), { code: 'CONFIG_INVALID', message: /is not a V8 option/ }, bad);
  }
});

t.test('a worker isolate started after the daemon runs its code as baseline from the first call', async (t) => {
  setFlagsFromString('--allow-natives-syntax');
  t.equal((await tierAfterOneCall()) & BASELINE, 0, 'before the daemon: interpreted after one call');
  const daemon = await startDaemon({ home: tempHome(), port: 0 });
  t.teardown(() => daemon.stop());
  t.equal((await tierAfterOneCall()) & BASELINE, BASELINE, 'after: Sparkplug code after one call');
});

t.test('coffer serve refuses a COFFER_V8_FLAGS that is not V8 options (exit 2, says what was wrong)', async (t) => {
  const result = await new Promise<{ code: number; stderr: string }>((resolve) => {
    execFile(process.execPath, [CLI_ENTRY, 'serve', '--port', '0', '--home', tempHome()], { env: { ...process.env, COFFER_V8_FLAGS: '--always-sparkplug;id' } }, (error, _stdout, stderr) =>
      resolve({ code: error ? Number(error.code ?? 1) : 0, stderr }),
    );
  });
  t.equal(result.code, EXIT.USAGE);
  t.match(result.stderr, /COFFER_V8_FLAGS: '--always-sparkplug;id' is not a V8 option/);
});
