// Calls spread over many upstreams: at each point N, coffer, mcp-hub, a bare
// relay of coffer's shape (bench/relay-floor.ts: the floor of any gateway
// with a worker per upstream) and direct clients call `echo` on all N
// upstreams — evenly (upstream after upstream) and Zipf-like (a few upstreams
// take most calls, the rest a long tail) — for one client's latency and for
// 16 clients' throughput; then, at
// the same N, the warm merged tools/list and each daemon's RSS beside
// mcp-hub's, and where each daemon's CPU goes per evenly spread call (which
// of its threads the row's limit is, and what the load itself takes); last,
// the floor of spreading work over N isolates at all (bare workers). The
// concentrated rows (calls scenario) favour a gateway whose few busy actors
// are warm; here most actors see few calls, as in a real high fan-out.
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { DEFAULT_FLUSH_MS } from '../../src/daemon/invocation-log.js';
import { closeAll, connect, echo, listAll } from '../clients.js';
import { interleave, throughput, type ThroughputResult } from '../measure.js';
import { daemonCpuNs, rssMb, runOnce, sleep, startChild, threadsCpuNs, threadsCpuSince, type Child } from '../proc.js';
import { fig, single, type Row } from '../report.js';
import { summarize } from '../stats.js';
import { Coffer, type UpstreamSpec } from '../targets/coffer.js';
import { BENCH_DIST } from '../targets/paths.js';
import { startPeer, type Peer } from '../targets/peer.js';
import type { Context } from './context.js';

/** Host indices of their own, apart from the other scenarios' upstreams. */
const BASE = 8000;
/** The exponent of the Zipf-like spread: upstream k (from 1) gets calls ∝ 1 / k^s. */
const ZIPF_S = 1.1;
/** Length of the shared sequence of upstream indices each client walks from its own offset. */
const SEQUENCE = 4096;

export type Spread = 'even' | 'zipf';

/** Which upstream each successive call goes to: deterministic, so every path gets the same sequence. */
export function spreadSequence(n: number, spread: Spread, length = SEQUENCE): number[] {
  if (spread === 'even') return Array.from({ length }, (_unused, i) => i % n);
  const weights = Array.from({ length: n }, (_unused, k) => 1 / (k + 1) ** ZIPF_S);
  const total = weights.reduce((sum, weight) => sum + weight, 0);
  const cumulative: number[] = [];
  let sum = 0;
  for (const weight of weights) cumulative.push((sum += weight / total));
  // A fixed linear congruential generator: the same sequence in every run and for every path.
  let state = 12345;
  const random = (): number => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return state / 2 ** 32;
  };
  return Array.from({ length }, () => {
    const r = random();
    const index = cumulative.findIndex((edge) => r <= edge);
    return index === -1 ? n - 1 : index;
  });
}

type PathName = 'direct' | 'coffer' | 'peer' | 'relay';

interface Paths {
  /** One call of path `name` to upstream `index`. */
  call(name: PathName, index: number): Promise<void>;
}

/** The processes whose CPU a window reads: each daemon (the bare relay too), and the load's own upstream host (the bench process is the clients). */
type Pids = { coffer: number; peer: number; relay: number; host: number };

/** One throughput window's CPU per call, µs: the path's daemon (its main thread, all its threads; none for direct) and the load (clients and upstreams). */
interface WindowCpu {
  main: number;
  all: number;
  /** The daemon's main thread's CPU over the window's wall time (1 = one core all the time). */
  mainBusy: number;
  load: number;
}

export async function spreadScenarios(ctx: Context): Promise<Row[]> {
  const rows: Row[] = [];
  for (const n of ctx.settings.spreadPoints) rows.push(...(await spreadPoint(ctx, n)), await rotationRow(ctx, n));
  return rows;
}

/** Tasks in flight in the rotation floor, as a few of the 16 clients' calls are at once in one daemon. */
const ROTATION_IN_FLIGHT = 4;

