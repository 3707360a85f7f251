// The benchmark harness: `npm run bench` (full, ~10 min) or
// `npm run bench -- --quick` (a few minutes). Starts its own synthetic upstreams,
// coffer daemons and mcp-hub peers on 127.0.0.1, measures every figure side by
// side, prints a table, writes bench/results/<timestamp>.json and .svg.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { actorStartRows } from './actor-start.js';
import { parseOrExit, positiveInteger } from './cli-args.js';
import { killAllChildren } from './proc.js';
import { machine, table, type Row } from './report.js';
import { callScenarios } from './scenarios/calls.js';
import type { Context, Settings } from './scenarios/context.js';
import { fanoutScenarios, footprintScenario, type ScalePoint } from './scenarios/fanout.js';
import { hungScenarios } from './scenarios/hung.js';
import { modernScenario } from './scenarios/modern.js';
import { spreadScenarios } from './scenarios/spread.js';
import { opsScenario } from './scenarios/ops.js';
import { lineChart } from './svg.js';
import { startHost } from './targets/host.js';
import { BENCH_DIST, MCP_HUB_VERSION, SDK_VERSION } from './targets/paths.js';

const USAGE = `usage: npm run bench [-- options]
  --quick              every row with fewer repetitions and smaller counts (a few minutes)
  --only LIST          comma list of calls, fanout, hung, spread, modern (tools/call and tools/list in both protocol eras),
                       footprint (only the footprint rows, which fanout includes),
                       ops (call cost of metrics and tracing: not in the default set),
                       actor-start (boot CPU, RSS per actor and time to all ready at 50 and 200 upstreams: not in the default set)
  --floor              with actor-start: the same figures for bare worker threads, what any worker costs
  --actor-start-at N   upstreams of the actor-start rows (50 and 200 full, 50 quick)
  --footprint-at N     upstreams of the footprint rows (200 full, 10 quick)
  --cpu-prof DIR       profile the coffer daemon of the call scenarios
  --out DIR            where the JSON and SVG go (default bench/results)
  --help               this text
exit codes: 0 ran (targets met or not), 1 a scenario failed, 2 usage error or watchdog`;

const SCENARIOS = ['calls', 'fanout', 'hung', 'footprint', 'spread', 'modern', 'ops', 'actor-start'];

const values = parseOrExit(
  {
    quick: { type: 'boolean', default: false },
    floor: { type: 'boolean', default: false },
    only: { type: 'string' },
    'cpu-prof': { type: 'string' },
    'footprint-at': { type: 'string' },
    'actor-start-at': { type: 'string' },
    out: { type: 'string', default: join(BENCH_DIST, '..', '..', 'bench', 'results') },
  },
  USAGE,
  (parsed) => {
    if (positiveInteger(parsed['footprint-at']) === null) return '--footprint-at must be a positive integer';
    if (positiveInteger(parsed['actor-start-at']) === null) return '--actor-start-at must be a positive integer';
    const unknown = (parsed.only ?? '').split(',').filter((name) => name !== '' && !SCENARIOS.includes(name));
    return unknown.length > 0 ? `--only: unknown scenario ${unknown.join(', ')}` : null;
  },
);
const footprintAt = positiveInteger(values['footprint-at']);
const actorStartAt = positiveInteger(values['actor-start-at']);

const quick = values.quick;
const settings: Settings = {
  quick,
  toolsPerUpstream: 20,
  // An actor takes ~0.4 s of CPU to come up on this machine, so quick uses fewer upstreams
  // (with more tools each, so the headline list is still 2,000 tools).
  fanoutTools: quick ? 80 : 20,
  listAt: quick ? 25 : 100,
  // A fresh daemon starts all its actors at once, which is slow here: quick restarts a small one.
  coldAt: quick ? 10 : 100,
  hungUpstreams: quick ? 10 : 50,
  callRounds: quick ? 100 : 1000,
  warmupMs: quick ? 8_000 : 20_000,
  listRounds: quick ? 8 : 30,
  coldRestarts: quick ? 1 : 2,
  throughputClients: 16,
  throughputMs: quick ? 2_000 : 5_000,
  throughputRounds: quick ? 1 : 3,
  hungDeadlineMs: 500,
  hungLists: quick ? 3 : 10,
  hungCalls: quick ? 100 : 400,
  peerHungWaitMs: quick ? 3_000 : 15_000,
  scalePoints: quick ? [10, 25] : [10, 100, 300, 500],
  peerScaleMax: 500,
  footprintUpstreams: footprintAt ?? (quick ? 10 : 200),
  spreadPoints: quick ? [10, 50] : [10, 50, 200],
  spreadLatencyRounds: quick ? 200 : 1000,
  actorStartPoints: actorStartAt ? [actorStartAt] : quick ? [50] : [50, 200],
  loopDeadlineMs: quick ? 12_000 : 45_000,
  readyTimeoutMs: (count) => 30_000 + count * 2_000,
  ...(values['cpu-prof'] ? { cpuProfDir: values['cpu-prof'] } : {}),
};
const only = new Set((values.only ?? 'calls,fanout,hung,spread,modern').split(','));
/** Whole-run bound: a stuck step fails the run instead of hanging it. */
const WATCHDOG_MS = quick ? 240_000 : 55 * 60_000;

