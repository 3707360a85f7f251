// The actors' V8 options: the daemon sets them before its first worker
// starts, so every actor isolate compiles with them; COFFER_V8_FLAGS replaces
// them, and anything that is not a V8 option stops `coffer serve` with a usage error.
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import t from 'tap';
import { EXIT } from '../src/cli/exit-codes.js';
import { CLI_ENTRY, DIST_ROOT } from '../src/paths.js';
import { DEFAULT_ENGINE_FLAGS, parseEngineFlags } from '../src/upstreams/engine-flags.js';
import { tempHome } from './helpers/gateway.js';

function run(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, args, { env: { ...process.env, ...env } }, (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }));
  });
}

/**
 * In a process of its own (V8 options are process-wide): a worker isolate calls a fresh
 * function once and prints V8's view of it, before and after a daemon started there.
 */
const probe = (daemonModule: string, engineFlags?: string[]) => `
import { writeSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { Worker } from 'node:worker_threads';
setFlagsFromString('--allow-natives-syntax');
// %DebugPrint writes straight to fd 1, so the labels do too.
const describe = (label) => {
  writeSync(1, label + '\\n');
  const worker = new Worker('function perCall(o) { return o.x; } perCall({ x: 1 }); %DebugPrint(perCall);', { eval: true });
  return new Promise((resolve) => worker.once('exit', resolve));
};
await describe('BEFORE');
const { startDaemon } = await import(${JSON.stringify(daemonModule)});
const daemon = await startDaemon({ home: process.argv[2], port: 0${engineFlags ? `, engineFlags: ${JSON.stringify(engineFlags)}` : ''} });
await describe('AFTER');
await daemon.stop();
`;

t.test('COFFER_V8_FLAGS: unset gives the defaults, empty gives none, otherwise V8 options separated by spaces', async (t) => {
  t.same(parseEngineFlags(undefined), DEFAULT_ENGINE_FLAGS);
  t.same(parseEngineFlags(''), []);
  t.same(parseEngineFlags(' --always-sparkplug  --interrupt-budget=16384 '), ['--always-sparkplug', '--interrupt-budget=16384']);
  for (const bad of ['always-sparkplug', '--x;rm', '--stack-size 1', '--a=$(id)']) {
    t.throws(() => parseEngineFlags(bad), { code: 'CONFIG_INVALID', message: /is not a V8 option/ }, bad);
  }
});

/** What V8 says of a function a worker called once, before and after a daemon started with `engineFlags` (undefined: its default). */
async function feedbackAfterOneCall(engineFlags?: string[]): Promise<{ before: string; after: string }> {
  const daemonModule = pathToFileURL(join(DIST_ROOT, 'src', 'daemon', 'daemon.js')).href;
  // A file, not --eval: workers inherit the process's execArgv, and the daemon's would refuse --input-type.
  const script = join(tempHome(), 'probe.mjs');
  writeFileSync(script, probe(daemonModule, engineFlags));
  const result = await run([script, tempHome()]);
  if (result.code !== 0) throw new Error(result.stderr);
  const [before = '', after = ''] = result.stdout.split('AFTER');
  return { before, after };
}

t.test("by default the daemon leaves V8's own options: a worker isolate allocates feedback lazily", async (t) => {
  t.same(DEFAULT_ENGINE_FLAGS, []);
  const { before, after } = await feedbackAfterOneCall();
  t.match(before, /feedback vector: No feedback vector/, 'before the daemon: none after one call');
  t.match(after, /feedback vector: No feedback vector/, 'after: none either');
});

t.test('the options given are set before the first worker: every worker isolate compiles with them', async (t) => {
  const { before, after } = await feedbackAfterOneCall(['--no-lazy-feedback-allocation']);
  t.match(before, /feedback vector: No feedback vector/, 'before the daemon: none after one call');
  t.match(after, /feedback vector: 0x[0-9a-f]+: \[FeedbackVector\]/, 'after: allocated on the first call');
});

t.test('coffer serve refuses a COFFER_V8_FLAGS that is not V8 options (exit 2, says what was wrong)', async (t) => {
  const result = await run([CLI_ENTRY, 'serve', '--port', '0', '--home', tempHome()], { COFFER_V8_FLAGS: '--always-sparkplug;id' });
  t.equal(result.code, EXIT.USAGE);
  t.match(result.stderr, /COFFER_V8_FLAGS: '--always-sparkplug;id' is not a V8 option/);
});