async function spreadPoint(ctx: Context, n: number): Promise<Row[]> {
  const { settings, host } = ctx;
  await host.configure({ ranges: [{ from: BASE, to: BASE + n, behaviour: { tools: settings.toolsPerUpstream } }] });
  const specs: UpstreamSpec[] = Array.from({ length: n }, (_unused, i) => ({ name: `u${i}`, url: host.url(BASE + i) }));
  const clients: Client[] = [];
  let coffer: Coffer | undefined;
  let peer: Peer | undefined;
  let relay: Child | undefined;
  try {
    ctx.log(`spread: starting coffer and mcp-hub with ${n} upstreams`);
    coffer = await Coffer.start();
    await coffer.register(specs);
    peer = await startPeer(specs);
    await coffer.waitReady(n, settings.readyTimeoutMs(n));
    if (!(await peer.waitReady(n, settings.readyTimeoutMs(n)))) throw new Error(`mcp-hub did not connect to all ${n} upstreams`);
    // Direct: one connected client per upstream, shared by every worker (a client without a gateway holds one session per server).
    const direct = await Promise.all(specs.map((spec) => connect(spec.url!)));
    clients.push(...direct);
    const viaCoffer = await Promise.all(Array.from({ length: settings.throughputClients }, () => connect(coffer!.mcp)));
    const viaPeer = await Promise.all(Array.from({ length: settings.throughputClients }, () => connect(peer!.mcpUrl, 'sse')));
    relay = await startChild(process.execPath, [join(BENCH_DIST, 'relay-floor.js'), '--upstreams', specs.map((spec) => spec.url!).join(',')]);
    const relayUrl = `http://127.0.0.1:${String(relay.hello.port)}/mcp`;
    const viaRelay = await Promise.all(Array.from({ length: settings.throughputClients }, () => connect(relayUrl)));
    clients.push(...viaCoffer, ...viaPeer, ...viaRelay);
    const gateways = { coffer: viaCoffer, peer: viaPeer, relay: viaRelay };
    const paths = (worker: number): Paths => ({
      call: (name, index) => (name === 'direct' ? echo(direct[index]!, 'echo') : echo(gateways[name][worker]!, `u${index}__echo`)),
    });

    ctx.log(`spread: one client, calls spread evenly over ${n} upstreams`);
    const sequence = spreadSequence(n, 'even');
    let step = 0;
    const one = paths(0);
    const next = (): number => sequence[step++ % sequence.length]!;
    // No long warm-up here on purpose: with calls spread, each actor sees only its share of them.
    const latency = await interleave(
      (['direct', 'coffer', 'peer', 'relay'] as const).map((name) => ({ name, step: () => one.call(name, next()) })),
      { rounds: settings.spreadLatencyRounds, warmup: n, deadlineMs: settings.loopDeadlineMs },
    );
    const rows: Row[] = [latencyRow(n, latency.summaries), relayRow(n, latency.summaries)];
    const pids: Pids = { coffer: coffer.pid, peer: peer.pid, relay: relay.pid, host: host.pid };
    let evenCpu: Record<PathName, WindowCpu[]> | undefined;
    for (const spread of ['even', 'zipf'] as const) {
      ctx.log(`spread: ${settings.throughputClients} clients, ${spread} over ${n} upstreams`);
      const { row, cpu } = await throughputRow(ctx, n, spread, paths, pids);
      rows.push(row);
      evenCpu ??= cpu;
    }
    ctx.log(`spread: ${settings.throughputClients} clients, every call to one of the ${n} upstreams, coffer and the bare relay`);
    const concentrated: Concentrated = { coffer: [], relay: [], errors: 0 };
    for (let round = 0; round < settings.throughputRounds; round++) {
      for (const name of ['coffer', 'relay'] as const) {
        const oneUpstream = Array.from({ length: settings.throughputClients }, (_unused, w) => ({ call: () => paths(w).call(name, 0) }));
        const { result, perCall } = await metered(pids[name], pids.host, () => throughput(oneUpstream, settings.throughputMs));
        concentrated[name].push(perCall);
        concentrated.errors += result.errors;
      }
    }
    rows.push(cpuRow(n, settings.throughputClients, evenCpu!, concentrated));
    ctx.log(`spread: warm tools/list over ${n} upstreams, coffer and mcp-hub`);
    const expected = n * settings.toolsPerUpstream;
    const lists = await interleave(
      [
        { name: 'coffer', step: () => listAll(viaCoffer[0]!).then((listed) => assertListed('coffer', listed.tools, expected)) },
        { name: 'peer', step: () => listAll(viaPeer[0]!).then((listed) => assertListed('mcp-hub', listed.tools, expected)) },
      ],
      { rounds: settings.listRounds, warmup: 3, deadlineMs: settings.loopDeadlineMs },
    );
    rows.push(warmListRow(n, expected, lists.summaries));
    // After the calls and lists: each daemon's working set with N upstreams in use, not just connected.
    rows.push(rssRow(n, coffer.rss(), peer.rss(), rssMb(relay.pid)));
    return rows;
  } finally {
    await closeAll(clients);
    await coffer?.stop();
    await peer?.stop();
    await relay?.stop();
  }
}