const started = Date.now();
const log = (message: string) => process.stderr.write(`[bench +${((Date.now() - started) / 1000).toFixed(1)}s] ${message}\n`);

const watchdog = setTimeout(() => {
  log(`watchdog: run exceeded ${WATCHDOG_MS / 1000} s, stopping every child`);
  killAllChildren();
  process.exit(2);
}, WATCHDOG_MS);
watchdog.unref();

const rows: Row[] = [];
const failures: string[] = [];
let scale: ScalePoint[] = [];
const host = await startHost(settings.toolsPerUpstream);
const ctx: Context = { settings, host, log };
try {
  const scenarios: Array<[string, () => Promise<void>]> = [
    ['calls', async () => void rows.push(...(await callScenarios(ctx)))],
    [
      'fanout',
      async () => {
        const result = await fanoutScenarios(ctx);
        rows.push(...result.rows);
        scale = result.scale;
      },
    ],
    ['hung', async () => void rows.push(...(await hungScenarios(ctx)))],
    ['spread', async () => void rows.push(...(await spreadScenarios(ctx)))],
    ['modern', async () => void rows.push(...(await modernScenario(ctx)))],
    ['footprint', async () => void rows.push(...(await footprintScenario(ctx)))],
    ['ops', async () => void rows.push(...(await opsScenario(ctx)))],
    ['actor-start', async () => void rows.push(...(await actorStartRows(ctx, values.floor)))],
  ];
  for (const [name, scenario] of scenarios) {
    if (!only.has(name)) continue;
    try {
      await scenario();
    } catch (error) {
      // One broken scenario must not hide the others' figures; the run still fails at the end.
      failures.push(`${name}: ${error instanceof Error ? error.stack ?? error.message : String(error)}`);
      log(`scenario ${name} failed: ${String(error)}`);
    }
  }
} finally {
  await host.stop();
}

const elapsedS = (Date.now() - started) / 1000;
const order = ['call-overhead-http', 'call-overhead-stdio', 'warm-list', 'cold-list', 'hung-startup', 'hung-midsession', 'hung-calls', 'throughput', 'spread', 'modern', 'footprint-rss', 'footprint-start', 'scale', 'ops-overhead', 'actor-start'];
// Spread, era and actor-start rows (several each) keep their measured order within their place.
const FAMILIES = ['spread', 'modern', 'actor-start'];
const rank = (id: string): number => order.indexOf(FAMILIES.find((family) => id.startsWith(family)) ?? id);
rows.sort((a, b) => rank(a.id) - rank(b.id));
const stamp = new Date().toISOString().replace(/[:.]/g, '-');
mkdirSync(values.out, { recursive: true });
const jsonFile = join(values.out, `${stamp}.json`);
const svgFile = join(values.out, `${stamp}.svg`);
const info = { ...machine(), sdk: SDK_VERSION, peer: `mcp-hub ${MCP_HUB_VERSION}` };
writeFileSync(jsonFile, `${JSON.stringify({ startedAt: new Date(started).toISOString(), elapsedS, mode: quick ? 'quick' : 'full', machine: info, settings: { ...settings, readyTimeoutMs: 'count → 30 s + 2 s per upstream' }, rows, scale, failures }, null, 2)}\n`);
if (scale.length > 0) {
  const series = [
    { name: 'coffer', colour: '#1f77b4', points: scale.map((p) => ({ x: p.upstreams, y: p.coffer.median })) },
    { name: 'floor (static)', colour: '#2ca02c', points: scale.map((p) => ({ x: p.upstreams, y: p.floor.median })) },
    { name: `mcp-hub ${MCP_HUB_VERSION}`, colour: '#d62728', points: scale.filter((p) => p.peer).map((p) => ({ x: p.upstreams, y: p.peer!.median })) },
  ];
  writeFileSync(svgFile, lineChart(`Warm tools/list latency (median), ${settings.fanoutTools} tools per upstream`, 'upstreams', 'ms', series));
}

const met = rows.filter((row) => row.met === true).length;
process.stdout.write(`\ncoffer benchmark (${quick ? 'quick' : 'full'}), ${elapsedS.toFixed(0)} s · ${info.cpus} × ${info.model}, ${info.memoryGb} GB, Node ${info.node}, peer ${info.peer}\n\n`);
process.stdout.write(`${table(rows)}\n\n`);
for (const row of rows) if (row.note) process.stdout.write(`- ${row.scenario}: ${row.note}\n`);
process.stdout.write(`\n${met} of ${rows.length} targets met · results: ${jsonFile}${scale.length ? ` · chart: ${svgFile}` : ''}\n`);
if (failures.length > 0) {
  process.stdout.write(`\nFAILED scenarios:\n${failures.join('\n')}\n`);
  process.exitCode = 1;
}
clearTimeout(watchdog);
