// `npm run conformance`: the official MCP conformance suite (server mode) against
// coffer's /mcp, with coffer fronting a conformance fixture over stdio under the
// empty namespace, so the suite sees the fixture's own names; beside it, also
// unprefixed, test/fixtures/tasks-upstream.ts (2026-07-28 only) serves the tools
// of the tasks-* scenarios, which coffer routes, not runs. The fixture (--fixture):
//   legacy  test/fixtures/conformance-upstream.ts, SDK v1, 2025-11-25 only: modern
//           callers reach it through coffer's bridge;
//   modern  test/fixtures/conformance-modern.ts --legacy reject, SDK v2, 2026-07-28
//           only: 2025-11-25 clients reach it through the bridge the other way;
//   both    the same fixture serving both eras (--legacy stateless), with coffer
//           pinned to 2025-11-25 for it: the SDK v2 server's own 2025 era (its shim
//           asks input_required questions as requests) behind coffer. Under auto
//           coffer would pick 2026-07-28, the path `modern` already covers.
// By default legacy and modern run, one after another (the two the issue's proof
// names); both only when asked for: it adds half again to the run (and to npm
// test's) and mostly tests the SDK's shim.
// One daemon per fixture serves both requirement sets: 2025-11-25 (the legacy era,
// session and initialize) and 2026-07-28 (the modern era, per-request _meta).
// The client-auth part runs the suite's client-side auth scenarios (those a
// requirement set scores, and the auth extensions it reports) with coffer as
// the client: scripts/conformance-client.mjs starts a daemon of its own per
// scenario, registers the scenario's server, signs in and lists/calls through
// coffer. Its baseline is conformance/baseline-client-auth-<requirements>.yml
// (`client: [scenario, ...]`). The client part runs the other client scenarios
// the same way (no sign-in: the driver lists, calls, reads and gets through
// coffer, answering elicitation with the schema's defaults); its baseline is
// conformance/baseline-client-<requirements>.yml.
//
//   node scripts/conformance.mjs [--part server|client-auth|client] [--requirements 2025-11-25|2026-07-28] [--fixture legacy|modern|both] [--scenario NAME] [--out FILE] [--keep]
//
// The suite needs Node >= 22 while coffer stays on its own runtime: it runs as
// `npx -y -p node@22 -p @modelcontextprotocol/conformance@<SUITE_VERSION> conformance ...`
// (never a devDependency: node@22's bin would shadow node in every npm script).
// Needs a built dist/; builds nothing itself. Prints one table per requirement
// set (and fixture), compares the failures with conformance/baseline-<requirements>.yml
// for the legacy fixture, baseline-<requirements>-<fixture>.yml for the others (the
// suite's expected-failures format: `server: [scenario, ...]`), writes
// bench/results/conformance-<ts>.json (or --out FILE) and exits 1 when a
// scenario fails that the baseline does not expect, or the baseline expects a
// failure of a scenario that now passes (a stale entry: remove it).
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { parse as parseYaml } from 'yaml';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const FIXTURES_DIR = join(ROOT, 'dist', 'test', 'fixtures');
/** The conformance fixtures coffer can front (--fixture): how each is started, what it speaks, and coffer's protocol setting for it (default auto). */
const FIXTURES = {
  legacy: { args: [join(FIXTURES_DIR, 'conformance-upstream.js'), '--transport', 'stdio'], speaks: '2025-11-25 only (SDK v1)' },
  modern: { args: [join(FIXTURES_DIR, 'conformance-modern.js'), '--legacy', 'reject'], speaks: '2026-07-28 only (SDK v2)' },
  both: { args: [join(FIXTURES_DIR, 'conformance-modern.js'), '--legacy', 'stateless'], speaks: 'both eras (SDK v2)', protocol: '2025-11-25' },
};
const TASKS_FIXTURE = join(FIXTURES_DIR, 'tasks-upstream.js');
const RESULTS = join(ROOT, 'bench', 'results');
const BASELINES = join(ROOT, 'conformance');
const SUITE_VERSION = '0.2.0-alpha.12';
const SUITE = ['-y', '-p', 'node@22', '-p', `@modelcontextprotocol/conformance@${SUITE_VERSION}`, 'conformance'];
const REQUIREMENTS = ['2025-11-25', '2026-07-28'];
const READY_TIMEOUT_MS = 30_000;
/** Per scenario; the suite's default is 30 s, and a scenario waiting on something coffer never sends would hold a run that long. */
const SCENARIO_TIMEOUT_MS = 15_000;
const SUITE_TIMEOUT_MS = 15 * 60_000;
const PARTS = ['server', 'client-auth', 'client'];
/** The client the auth scenarios test, on this script's Node (coffer's runtime, not the suite's Node 22). */
const CLIENT_COMMAND = `${process.execPath} ${join(ROOT, 'scripts', 'conformance-client.mjs')}`;
/** Per client scenario: a daemon start, a sign-in and a call, on a loaded machine. */
const CLIENT_SCENARIO_TIMEOUT_MS = 120_000;
/** Client scenarios at once: each starts a daemon, and the suite's own parallel run of them all overloads a small machine. */
const CLIENT_CONCURRENCY = 3;