function latencyRow(n: number, s: Record<string, ReturnType<typeof summarize>>): Row {
  const added = s.coffer!.median - s.direct!.median;
  const peerAdded = s.peer!.median - s.direct!.median;
  return {
    id: `spread-latency-${n}`,
    scenario: `call added vs direct, one client, each call to the next of ${n} upstreams (tools/call echo)`,
    unit: 'ms',
    coffer: fig(s.coffer!),
    base: { ...fig(s.direct!), label: 'direct' },
    peer: fig(s.peer!),
    headline: `added ${added.toFixed(2)} ms median, ${(s.coffer!.p99 - s.direct!.p99).toFixed(2)} ms p99 (peer adds ${peerAdded.toFixed(2)})`,
    target: 'adds less than the peer',
    met: added < peerAdded,
    extra: { addedMedianMs: added, peerAddedMedianMs: peerAdded },
  };
}

/** What a bare relay of coffer's shape (bench/relay-floor.ts), timed in the same loop, adds to the same spread calls. */
function relayRow(n: number, s: Record<string, ReturnType<typeof summarize>>): Row {
  const added = s.relay!.median - s.direct!.median;
  const cofferAdded = s.coffer!.median - s.direct!.median;
  return {
    id: `spread-relay-${n}`,
    scenario: `floor: call added vs direct through a bare relay of coffer's shape (uWebSockets.js, a worker thread per upstream, a raw keep-alive socket; nothing else), one client, each call to the next of ${n} upstreams`,
    unit: 'ms',
    coffer: fig(s.relay!),
    base: { ...fig(s.direct!), label: 'direct' },
    peer: null,
    headline: `the bare relay adds ${added.toFixed(2)} ms median, ${(s.relay!.p99 - s.direct!.p99).toFixed(2)} ms p99 (coffer adds ${cofferAdded.toFixed(2)})`,
    target: 'the floor: what one more process and one thread hop per call add here, whatever the gateway',
    met: null,
    extra: { relayAddedMedianMs: added, cofferAddedMedianMs: cofferAdded },
  };
}

function assertListed(who: string, listed: number, expected: number): void {
  if (listed !== expected) throw new Error(`${who} listed ${listed} tools, not ${expected}: the row would time something else`);
}

function warmListRow(n: number, tools: number, s: Record<string, ReturnType<typeof summarize>>): Row {
  const ofPeer = s.coffer!.median / s.peer!.median;
  return {
    id: `spread-list-${n}`,
    scenario: `warm merged tools/list, ${n} upstreams × ${tools / n} tools (every page), after the spread calls`,
    unit: 'ms',
    coffer: fig(s.coffer!),
    base: null,
    peer: fig(s.peer!),
    headline: `${ofPeer.toFixed(2)}× the peer's median`,
    target: 'no slower than the peer (median)',
    met: ofPeer <= 1,
  };
}

function rssRow(n: number, cofferMb: number, peerMb: number, relayMb: number): Row {
  const ofPeer = cofferMb / peerMb;
  return {
    id: `spread-rss-${n}`,
    scenario: `daemon RSS with ${n} upstreams, after the spread calls and lists (MB)`,
    unit: 'MB',
    coffer: single(cofferMb),
    base: null,
    peer: single(peerMb),
    headline: `${cofferMb.toFixed(0)} MB, ${ofPeer.toFixed(2)}× the peer's ${peerMb.toFixed(0)} MB (the bare relay of coffer's shape, after the same calls: ${relayMb.toFixed(0)} MB, ${(relayMb / peerMb).toFixed(2)}×)`,
    target: 'at most 2× the peer',
    met: ofPeer <= 2,
    extra: { cofferMb, peerMb, relayMb },
  };
}

