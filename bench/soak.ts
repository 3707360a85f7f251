// The soak: `node dist/bench/soak.js [--minutes N | --seconds N] [--clients N]`
// (default 10 minutes, 16 clients). One coffer daemon (its own process) with 50
// upstreams: 43 healthy synthetic HTTP servers, 2 that hang every list and
// call, 2 stdio servers in a crash loop, 2 flaky ones (stdio crashing /
// HTTP 500) that break and heal every 15 s, and a hostile one that answers
// with values nested 100,000 levels deep (its results, a list item, its
// notifications and its requests to clients, in turn every 15 s). The clients list and call across
// all of them for the whole run. Every request must be answered (a result or
// a JSON-RPC error): a client-side timeout or a broken transport counts as
// unanswered. The daemon's RSS, open fds, threads (one per actor worker) and
// child processes are sampled from /proc, and the size of its home (database
// and logs); the run passes when every request was answered and, after the
// load, those figures are back near their steady values. Prints a table; writes bench/results/soak-<timestamp>.json.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { faultSwitch, networkConfig, startNetworkFixture, stdioFixture, type FaultSwitch } from '../test/fixtures/fixture-servers.js';
import { parseOrExit, positiveInteger } from './cli-args.js';
import { closeAll, connect, listAll } from './clients.js';
import { killAllChildren, sleep } from './proc.js';
import { machine } from './report.js';
import { sample, typical, type ProcessSample } from './soak-probe.js';
import { summarize } from './stats.js';
import { Coffer } from './targets/coffer.js';
import { startHost } from './targets/host.js';
import { BENCH_DIST } from './targets/paths.js';

const USAGE = `usage: npm run soak [-- --minutes N | --seconds N] [--clients N] [--out DIR]
  default 10 minutes, 16 clients, results in bench/results
exit codes: 0 every request answered and the daemon back to steady, 1 not, 2 usage error`;

const values = parseOrExit(
  {
    minutes: { type: 'string' },
    seconds: { type: 'string' },
    clients: { type: 'string', default: '16' },
    out: { type: 'string', default: join(BENCH_DIST, '..', '..', 'bench', 'results') },
  },
  USAGE,
  (parsed) => {
    for (const name of ['minutes', 'seconds', 'clients'] as const) if (positiveInteger(parsed[name]) === null) return `--${name} must be a positive integer`;
    return parsed.minutes !== undefined && parsed.seconds !== undefined ? 'give --minutes or --seconds, not both' : null;
  },
);

const DURATION_MS = values.seconds ? Number(values.seconds) * 1_000 : Number(values.minutes ?? 10) * 60_000;
const CLIENTS = Number(values.clients);
const HEALTHY = 43;
/** What the hostile upstream nests deep, in turn; and how deep (past any serialiser's stack). */
const HOSTILE_TARGETS = ['result', 'list', 'notification', 'request'] as const;
const HOSTILE_DEPTH = 100_000;
/** The home grows with the load (invocation log, actor logs), not once it stops: nothing may keep writing. */
const DISK_SETTLE_SLACK_MB = 1;
const TOOLS_PER_UPSTREAM = 10;
const FLIP_EVERY_MS = 15_000;
const SAMPLE_EVERY_MS = 5_000;
/** After the load stops: time for in-flight work, backoffs and closing children to settle. */
const SETTLE_MS = 20_000;
/** Client-side bound on one request: well past connect_ms + request_ms of any upstream. */
const CLIENT_TIMEOUT_MS = 30_000;
const TIMEOUTS = { connect_ms: 10_000, request_ms: 5_000, list_deadline_ms: 1_000 };
/** What "back to steady" allows: a few fds in passing (sockets being closed), GC noise in RSS. */
const FD_SLACK = 16;
const RSS_SLACK = 1.25;

type Outcome = 'ok' | 'coffer error' | 'upstream error' | 'unanswered';

interface Tally {
  outcomes: Record<Outcome, number>;
  codes: Record<string, number>;
  listMs: number[];
  callMs: number[];
  unanswered: string[];
}

function classify(error: unknown): { outcome: Outcome; code: string } {
  const { code, data } = error as { code?: number; data?: { code?: string } };
  if (typeof data?.code === 'string') return { outcome: 'coffer error', code: data.code };
  // -32001 without data.code is the SDK client's own timeout: coffer did not answer.
  if (typeof code === 'number' && code !== -32001) return { outcome: 'upstream error', code: String(code) };
  return { outcome: 'unanswered', code: String(error) };
}