const { values: opts } = parseArgs({
  options: {
    part: { type: 'string' },
    requirements: { type: 'string' },
    fixture: { type: 'string' },
    scenario: { type: 'string' },
    out: { type: 'string' },
    keep: { type: 'boolean', default: false },
  },
});
const selected = opts.requirements ? [opts.requirements] : REQUIREMENTS;
const parts = opts.part ? [opts.part] : PARTS;
/** Run when --fixture is not given: one fixture on each side of the era bridge. */
const DEFAULT_FIXTURES = ['legacy', 'modern'];
const fixtures = opts.fixture ? [opts.fixture] : DEFAULT_FIXTURES;
if (!PARTS.includes(parts[0])) {
  console.error(`conformance: --part must be one of ${PARTS.join(', ')}`);
  process.exit(2);
}
if (!(fixtures[0] in FIXTURES)) {
  console.error(`conformance: --fixture must be one of ${Object.keys(FIXTURES).join(', ')}`);
  process.exit(2);
}
for (const requirements of selected) {
  if (!REQUIREMENTS.includes(requirements)) {
    console.error(`conformance: --requirements must be one of ${REQUIREMENTS.join(', ')}`);
    process.exit(2);
  }
}

const needed = [['coffer', join(ROOT, 'dist', 'src', 'cli', 'main.js')], ['the tasks fixture', TASKS_FIXTURE], ...fixtures.map((name) => [`the ${name} fixture`, FIXTURES[name].args[0]])];
for (const [what, path] of needed) {
  if (!existsSync(path)) {
    console.error(`conformance: ${what} is missing (${path}); run \`npm run build\` first`);
    process.exit(2);
  }
}

// coffer's own modules, once dist/ is known to exist: the CLI's daemon control and REST client.
const compiled = (path) => import(pathToFileURL(join(ROOT, 'dist', 'src', path)).href);
const { ApiClient } = await compiled('cli/api-client.js');
const { startDaemonProcess, stopDaemonProcess } = await compiled('cli/daemon-control.js');
const { isProcessAlive, readDaemonFile } = await compiled('daemon/daemon-file.js');
const { VERSION } = await compiled('version.js');

/** Each fixture's daemon has a home of its own under this one. */
const homes = mkdtempSync(join(tmpdir(), 'coffer-conformance-'));
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