async function throughputRow(ctx: Context, n: number, spread: Spread, paths: (worker: number) => Paths, pids: Pids): Promise<{ row: Row; cpu: Record<PathName, WindowCpu[]> }> {
  const { settings } = ctx;
  const sequence = spreadSequence(n, spread);
  const workers = (name: PathName) =>
    Array.from({ length: settings.throughputClients }, (_unused, w) => {
      const path = paths(w);
      // Each worker walks the same sequence from its own offset: together they cover every upstream at once.
      let step = Math.floor((w * sequence.length) / settings.throughputClients);
      return { call: () => path.call(name, sequence[step++ % sequence.length]!) };
    });
  const order = ['direct', 'coffer', 'peer', 'relay'] as const;
  const rates: Record<string, number[]> = { direct: [], coffer: [], peer: [], relay: [] };
  const errors: Record<string, number> = { direct: 0, coffer: 0, peer: 0, relay: 0 };
  const cpu: Record<PathName, WindowCpu[]> = { direct: [], coffer: [], peer: [], relay: [] };
  for (let round = 0; round < settings.throughputRounds; round++) {
    for (let offset = 0; offset < order.length; offset++) {
      const name = order[(round + offset) % order.length]!;
      const { result, perCall } = await metered(name === 'direct' ? null : pids[name], pids.host, () => throughput(workers(name), settings.throughputMs));
      rates[name]!.push(result.callsPerSecond);
      errors[name]! += result.errors;
      cpu[name].push(perCall);
    }
  }
  const [c, d, p, r] = (['coffer', 'direct', 'peer', 'relay'] as const).map((name) => summarize(rates[name]!));
  const ofDirect = c!.median / d!.median;
  const ofPeer = c!.median / p!.median;
  const relayOfPeer = r!.median / p!.median;
  const shape = spread === 'even' ? 'evenly' : `Zipf-like (s = ${ZIPF_S})`;
  const row: Row = {
    id: `spread-${spread}-${n}`,
    scenario: `throughput, ${settings.throughputClients} clients, calls spread ${shape} over ${n} upstreams (calls/s; ${settings.throughputMs / 1000} s windows)`,
    unit: 'calls/s',
    coffer: fig(c!),
    base: { ...fig(d!), label: 'direct' },
    peer: fig(p!),
    headline: `${(ofDirect * 100).toFixed(0)} % of direct, ${ofPeer.toFixed(2)}× the peer (the bare relay of coffer's shape: ${r!.median.toFixed(0)} calls/s, ${relayOfPeer.toFixed(2)}× the peer)`,
    target: 'ahead of the peer (> 1×)',
    met: ofPeer > 1,
    extra: { rates, errors, relayOfPeer },
  };
  return { row, cpu };
}

/** A window's CPU is read once coffer has handed its invocation records to the writer (its flush interval) and the writer stored them. */
const INVOCATION_FLUSH_MS = DEFAULT_FLUSH_MS + 100;

/**
 * A throughput window with the CPU it cost, per counted call (schedstat for
 * the daemons' threads, so no 10 ms ticks); read once the daemon has stored
 * the window's invocations, so that work is not left to the next window's
 * path. NaN when no call succeeded.
 */
async function metered(daemon: number | null, host: number, run: () => Promise<ThroughputResult>): Promise<{ result: ThroughputResult; perCall: WindowCpu }> {
  const read = () => ({ daemon: daemon === null ? { main: 0, threads: new Map<string, number>() } : daemonCpuNs(daemon), host: threadsCpuNs(host), self: process.cpuUsage() });
  const before = read();
  const started = performance.now();
  const result = await run();
  const wallMs = performance.now() - started;
  await sleep(INVOCATION_FLUSH_MS);
  const after = read();
  const calls = result.calls > 0 ? result.calls : NaN;
  const selfUs = after.self.user + after.self.system - before.self.user - before.self.system;
  const main = after.daemon.main - before.daemon.main;
  return {
    result,
    perCall: {
      main: main / 1000 / calls,
      all: threadsCpuSince(before.daemon.threads, after.daemon.threads) / 1000 / calls,
      mainBusy: main / 1e6 / wallMs,
      load: (threadsCpuSince(before.host, after.host) / 1000 + selfUs) / calls,
    },
  };
}

/** The CPU of the throughput windows with every call on one upstream, per gateway, and their failed calls. */
interface Concentrated {
  coffer: WindowCpu[];
  relay: WindowCpu[];
  errors: number;
}

/**
 * Where each daemon's CPU goes per evenly spread call, medians over the
 * throughput windows. A daemon's main thread can serve at most 1 s ÷ its CPU
 * per call; the rest of coffer's work runs on the actors' and the writer's
 * threads beside it. On a machine whose cores the load shares, the row is
 * bound by all of it together.
 */
