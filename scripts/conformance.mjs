// `npm run conformance`: the official MCP conformance suite (server mode) against
// coffer's /mcp, with coffer fronting test/fixtures/conformance-upstream.ts over
// stdio under the empty namespace, so the suite sees the fixture's own names.
//
//   node scripts/conformance.mjs [--scenario NAME] [--out FILE] [--keep]
//
// Needs a built dist/ (npx tsc -p tsconfig.json); builds nothing itself. Starts a
// daemon in a temporary COFFER_HOME on a free port, runs every active scenario
// (and, for information, the pending ones), prints a table, writes
// bench/results/conformance-<ts>.json (or --out FILE), exits 1 when an active scenario fails.
// The daemon and the temporary folders are always removed (--keep leaves the
// home, with the daemon's log, for a post-mortem).
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const FIXTURE = join(ROOT, 'dist', 'test', 'fixtures', 'conformance-upstream.js');
const SUITE = join(ROOT, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
const RESULTS = join(ROOT, 'bench', 'results');
const SERVER = 'conformance';
const READY_TIMEOUT_MS = 30_000;
/** A scenario waits at most 60 s per request; the whole active suite normally takes seconds. */
const SUITE_TIMEOUT_MS = 10 * 60_000;

const { values: opts } = parseArgs({ options: { scenario: { type: 'string' }, out: { type: 'string' }, keep: { type: 'boolean', default: false } } });

for (const [what, path] of [['coffer', join(ROOT, 'dist', 'src', 'cli', 'main.js')], ['the fixture', FIXTURE], ['@modelcontextprotocol/conformance', SUITE]]) {
  if (!existsSync(path)) {
    console.error(`conformance: ${what} is missing (${path}); run \`npx tsc -p tsconfig.json\` (and npm install) first`);
    process.exit(2);
  }
}

// coffer's own modules, once dist/ is known to exist: the CLI's daemon control and REST client.
const compiled = (path) => import(pathToFileURL(join(ROOT, 'dist', 'src', path)).href);
const { ApiClient } = await compiled('cli/api-client.js');
const { startDaemonProcess, stopDaemonProcess } = await compiled('cli/daemon-control.js');
const { isProcessAlive, readDaemonFile } = await compiled('daemon/daemon-file.js');

const home = mkdtempSync(join(tmpdir(), 'coffer-conformance-'));
const outputs = mkdtempSync(join(tmpdir(), 'coffer-conformance-out-'));

/** Suite runs still going: a signal stops them, so none is left writing into folders that are gone. */
const running = new Map();
let interrupted = null;
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    console.error(`conformance: ${signal}: stopping the suite and the daemon`);
    interrupted = signal;
    for (const child of running.keys()) child.kill();
  });
}
function stopIfInterrupted() {
  if (interrupted) throw new Error(`interrupted by ${interrupted}`);
}

function run(args, timeoutMs) {
  stopIfInterrupted();
  let child;
  const done = new Promise((resolvePromise) => {
    child = execFile(process.execPath, args, { cwd: ROOT, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      running.delete(child);
      resolvePromise({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr, timedOut: Boolean(error?.killed) });
    });
  });
  running.set(child, done);
  return done.then((result) => {
    stopIfInterrupted();
    return result;
  });
}

async function cleanup() {
  await Promise.all(running.values());
  // daemon.json names the daemon even when the start failed or timed out after spawning it.
  const daemon = readDaemonFile(home);
  await stopDaemonProcess(home).catch((error) => {
    console.error(`conformance: ${error.message}; killing it`);
    if (daemon !== null && isProcessAlive(daemon.pid)) process.kill(daemon.pid, 'SIGKILL');
  });
  rmSync(outputs, { recursive: true, force: true });
  if (opts.keep) console.log(`conformance: kept ${home}`);
  else rmSync(home, { recursive: true, force: true });
}

async function startCoffer() {
  // The suite has no way to present a credential: this private daemon (its own
  // temporary home) uses the documented opt-out of /mcp authentication.
  process.env.COFFER_MCP_AUTH = 'none';
  const { file } = await startDaemonProcess(home, { port: 0 });
  // The CLI's own REST client: it reads the port and token from COFFER_HOME/daemon.json (mode 0600).
  const api = ApiClient.forHome(home);
  await api.post('/servers', {
    name: SERVER,
    namespace: '',
    transport: { type: 'stdio', command: process.execPath, args: [FIXTURE, '--transport', 'stdio'], env: {}, cwd: null },
  });
  const until = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    stopIfInterrupted();
    const { health } = await api.get(`/servers/${SERVER}`);
    if (health.state === 'ready') break;
    if (Date.now() > until) throw new Error(`the fixture did not become ready in ${READY_TIMEOUT_MS} ms: ${JSON.stringify(health)}`);
    await new Promise((resolveWait) => setTimeout(resolveWait, 100));
  }
  return { port: file.port, version: (await api.get('/daemon/status')).version };
}