async function clientLoop(client: Client, names: string[], until: number, tally: Tally): Promise<void> {
  while (Date.now() < until) {
    const listing = Math.random() < 0.2;
    const started = Date.now();
    try {
      if (listing) await listAll(client, CLIENT_TIMEOUT_MS);
      else await client.callTool({ name: `${names[Math.floor(Math.random() * names.length)]}__echo`, arguments: { text: 'soak' } }, undefined, { timeout: CLIENT_TIMEOUT_MS });
      tally.outcomes.ok += 1;
    } catch (error) {
      const { outcome, code } = classify(error);
      tally.outcomes[outcome] += 1;
      tally.codes[code] = (tally.codes[code] ?? 0) + 1;
      if (outcome === 'unanswered' && tally.unanswered.length < 20) tally.unanswered.push(code);
    }
    (listing ? tally.listMs : tally.callMs).push(Date.now() - started);
  }
}

async function main(): Promise<number> {
  const startedAt = Date.now();
  const dir = mkdtempSync(join(tmpdir(), 'coffer-soak-'));
  const host = await startHost(TOOLS_PER_UPSTREAM);
  await host.configure({ servers: { [HEALTHY]: { hang: true }, [HEALTHY + 1]: { hang: true } } });
  const switchIn = (name: string, initial = {}): FaultSwitch => {
    mkdirSync(join(dir, name));
    return faultSwitch(join(dir, name), initial);
  };
  const loops = [switchIn('loop0', { fault: 'crash-loop' }), switchIn('loop1', { fault: 'crash-loop' })];
  const flakyStdio = switchIn('flaky0');
  const flakyHttp = switchIn('flaky1');
  const hostile = switchIn('hostile0', { fault: 'deep', deep: HOSTILE_TARGETS[0], depth: HOSTILE_DEPTH });
  const flakyServer = await startNetworkFixture('http', ['--name', 'flaky1', ...flakyHttp.args]);
  const coffer = await Coffer.start();
  const configs = [
    ...Array.from({ length: HEALTHY }, (_unused, i) => networkConfig(`h${i}`, 'http', host.url(i), TIMEOUTS)),
    networkConfig('hang0', 'http', host.url(HEALTHY), TIMEOUTS),
    networkConfig('hang1', 'http', host.url(HEALTHY + 1), TIMEOUTS),
    ...loops.map((loop, i) => stdioFixture(`loop${i}`, loop.args, TIMEOUTS)),
    stdioFixture('flaky0', flakyStdio.args, TIMEOUTS),
    networkConfig('flaky1', 'http', flakyServer.url, TIMEOUTS),
    stdioFixture('hostile0', hostile.args, TIMEOUTS),
  ];
  const stdioUpstreams = configs.filter((config) => config.transport.type === 'stdio').length;
  const samples: ProcessSample[] = [];
  const tally: Tally = { outcomes: { ok: 0, 'coffer error': 0, 'upstream error': 0, unanswered: 0 }, codes: {}, listMs: [], callMs: [], unanswered: [] };
  let clients: Client[] = [];
  try {
    for (const config of configs) {
      const created = await coffer.api('POST', '/servers', config);
      if (created.status !== 201) throw new Error(`register ${config.name}: ${created.status} ${JSON.stringify(created.body)}`);
    }
    // Healthy, hanging (they answer initialize) and flaky ones come up; the crash loops never stay up.
    await coffer.waitReady(configs.length - loops.length, 180_000);
    const ready = sample(coffer.pid, startedAt, coffer.home);
    console.log(`${configs.length} upstreams registered, ${configs.length - loops.length} ready after ${ready.at} s; load for ${DURATION_MS / 1000} s with ${CLIENTS} clients`);

    clients = await Promise.all(Array.from({ length: CLIENTS }, (_unused, i) => connect(coffer.mcp, 'http', `soak-${i}`)));
    const loadStartedAt = Date.now();
    const until = loadStartedAt + DURATION_MS;
    const sampler = setInterval(() => samples.push(sample(coffer.pid, startedAt, coffer.home)), SAMPLE_EVERY_MS);
    let broken = false;
    let flips = 0;
    const flipper = setInterval(() => {
      broken = !broken;
      flips += 1;
      void flakyStdio.set(broken ? { fault: 'crash' } : {});
      void flakyHttp.set(broken ? { fault: 'http-500' } : {});
      void hostile.set({ fault: 'deep', deep: HOSTILE_TARGETS[flips % HOSTILE_TARGETS.length], depth: HOSTILE_DEPTH });
    }, FLIP_EVERY_MS);
    const names = configs.map((config) => config.name);
    await Promise.all(clients.map((client) => clientLoop(client, names, until, tally)));
    clearInterval(flipper);
    const loadEndedAt = Date.now();
    await closeAll(clients);
    clients = [];
    await sleep(SETTLE_MS);
    clearInterval(sampler);
    const settled = [sample(coffer.pid, startedAt, coffer.home), ...samples.filter((s) => s.at * 1000 >= loadEndedAt - startedAt + SETTLE_MS / 2)];
    return report({ startedAt, loadStartedAt, loadEndedAt, ready, samples, settled, tally, stdioUpstreams, upstreams: configs.length, status: (await coffer.api('GET', '/daemon/status')).body });
  } finally {
    await closeAll(clients);
    await coffer.stop();
    await flakyServer.kill();
    await host.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

interface Run {
  startedAt: number;
  loadStartedAt: number;
  loadEndedAt: number;
  ready: ProcessSample;
  samples: ProcessSample[];
  settled: ProcessSample[];
  tally: Tally;
  stdioUpstreams: number;
  upstreams: number;
  status: unknown;
}

function report(run: Run): number {
  const { tally } = run;
  const loadSeconds = (run.loadEndedAt - run.loadStartedAt) / 1000;
  const during = run.samples.filter((s) => s.at * 1000 <= run.loadEndedAt - run.startedAt);
  // Steady: the second fifth of the load, once caches, sockets and backoffs have settled in.
  const steadySamples = during.filter((s) => {
    const intoLoad = s.at * 1000 - (run.loadStartedAt - run.startedAt);
    return intoLoad >= loadSeconds * 200 && intoLoad <= loadSeconds * 400;
  });
  const steady = typical(steadySamples.length > 0 ? steadySamples : during.slice(0, 3));
  const end = typical(run.settled);
  const peak = typical([...run.samples].sort((a, b) => b.rssMb - a.rssMb).slice(0, 1));
  const loadEnd = typical(during.slice(-1));
  const maxChildren = Math.max(...run.samples.map((s) => s.children), run.ready.children);
  const requests = Object.values(tally.outcomes).reduce((sum, n) => sum + n, 0);
  const checks = [
    { check: 'every request answered', ok: tally.outcomes.unanswered === 0, detail: `${tally.outcomes.unanswered} of ${requests} unanswered` },
    { check: `RSS back to steady (≤ ${RSS_SLACK}× steady)`, ok: end.rssMb <= steady.rssMb * RSS_SLACK, detail: `${steady.rssMb} → ${end.rssMb} MB (peak ${peak.rssMb})` },
    { check: `open fds back to steady (± ${FD_SLACK})`, ok: end.fds <= steady.fds + FD_SLACK, detail: `${steady.fds} → ${end.fds}` },
    {
      check: `home (database + logs) stops growing with the load (≤ ${DISK_SETTLE_SLACK_MB} MB more after it)`,
      ok: end.diskMb <= loadEnd.diskMb + DISK_SETTLE_SLACK_MB,
      detail: `${run.ready.diskMb} → ${loadEnd.diskMb} MB by the load's end (${Math.round(((loadEnd.diskMb - run.ready.diskMb) * 1024) / Math.max(requests, 1) * 10) / 10} KB per request) → ${end.diskMb} MB`,
    },
    { check: 'threads (actor workers) back to steady', ok: end.threads <= steady.threads, detail: `${steady.threads} → ${end.threads}` },
    { check: `child processes never above the ${run.stdioUpstreams} stdio upstreams`, ok: maxChildren <= run.stdioUpstreams, detail: `max ${maxChildren}, steady ${steady.children}, end ${end.children}` },
  ];
  const calls = summarize(tally.callMs);
  const lists = summarize(tally.listMs);
  console.log('');
  console.log('| figure | after start-up | steady (load) | end (load over + settle) |');
  console.log('| --- | --- | --- | --- |');
  for (const key of ['rssMb', 'diskMb', 'fds', 'threads', 'children'] as const) console.log(`| ${key === 'rssMb' ? 'RSS MB' : key === 'diskMb' ? 'home MB' : key} | ${run.ready[key]} | ${steady[key]} | ${end[key]} |`);
  console.log('');
  console.log(`requests: ${requests} in ${loadSeconds.toFixed(0)} s (${(requests / loadSeconds).toFixed(0)}/s) — ok ${tally.outcomes.ok}, coffer errors ${tally.outcomes['coffer error']}, upstream errors ${tally.outcomes['upstream error']}, unanswered ${tally.outcomes.unanswered}`);
  console.log(`error codes: ${JSON.stringify(tally.codes)}`);
  console.log(`tools/call ms median ${calls.median} p99 ${calls.p99} max ${calls.max} (n=${calls.n}); tools/list ms median ${lists.median} p99 ${lists.p99} max ${lists.max} (n=${lists.n})`);
  console.log('');
  for (const check of checks) console.log(`${check.ok ? 'PASS' : 'FAIL'}  ${check.check}: ${check.detail}`);
  mkdirSync(values.out!, { recursive: true });
  const file = join(values.out!, `soak-${new Date(run.startedAt).toISOString().replace(/[:.]/g, '-')}.json`);
  const { tally: _tally, ...rest } = run;
  writeFileSync(file, `${JSON.stringify({ machine: machine(), durationMs: DURATION_MS, clients: CLIENTS, ...rest, steady, end, requests, outcomes: tally.outcomes, codes: tally.codes, unansweredExamples: tally.unanswered, callMs: calls, listMs: lists, checks }, null, 2)}\n`);
  console.log(`\nwrote ${file}`);
  return checks.every((check) => check.ok) ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    killAllChildren();
    process.exit(1);
  },
);