function cpuRow(n: number, clients: number, cpu: Record<PathName, WindowCpu[]>, concentrated: Concentrated): Row {
  const medians = (windows: WindowCpu[]) => {
    const med = (key: keyof WindowCpu) => summarize(windows.map((window) => window[key])).median;
    return { main: med('main'), all: med('all'), busy: med('mainBusy'), load: med('load') };
  };
  const [coffer, peer, relay] = [medians(cpu.coffer), medians(cpu.peer), medians(cpu.relay)];
  const [oneUpstream, relayOneUpstream] = [medians(concentrated.coffer), medians(concentrated.relay)];
  const cores = availableParallelism();
  const mainThread = (figures: { main: number; busy: number }) =>
    `main thread ${figures.main.toFixed(0)} µs per call (${(figures.busy * 100).toFixed(0)} % busy; alone it could serve ${(1e6 / figures.main).toFixed(0)} calls/s on any number of cores)`;
  return {
    id: `spread-cpu-${n}`,
    scenario: `CPU per call, ${clients} clients spreading calls evenly over ${n} upstreams: each daemon, all its threads (µs; the throughput row's windows)`,
    unit: 'µs',
    coffer: fig(summarize(cpu.coffer.map((window) => window.all))),
    base: null,
    peer: fig(summarize(cpu.peer.map((window) => window.all))),
    headline:
      `coffer's ${mainThread(coffer)}; mcp-hub's ${mainThread(peer)}; ` +
      `the bench's clients and upstreams take ${coffer.load.toFixed(0)} µs per call through coffer on the same ${cores} cores; ` +
      `coffer with every call on one upstream ${oneUpstream.all.toFixed(0)} µs per call (main thread ${oneUpstream.main.toFixed(0)}); ` +
      `the bare relay of coffer's shape ${relay.all.toFixed(0)} µs per spread call (main thread ${relay.main.toFixed(0)}), ${relayOneUpstream.all.toFixed(0)} µs with every call on one upstream`,
    target: 'where the spread rows\' limit lies',
    met: null,
    extra: { coffer, peer, relay, oneUpstream, relayOneUpstream, oneUpstreamErrors: concentrated.errors, directLoadUs: medians(cpu.direct).load, cores },
  };
}

/**
 * The same small task in one bare worker and in N served in turn
 * (bench/rotation-floor.ts), after the daemons stopped: what spreading costs
 * any isolate. A floor that could not be measured is a row saying why, so the
 * spread rows before it are kept.
 */
async function rotationRow(ctx: Context, n: number): Promise<Row> {
  const { settings } = ctx;
  const tasks = settings.quick ? 4_000 : 20_000;
  // Equally warm at every N, within a bounded warm-up at the largest.
  const warm = Math.min(3_000, Math.ceil(150_000 / n));
  const scenario = `floor: CPU per task, one small task (a tools/call parsed, its answer built and serialised) in ${n} bare worker threads served in turn, ${ROTATION_IN_FLIGHT} in flight, each as warm as the one (µs)`;
  const perTask = async (workers: number): Promise<number> => {
    const args = [join(BENCH_DIST, 'rotation-floor.js'), '--workers', String(workers), '--warm', String(warm), '--tasks', String(tasks), '--in-flight', String(ROTATION_IN_FLIGHT)];
    const { userUsPerTask, sysUsPerTask } = (await runOnce(args, settings.readyTimeoutMs(workers) + settings.loopDeadlineMs)) as { userUsPerTask: number; sysUsPerTask: number };
    return userUsPerTask + sysUsPerTask;
  };
  const floorRow = { id: `spread-rotation-${n}`, scenario, unit: 'µs', peer: null, target: 'the floor: what spreading over isolates costs any worker', met: null };
  ctx.log(`spread: floor, one small task in 1 and in ${n} bare workers served in turn`);
  try {
    const one = await perTask(1);
    const many = await perTask(n);
    return {
      ...floorRow,
      coffer: single(many),
      base: { ...single(one), label: 'one worker' },
      headline: `${many.toFixed(1)} µs per task in ${n} workers against ${one.toFixed(1)} µs in one (${(many / one).toFixed(2)}×): each task wakes a thread whose isolate is out of the caches, whatever the code`,
      extra: { tasks, warmPerWorker: warm, inFlight: ROTATION_IN_FLIGHT, oneWorkerUs: one, workersUs: many },
    };
  } catch (error) {
    ctx.log(`spread: the floor at ${n} failed: ${String(error)}`);
    return { ...floorRow, coffer: null, base: null, headline: `not measured: ${error instanceof Error ? error.message : String(error)}` };
  }
}
