// Actor footprint and start-up at high fan-out (`--only actor-start`): for each
// N, a daemon with N synthetic HTTP upstreams is restarted and timed from spawn
// to every actor ready; boot CPU per actor is the daemon's CPU by then beyond an
// empty daemon's start, RSS per actor its RSS beyond an empty daemon's, ÷ N.
// `--floor` adds the same figures for N bare worker threads (bench/worker-floor.ts),
// with and without the actors' resourceLimits: what any worker costs here.
import { processCpuMs, runOnce, sleep } from './proc.js';
import { single, type Row } from './report.js';
import { Coffer } from './targets/coffer.js';
import { hostedUpstreams } from './targets/host.js';
import { BENCH_DIST } from './targets/paths.js';
import type { Context } from './scenarios/context.js';
import { join } from 'node:path';
import { ACTOR_RESOURCE_LIMITS } from '../src/upstreams/actor.js';
import { DEFAULT_CONCURRENT_BOOTS } from '../src/upstreams/pool.js';

const BASE = 7000;
/**
 * How long the daemon (and the floor's process) sits idle before the settled
 * RSS is read: 1 s after ready is the start's own peak (young generations,
 * compile zones, freed malloc memory not yet returned); V8's memory reducer
 * and the allocator give it back after some seconds of idleness.
 */
export const SETTLE_MS = 30_000;

interface Start {
  readyS: number;
  cpuPerActorMs: number;
  rssPerActorMb: number;
  /** Per actor once the daemon has sat idle SETTLE_MS. */
  rssSettledPerActorMb: number;
  rssEmptyMb: number;
  rssEmptySettledMb: number;
  rssReadyMb: number;
  rssSettledMb: number;
}

export async function actorStartRows(ctx: Context, floor: boolean): Promise<Row[]> {
  const rows: Row[] = [];
  for (const n of ctx.settings.actorStartPoints) {
    const start = await measureStart(ctx, n);
    ctx.log(`actor-start: ${n} ready ${start.readyS.toFixed(1)} s after spawn, ${start.cpuPerActorMs.toFixed(0)} ms CPU and ${start.rssPerActorMb.toFixed(1)} MB per actor (${start.rssSettledPerActorMb.toFixed(1)} MB once idle)`);
    rows.push(
      { id: 'actor-start-ready', scenario: `start to all ${n} upstreams ready (daemon spawn → every actor ready)`, unit: 's', coffer: single(start.readyS), base: null, peer: null, headline: `${start.readyS.toFixed(1)} s`, target: '≤ 10 s at 200', met: n === 200 ? start.readyS <= 10 : null },
      { id: 'actor-start-cpu', scenario: `boot CPU per actor, ${n} upstreams (daemon CPU at all ready − empty daemon's start, ÷ ${n})`, unit: 'ms', coffer: single(start.cpuPerActorMs), base: null, peer: null, headline: `${start.cpuPerActorMs.toFixed(0)} ms per actor`, target: 'lower is better', met: null },
      { id: 'actor-start-rss', scenario: `RSS per actor, ${n} upstreams (daemon RSS with ${n} ready − empty daemon, ÷ ${n}, each idle ${SETTLE_MS / 1000} s)`, unit: 'MB', coffer: single(start.rssSettledPerActorMb), base: null, peer: null, headline: `${start.rssSettledPerActorMb.toFixed(1)} MB per actor once idle, ${start.rssPerActorMb.toFixed(1)} MB 1 s after ready (daemon empty ${start.rssEmptyMb.toFixed(0)}, idle ${start.rssEmptySettledMb.toFixed(0)} MB; with ${n} ready ${start.rssReadyMb.toFixed(0)}, idle ${start.rssSettledMb.toFixed(0)} MB)`, target: '≤ 6 MB at 200', met: n === 200 ? start.rssSettledPerActorMb <= 6 : null },
    );
    if (floor) rows.push(await floorRow(ctx, n, null), await floorRow(ctx, n, ACTOR_RESOURCE_LIMITS));
  }
  return rows;
}

async function measureStart(ctx: Context, n: number): Promise<Start> {
  const { settings, host } = ctx;
  const specs = await hostedUpstreams(host, BASE, n, settings.toolsPerUpstream, 'a');
  const coffer = await Coffer.start();
  try {
    await sleep(500);
    const rssEmptyMb = coffer.rss();
    const cpuEmptyMs = processCpuMs(coffer.pid);
    // An empty daemon settles too: the settled figure is against the settled empty one.
    await sleep(SETTLE_MS);
    const rssEmptySettledMb = coffer.rss();
    ctx.log(`actor-start: registering ${n} upstreams`);
    await coffer.register(specs);
    await coffer.waitReady(n, settings.readyTimeoutMs(n));
    // Timed on a fresh process: registration paces the boots by REST round trips, a start does not.
    // From the spawn: the old daemon's stop is not part of a start.
    await coffer.halt();
    const spawned = Date.now();
    await coffer.resume();
    await coffer.waitReady(n, settings.readyTimeoutMs(n));
    const readyS = (Date.now() - spawned) / 1000;
    const cpuReadyMs = processCpuMs(coffer.pid);
    // Let the last actors' first allocations settle before reading RSS, as the floor does.
    await sleep(1_000);
    const rssReadyMb = coffer.rss();
    await sleep(SETTLE_MS);
    const rssSettledMb = coffer.rss();
    return {
      readyS,
      cpuPerActorMs: (cpuReadyMs - cpuEmptyMs) / n,
      rssPerActorMb: (rssReadyMb - rssEmptyMb) / n,
      rssSettledPerActorMb: (rssSettledMb - rssEmptySettledMb) / n,
      rssEmptyMb,
      rssEmptySettledMb,
      rssReadyMb,
      rssSettledMb,
    };
  } finally {
    await coffer.stop();
  }
}

/** Bare workers started as the pool starts actors (the same bound on boots at once). */
async function floorRow(ctx: Context, n: number, limits: object | null): Promise<Row> {
  const args = [join(BENCH_DIST, 'worker-floor.js'), '--workers', String(n), '--concurrency', String(DEFAULT_CONCURRENT_BOOTS), '--settle-ms', String(SETTLE_MS), ...(limits ? ['--limits', JSON.stringify(limits)] : [])];
  const floor = (await runOnce(args, ctx.settings.readyTimeoutMs(n) + SETTLE_MS)) as { rssPerWorkerMb: number; rssSettledPerWorkerMb: number; cpuPerWorkerMs: number; allOnlineMs: number };
  const label = limits ? "with the actors' resourceLimits" : 'default limits';
  ctx.log(`actor-start: floor (${label}) ${floor.cpuPerWorkerMs.toFixed(0)} ms CPU and ${floor.rssPerWorkerMb.toFixed(1)} MB per bare worker (${floor.rssSettledPerWorkerMb.toFixed(1)} MB once idle)`);
  return {
    id: 'actor-start-floor',
    scenario: `floor: ${n} bare worker threads, ${label} (RSS and CPU per worker)`,
    unit: 'MB',
    coffer: single(floor.rssSettledPerWorkerMb),
    base: null,
    peer: null,
    headline: `${floor.rssSettledPerWorkerMb.toFixed(1)} MB once idle (${floor.rssPerWorkerMb.toFixed(1)} MB 1 s after online) and ${floor.cpuPerWorkerMs.toFixed(0)} ms CPU per worker, all ${n} online in ${(floor.allOnlineMs / 1000).toFixed(1)} s`,
    target: 'the floor: what any worker costs',
    met: null,
  };
}