/** Runs the suite's CLI with these arguments. */
function suite(args, timeoutMs) {
  stopIfInterrupted();
  let child;
  const done = new Promise((resolvePromise) => {
    child = execFile('npx', [...SUITE, ...args], { cwd: ROOT, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
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

/** Stops the daemon of one home, if it has one. */
async function stopCoffer(home) {
  // daemon.json names the daemon even when the start failed or timed out after spawning it.
  const daemon = readDaemonFile(home);
  if (daemon === null) return;
  await stopDaemonProcess(home).catch((error) => {
    console.error(`conformance: ${error.message}; killing it`);
    if (isProcessAlive(daemon.pid)) process.kill(daemon.pid, 'SIGKILL');
  });
}

async function cleanup() {
  await Promise.all(running.values());
  for (const entry of readdirSync(homes)) await stopCoffer(join(homes, entry));
  rmSync(outputs, { recursive: true, force: true });
  if (opts.keep) console.log(`conformance: kept ${homes}`);
  else rmSync(homes, { recursive: true, force: true });
}

/** A daemon of its own fronting one conformance fixture and the tasks fixture; its URL, version, and the era it speaks to the fixture. */
async function startCoffer(fixture) {
  const home = join(homes, fixture);
  mkdirSync(home, { mode: 0o700 });
  // The suite has no way to present a credential: this private daemon (its own
  // temporary home) uses the documented opt-out of /mcp authentication.
  process.env.COFFER_MCP_AUTH = 'none';
  const { file } = await startDaemonProcess(home, { port: 0 });
  // The CLI's own REST client: it reads the port and token from COFFER_HOME/daemon.json (mode 0600).
  const api = ApiClient.forHome(home);
  const servers = { conformance: FIXTURES[fixture].args, tasks: [TASKS_FIXTURE] };
  for (const [name, args] of Object.entries(servers)) {
    const protocol = name === 'conformance' ? FIXTURES[fixture].protocol : undefined;
    await api.post('/servers', { name, namespace: '', transport: { type: 'stdio', command: process.execPath, args, env: {}, cwd: null }, ...(protocol ? { protocol } : {}) });
  }
  const until = Date.now() + READY_TIMEOUT_MS;
  const health = {};
  for (const name of Object.keys(servers)) {
    for (;;) {
      stopIfInterrupted();
      health[name] = (await api.get(`/servers/${name}`)).health;
      if (health[name].state === 'ready') break;
      if (Date.now() > until) throw new Error(`fixture ${name} did not become ready in ${READY_TIMEOUT_MS} ms: ${JSON.stringify(health[name])}`);
      await new Promise((resolveWait) => setTimeout(resolveWait, 100));
    }
  }
  return { home, url: `http://127.0.0.1:${file.port}/mcp`, version: (await api.get('/daemon/status')).version, protocol: health.conformance.protocol_version };
}

/**
 * The server scenarios a requirement set scores, and those it runs and
 * reports without scoring (extensions, pending, added after the release).
 */
async function scenarios(requirements) {
  const listed = await suite(['list', '--server', '--requirements', requirements], 120_000);
  if (listed.code !== 0) throw new Error(`the suite could not list ${requirements}: ${listed.stderr.trim()}`);
  const [required, reported = ''] = listed.stdout.split(/^Run and reported/m);
  const serverPart = required.split(/^Client scenarios/m)[0];
  return {
    scored: [...serverPart.matchAll(/^\s+- (\S+)$/gm)].map((match) => match[1]),
    unscored: [...reported.matchAll(/^\s+- (\S+) \[server\]$/gm)].map((match) => match[1]),
  };
}

/** Runs the suite with -o; each scenario leaves <dir>/server-<scenario>-<timestamp>/checks.json. */
async function runSuite(url, selection) {
  const dir = mkdtempSync(join(outputs, 'run-'));
  const result = await suite(['server', '--url', url, ...selection, '--timeout', String(SCENARIO_TIMEOUT_MS), '-o', dir], SUITE_TIMEOUT_MS);
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
function verdict(name, checks, scored) {
  if (checks === undefined) return { name, scored, passed: false, counts: {}, failures: [{ id: name, errorMessage: 'no result: the suite crashed or timed out before this scenario finished' }] };
  const counts = {};
  for (const check of checks) counts[check.status] = (counts[check.status] ?? 0) + 1;
  // Client scenarios often say why in the description only.
  const failures = checks.filter((check) => check.status === 'FAILURE').map(({ id, errorMessage, description, details }) => ({ id, errorMessage: errorMessage || description, details }));
  const warnings = checks.filter((check) => check.status === 'WARNING').map(({ id, errorMessage }) => ({ id, errorMessage }));
  return { name, scored, passed: failures.length === 0, counts, failures, warnings };
}

/** The scenarios a committed baseline expects to fail (absent file: none); `side` is its key, server or client. */
function baseline(name, side) {
  const file = join(BASELINES, `${name}.yml`);
  if (!existsSync(file)) return new Set();
  return new Set(parseYaml(readFileSync(file, 'utf8'))?.[side] ?? []);
}

/** Failures the baseline does not expect, and expected failures that now pass. */
function compare(rows, expected) {
  const ran = new Set(rows.map((row) => row.name));
  return {
    unexpected: rows.filter((row) => !row.passed && !expected.has(row.name)).map((row) => row.name),
    stale: rows.filter((row) => row.passed && expected.has(row.name)).map((row) => row.name),
    // A baselined scenario the suite no longer runs is stale too, unless only one scenario was asked for.
    gone: opts.scenario ? [] : [...expected].filter((name) => !ran.has(name)),
  };
}

function printTable(title, rows, expected) {
  const width = Math.max('scenario'.length, ...rows.map((row) => row.name.length));
  console.log(`\n${title}\n${'scenario'.padEnd(width)}  scored  result  baseline  ok/fail/warn  first failure`);
  for (const row of rows) {
    const { SUCCESS = 0, FAILURE = 0, WARNING = 0 } = row.counts;
    const first = row.failures[0];
    const reason = first ? `${first.id}: ${first.errorMessage ?? ''}`.replace(/\s+/g, ' ').slice(0, 140) : '';
    const base = expected.has(row.name) ? 'fail' : '';
    console.log(`${row.name.padEnd(width)}  ${(row.scored ? 'yes' : 'no').padEnd(6)}  ${row.passed ? 'PASS' : 'FAIL'}    ${base.padEnd(8)}  ${`${SUCCESS}/${FAILURE}/${WARNING}`.padEnd(12)}  ${reason}`);
  }
}

/** Checks passed of all checks run, over some rows. */
function checkCount(rows) {
  let ok = 0;
  let all = 0;
  for (const row of rows) for (const [status, n] of Object.entries(row.counts)) if (status !== 'INFO' && status !== 'SKIPPED') ((all += n), status === 'SUCCESS' && (ok += n));
  return { ok, all };
}

async function runRequirements(url, requirements, fixture) {
  const { scored, unscored } = await scenarios(requirements);
  const names = opts.scenario ? [opts.scenario] : [...scored, ...unscored];
  const selection = opts.scenario ? ['--scenario', opts.scenario] : ['--requirements', requirements];
  const run = await runSuite(url, selection);
  if (run.timedOut) console.error(`conformance: the ${requirements} run was stopped after ${SUITE_TIMEOUT_MS} ms`);
  const rows = names.map((name) => verdict(name, run.checks.get(name), !unscored.includes(name)));
  // The legacy fixture's baselines keep the name they had before there were other fixtures.
  const file = fixture === 'legacy' ? `baseline-${requirements}` : `baseline-${requirements}-${fixture}`;
  return summarise('server', requirements, rows, baseline(file, 'server'), fixture);
}

/** The client scenarios a requirement set scores, and those it runs and reports: the auth ones (`auth/…`) or the others. */
async function clientScenarios(requirements, auth) {
  const listed = await suite(['list', '--client', '--requirements', requirements], 120_000);
  if (listed.code !== 0) throw new Error(`the suite could not list ${requirements}: ${listed.stderr.trim()}`);
  const [required, reported = ''] = listed.stdout.split(/^Run and reported/m);
  const clientPart = required.split(/^Client scenarios/m)[1] ?? '';
  const wanted = (name) => name.startsWith('auth/') === auth;
  return {
    scored: [...clientPart.matchAll(/^\s+- (\S+)$/gm)].map((match) => match[1]).filter(wanted),
    unscored: [...reported.matchAll(/^\s+- (\S+) \[client\]$/gm)].map((match) => match[1]).filter(wanted),
  };
}

/** One client scenario at the requirement set's wire version; it leaves <dir>/[auth/]<name>-<timestamp>/checks.json. */
async function runClientScenario(requirements, name) {
  const dir = mkdtempSync(join(outputs, 'client-'));
  const args = ['client', '--command', CLIENT_COMMAND, '--scenario', name, '--spec-version', requirements, '--force', '--timeout', String(CLIENT_SCENARIO_TIMEOUT_MS), '-o', dir];
  const result = await suite(args, CLIENT_SCENARIO_TIMEOUT_MS + 60_000);
  if (result.timedOut) console.error(`conformance: client scenario ${name} was stopped`);
  const parent = join(dir, dirname(name));
  const prefix = `${name.split('/').pop()}-`;
  const entry = existsSync(parent) ? readdirSync(parent).find((item) => item.startsWith(prefix) && existsSync(join(parent, item, 'checks.json'))) : undefined;
  return entry === undefined ? undefined : JSON.parse(readFileSync(join(parent, entry, 'checks.json'), 'utf8'));
}

/** The client scenarios, auth (`client-auth`) or not (`client`), at CLIENT_CONCURRENCY at a time. */
async function runClient(part, requirements) {
  const { scored, unscored } = await clientScenarios(requirements, part === 'client-auth');
  const names = opts.scenario ? [opts.scenario] : [...scored, ...unscored];
  const checks = new Map();
  const queue = [...names];
  const worker = async () => {
    for (let name = queue.shift(); name !== undefined; name = queue.shift()) checks.set(name, await runClientScenario(requirements, name));
  };
  await Promise.all(Array.from({ length: CLIENT_CONCURRENCY }, worker));
  const rows = names.map((name) => verdict(name, checks.get(name), !unscored.includes(name)));
  return summarise(part, requirements, rows, baseline(`baseline-${part}-${requirements}`, 'client'));
}

/** Prints one part's table and totals against its baseline (for the server part, of one fixture). */
function summarise(part, requirements, rows, expected, fixture) {
  const label = fixture ? `${requirements} --fixture ${fixture}` : requirements;
  printTable(`${part} --requirements ${label}`, rows, expected);
  const comparison = compare(rows, expected);
  const scoredRows = rows.filter((row) => row.scored);
  const checks = checkCount(scoredRows);
  const summary = {
    scenarios: rows.length,
    passed: rows.filter((row) => row.passed).length,
    scored: scoredRows.length,
    scoredPassed: scoredRows.filter((row) => row.passed).length,
    scoredChecks: checks,
    checks: checkCount(rows),
  };
  console.log(
    `\n${part} ${label}: ${summary.passed}/${summary.scenarios} scenarios passed (scored: ${summary.scoredPassed}/${summary.scored}, ${checks.ok}/${checks.all} checks; all: ${summary.checks.ok}/${summary.checks.all} checks)` +
      (comparison.unexpected.length ? `; UNEXPECTED failures: ${comparison.unexpected.join(', ')}` : '') +
      (comparison.stale.length ? `; STALE baseline entries (now passing, remove them): ${comparison.stale.join(', ')}` : '') +
      (comparison.gone.length ? `; baseline entries the suite no longer runs: ${comparison.gone.join(', ')}` : '') +
      (comparison.unexpected.length + comparison.stale.length + comparison.gone.length === 0 ? '; matches the baseline' : ''),
  );
  return { part, requirements, rows, summary, baseline: comparison };
}

let exitCode = 1;
try {
  const runs = [];
  let url = null;
  let version = VERSION;
  if (parts.includes('server')) {
    // One fixture at a time, each behind a daemon of its own, stopped before the next starts (the machine is small).
    for (const fixture of fixtures) {
      const coffer = await startCoffer(fixture);
      ({ url, version } = coffer);
      console.log(
        `conformance: coffer ${version} on ${url}, fronting the ${fixture} fixture (${FIXTURES[fixture].speaks}; coffer speaks ${coffer.protocol} to it) and the tasks fixture over stdio with namespace ""; suite @modelcontextprotocol/conformance@${SUITE_VERSION}`,
      );
      // Each run names its fixture and the protocol version coffer negotiated with it.
      for (const requirements of selected) runs.push({ ...(await runRequirements(url, requirements, fixture)), fixture, protocol: coffer.protocol });
      await stopCoffer(coffer.home);
    }
  }
  if (parts.includes('client-auth')) {
    console.log(`conformance: client auth scenarios with coffer as the client (${CLIENT_COMMAND}); suite @modelcontextprotocol/conformance@${SUITE_VERSION}`);
    for (const requirements of selected) runs.push(await runClient('client-auth', requirements));
  }
  if (parts.includes('client')) {
    console.log(`conformance: client scenarios other than auth with coffer as the client (${CLIENT_COMMAND}); suite @modelcontextprotocol/conformance@${SUITE_VERSION}`);
    for (const requirements of selected) runs.push(await runClient('client', requirements));
  }

  const file = opts.out ? resolve(opts.out) : join(RESULTS, `conformance-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify({ date: new Date().toISOString(), coffer: version, suite: `@modelcontextprotocol/conformance@${SUITE_VERSION}`, node: process.version, url, runs }, null, 2) + '\n');
  console.log(`\nconformance: results in ${file}`);
  const clean = (run) => run.baseline.unexpected.length + run.baseline.stale.length + run.baseline.gone.length === 0 && run.rows.length > 0;
  exitCode = runs.every(clean) ? 0 : 1;
} catch (error) {
  // A refused registration (CliError from the REST client) carries the daemon's details: which field, why.
  console.error(`conformance: ${error instanceof Error ? error.message : String(error)}${error?.details ? ` ${JSON.stringify(error.details)}` : ''}`);
} finally {
  await cleanup();
}
process.exit(interrupted ? 130 : exitCode);