/** Runs the suite with -o; each scenario leaves <dir>/server-<scenario>-<timestamp>/checks.json. */
async function runSuite(url, selection) {
  const dir = mkdtempSync(join(outputs, 'run-'));
  const result = await run([SUITE, 'server', '--url', url, ...selection, '-o', dir], SUITE_TIMEOUT_MS);
  const checks = new Map();
  for (const entry of readdirSync(dir)) {
    const scenario = entry.replace(/^server-/, '').replace(/-\d{4}-\d\d-\d\dT[\d-]+Z$/, '');
    const file = join(dir, entry, 'checks.json');
    // A scenario cut short leaves its folder without checks.json: no result, which verdict() counts as failed.
    if (existsSync(file)) checks.set(scenario, JSON.parse(readFileSync(file, 'utf8')));
  }
  return { ...result, checks };
}

/** One scenario's verdict: failed when any check failed, or when it left no result at all. */
function verdict(name, checks) {
  if (checks === undefined) return { name, passed: false, counts: {}, failures: [{ id: name, errorMessage: 'no result: the suite crashed or timed out before this scenario finished' }] };
  const counts = {};
  for (const check of checks) counts[check.status] = (counts[check.status] ?? 0) + 1;
  const failures = checks.filter((check) => check.status === 'FAILURE').map(({ id, errorMessage, details }) => ({ id, errorMessage, details }));
  const warnings = checks.filter((check) => check.status === 'WARNING').map(({ id, errorMessage }) => ({ id, errorMessage }));
  return { name, passed: failures.length === 0, counts, failures, warnings };
}

function printTable(active, pending) {
  const rows = [...active.map((row) => ({ ...row, suite: 'active' })), ...pending.map((row) => ({ ...row, suite: 'pending' }))];
  const width = Math.max(...rows.map((row) => row.name.length));
  console.log(`\n${'scenario'.padEnd(width)}  suite    result  ok/fail/warn  first failure`);
  for (const row of rows) {
    const { SUCCESS = 0, FAILURE = 0, WARNING = 0 } = row.counts;
    const first = row.failures[0];
    const reason = first ? `${first.id}: ${first.errorMessage ?? ''}`.replace(/\s+/g, ' ').slice(0, 160) : '';
    console.log(`${row.name.padEnd(width)}  ${row.suite.padEnd(7)}  ${row.passed ? 'PASS' : 'FAIL'}    ${`${SUCCESS}/${FAILURE}/${WARNING}`.padEnd(12)}  ${reason}`);
  }
}

let exitCode = 1;
try {
  const { port, version } = await startCoffer();
  const url = `http://127.0.0.1:${port}/mcp`;
  console.log(`conformance: coffer ${version} on ${url}, fronting the fixture over stdio with namespace ""`);

  let activeNames;
  let pending = [];
  let suiteRun;
  if (opts.scenario) {
    activeNames = [opts.scenario];
    suiteRun = await runSuite(url, ['--scenario', opts.scenario]);
  } else {
    // The full server list minus the pending suite is the active suite: a scenario that leaves no result still counts.
    const listed = await run([SUITE, 'list', '--server'], 60_000);
    const all = [...listed.stdout.matchAll(/^\s+- (\S+)$/gm)].map((match) => match[1]);
    const pendingRun = await runSuite(url, ['--suite', 'pending']);
    pending = [...pendingRun.checks].map(([name, checks]) => verdict(name, checks));
    activeNames = all.filter((name) => !pendingRun.checks.has(name));
    suiteRun = await runSuite(url, ['--suite', 'active']);
  }
  if (suiteRun.timedOut) console.error(`conformance: the suite was stopped after ${SUITE_TIMEOUT_MS} ms`);
  const active = activeNames.map((name) => verdict(name, suiteRun.checks.get(name)));
  printTable(active, pending);

  const failed = active.filter((row) => !row.passed);
  const file = opts.out ? resolve(opts.out) : join(RESULTS, `conformance-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  mkdirSync(dirname(file), { recursive: true });
  const suiteVersion = JSON.parse(readFileSync(join(dirname(SUITE), '..', 'package.json'), 'utf8')).version;
  writeFileSync(
    file,
    JSON.stringify({ date: new Date().toISOString(), coffer: version, suite: `@modelcontextprotocol/conformance@${suiteVersion}`, node: process.version, url, active, pending }, null, 2) + '\n',
  );
  console.log(`\nconformance: ${active.length - failed.length}/${active.length} active scenarios passed${failed.length ? ` (failed: ${failed.map((row) => row.name).join(', ')})` : ''}; ${pending.filter((row) => row.passed).length}/${pending.length} pending passed; ${file}`);
  exitCode = failed.length === 0 && active.length > 0 ? 0 : 1;
} catch (error) {
  // A refused registration (CliError from the REST client) carries the daemon's details: which field, why.
  console.error(`conformance: ${error instanceof Error ? error.message : String(error)}${error?.details ? ` ${JSON.stringify(error.details)}` : ''}`);
} finally {
  await cleanup();
}
process.exit(interrupted ? 130 : exitCode);
