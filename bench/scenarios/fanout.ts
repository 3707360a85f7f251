// The fan-out scenarios on one growing coffer daemon: warm merged list at each
// scale point (vs the floor and the peer), cold merged list at 100 upstreams
// (fresh daemons), footprint and start-up time at 200, then 300 and 500.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { closeAll, connect, listAll, listObjects, timed } from '../clients.js';
import { interleave } from '../measure.js';
import { sleep } from '../proc.js';
import { fig, single, type Row } from '../report.js';
import { growthOrder, summarize, type Summary } from '../stats.js';
import { Coffer, type UpstreamSpec } from '../targets/coffer.js';
import { startPeer, type Peer } from '../targets/peer.js';
import { hostedUpstreams } from '../targets/host.js';
import type { Context } from './context.js';

export interface ScalePoint {
  upstreams: number;
  tools: number;
  pages: number;
  coffer: Summary;
  floor: Summary;
  peer: Summary | null;
  peerTools: number | null;
  /** Tools in the very first list after all actors were ready (fewer = deadlines missed). */
  firstListed: number;
}

export interface FanoutResult {
  rows: Row[];
  scale: ScalePoint[];
}

export async function fanoutScenarios(ctx: Context): Promise<FanoutResult> {
  const { settings, host } = ctx;
  const T = settings.fanoutTools;
  const COLD_AT = settings.coldAt;
  const WARM_AT = settings.listAt;
  const maxPoint = Math.max(...settings.scalePoints, settings.footprintUpstreams, COLD_AT, WARM_AT);
  // Host indices of their own, so the tool count per upstream can differ from the call scenarios'.
  const BASE = 2000;
  const specs = await hostedUpstreams(host, BASE, maxPoint, T, 's');
  const rows: Row[] = [];
  const scale: ScalePoint[] = [];
  const coffer = await Coffer.start();
  let registered = 0;
  const shortfalls: string[] = [];
  /** False when not every actor came up in time: the larger points are then skipped, the smaller ones kept. */
  const growTo = async (n: number): Promise<boolean> => {
    if (n <= registered) return true;
    ctx.log(`fan-out: registering upstreams ${registered}..${n - 1}`);
    const started = Date.now();
    try {
      await coffer.register(specs.slice(registered, n));
      registered = n;
      await coffer.waitReady(n, settings.readyTimeoutMs(n));
    } catch {
      // A daemon too busy to answer a registration or readiness probe in time: keep what was measured.
      registered = n;
      const ready = await coffer.readyCount();
      shortfalls.push(`${n} upstreams: only ${ready} ready ${((Date.now() - started) / 1000).toFixed(0)} s after registration; larger points skipped`);
      ctx.log(`fan-out: ${shortfalls[shortfalls.length - 1]}`);
      return false;
    }
    ctx.log(`fan-out: ${n} ready (${Date.now() - started} ms after registration)`);
    return true;
  };
  try {
    await sleep(500);
    const rssEmpty = coffer.rss();
    const points = [...new Set([...settings.scalePoints, COLD_AT, WARM_AT, settings.footprintUpstreams])].sort((a, b) => a - b);
    let coldReadyMs: number[] = [];
    for (const n of points) {
      if (!(await growTo(n))) break;
      if (settings.scalePoints.includes(n) || n === WARM_AT) scale.push(await warmPoint(ctx, coffer, specs.slice(0, n), n * T));
      if (n === COLD_AT) {
        const cold = await coldRow(ctx, coffer, specs.slice(0, n), n * T);
        coldReadyMs = cold.extra!.readyAfterRestartMs as number[];
        rows.push(cold);
      }
      // The cold runs already timed "spawn → all ready" at this count: no extra restart for it.
      if (n === settings.footprintUpstreams) rows.push(...(await footprintRows(ctx, coffer, specs.slice(0, n), rssEmpty, n === COLD_AT ? coldReadyMs : [])));
    }
  } finally {
    await coffer.stop();
  }
  const at100 = scale.find((point) => point.upstreams === WARM_AT);
  if (at100) {
    const ofFloor = at100.coffer.median / at100.floor.median;
    const ofPeer = at100.peer ? at100.coffer.median / at100.peer.median : NaN;
    rows.unshift({
      id: 'warm-list',
      scenario: `warm merged tools/list, ${WARM_AT} upstreams × ${T} tools (${at100.tools} tools, ${at100.pages} page(s) via coffer)`,
      unit: 'ms',
      coffer: fig(at100.coffer),
      base: { ...fig(at100.floor), label: 'floor' },
      peer: at100.peer ? fig(at100.peer) : null,
      headline: `${ofFloor.toFixed(2)}× the floor, ${ofPeer.toFixed(2)}× the peer`,
      target: '≤ 1.3× the floor and ≤ 0.5× the peer',
      met: ofFloor <= 1.3 && ofPeer <= 0.5,
    });
  }
  const scaled = scaleRow(scale);
  if (shortfalls.length > 0) scaled.note = shortfalls.join('; ');
  rows.push(scaled);
  return { rows, scale };
}

/**
 * Only the footprint rows, at settings.footprintUpstreams (`--only footprint`):
 * the full run's fan-out reaches them after every smaller point, this gets there directly.
 */
export async function footprintScenario(ctx: Context): Promise<Row[]> {
  const { settings, host } = ctx;
  const n = settings.footprintUpstreams;
  const BASE = 5000;
  const specs = await hostedUpstreams(host, BASE, n, settings.fanoutTools, 'f');
  const coffer = await Coffer.start();
  try {
    await sleep(500);
    const rssEmpty = coffer.rss();
    ctx.log(`footprint: registering ${n} upstreams`);
    await coffer.register(specs);
    await coffer.waitReady(n, settings.readyTimeoutMs(n));
    return await footprintRows(ctx, coffer, specs, rssEmpty, []);
  } finally {
    await coffer.stop();
  }
}

async function warmPoint(ctx: Context, coffer: Coffer, specs: UpstreamSpec[], expected: number): Promise<ScalePoint> {
  const { settings, host } = ctx;
  const n = specs.length;
  const clients: Client[] = [];
  let peer: Peer | undefined;
  try {
    const viaCoffer = await connect(coffer.mcp);
    clients.push(viaCoffer);
    // Warm up until every upstream is in the list: on a loaded machine the first lists miss deadlines.
    let merged = await listObjects(viaCoffer);
    const firstListed = merged.length;
    for (let attempt = 0; attempt < 10 && merged.length !== expected; attempt++) {
      await sleep(1_000);
      merged = await listObjects(viaCoffer);
    }
    if (firstListed !== expected) ctx.log(`fan-out: first list at ${n} upstreams had ${firstListed} of ${expected} tools (deadlines missed)`);
    if (merged.length !== expected) throw new Error(`coffer listed ${merged.length} tools at ${n} upstreams, expected ${expected}`);
    const { pages } = await listAll(viaCoffer);
    await host.setFloor(merged);
    const floor = await connect(host.floorUrl);
    clients.push(floor);
    let viaPeer: Client | null = null;
    if (n <= settings.peerScaleMax) {
      ctx.log(`fan-out: starting mcp-hub with ${n} upstreams`);
      peer = await startPeer(specs);
      if (!(await peer.waitReady(n, settings.readyTimeoutMs(n)))) ctx.log(`fan-out: mcp-hub connected only ${await peer.connected()} of ${n}`);
      viaPeer = await connect(peer.mcpUrl, 'sse');
      clients.push(viaPeer);
    }
    let peerTools: number | null = null;
    ctx.log(`fan-out: warm list at ${n} upstreams`);
    const result = await interleave(
      [
        { name: 'coffer', step: () => listAll(viaCoffer) },
        { name: 'floor', step: () => listAll(floor) },
        ...(viaPeer ? [{ name: 'peer', step: async () => (peerTools = (await listAll(viaPeer!)).tools) }] : []),
      ],
      { rounds: settings.listRounds, warmup: 3, deadlineMs: settings.loopDeadlineMs },
    );
    return {
      upstreams: n,
      tools: merged.length,
      pages,
      coffer: result.summaries.coffer!,
      floor: result.summaries.floor!,
      peer: result.summaries.peer ?? null,
      peerTools,
      firstListed,
    };
  } finally {
    await closeAll(clients);
    await peer?.stop();
  }
}

/** First list on a fresh daemon (every actor ready, nothing cached), against a direct fan-out from connected clients. */
async function coldRow(ctx: Context, coffer: Coffer, specs: UpstreamSpec[], expected: number): Promise<Row> {
  const { settings } = ctx;
  const n = specs.length;
  const directs = await Promise.all(specs.map((spec) => connect(spec.url!)));
  const cold: number[] = [];
  const direct: number[] = [];
  const readyMs: number[] = [];
  try {
    for (let run = 0; run < settings.coldRestarts; run++) {
      ctx.log(`fan-out: cold list, fresh daemon ${run + 1}/${settings.coldRestarts}`);
      // From the spawn: the previous daemon's stop is not part of a start.
      await coffer.halt();
      const started = Date.now();
      await coffer.resume();
      await coffer.waitReady(n, settings.readyTimeoutMs(n));
      readyMs.push(Date.now() - started);
      const client = await connect(coffer.mcp);
      try {
        let tools = 0;
        cold.push(await timed(async () => (tools = (await listAll(client)).tools)));
        if (tools !== expected) throw new Error(`cold list returned ${tools} tools, expected ${expected}`);
      } finally {
        await closeAll([client]);
      }
      // The direct path has no cache to drop: every fan-out is as cold as it gets.
      direct.push(await timed(() => Promise.all(directs.map((client) => client.listTools({}, { timeout: 30_000 })))));
    }
  } finally {
    await closeAll(directs);
  }
  const c = summarize(cold);
  return {
    id: 'cold-list',
    scenario: `cold merged tools/list, ${n} upstreams (first list on a fresh daemon, all actors ready)`,
    unit: 'ms',
    coffer: fig(c),
    base: { ...fig(summarize(direct)), label: 'direct' },
    peer: null,
    headline: `${c.median.toFixed(1)} ms median (direct = ${n} connected clients listing in parallel)`,
    target: '≤ 150 ms',
    met: c.max <= 150,
    note: 'peer n/a: mcp-hub lists each upstream once at connect and answers from that snapshot; it has no cold path to measure',
    extra: { readyAfterRestartMs: readyMs },
  };
}

async function footprintRows(ctx: Context, coffer: Coffer, specs: UpstreamSpec[], rssEmpty: number, timedReadyMs: number[]): Promise<Row[]> {
  const { settings } = ctx;
  const n = specs.length;
  await sleep(1_000);
  const rssFull = coffer.rss();
  const perActor = (rssFull - rssEmpty) / n;
  const readyMs = [...timedReadyMs];
  if (readyMs.length === 0) {
    ctx.log(`fan-out: restart with ${n} upstreams registered`);
    const started = Date.now();
    await coffer.restart();
    await coffer.waitReady(n, settings.readyTimeoutMs(n));
    readyMs.push(Date.now() - started);
  }
  const startToReady = summarize(readyMs).median / 1000;
  // The direct path: one process connecting (initialize) to every upstream at once.
  const directClients: Client[] = [];
  let directReady = NaN;
  try {
    directReady = (await timed(async () => directClients.push(...(await Promise.all(specs.map((spec) => connect(spec.url!))))))) / 1000;
  } finally {
    await closeAll(directClients);
  }

  ctx.log(`fan-out: mcp-hub footprint and start-up with ${n} upstreams`);
  const empty = await startPeer([]);
  let peerEmpty = NaN;
  try {
    await empty.waitReady(0, 20_000);
    await sleep(1_000);
    peerEmpty = empty.rss();
  } finally {
    await empty.stop();
  }
  const peerStarted = Date.now();
  const peer = await startPeer(specs);
  let peerReady = NaN;
  let peerPer = NaN;
  try {
    if (await peer.waitReady(n, settings.readyTimeoutMs(n))) peerReady = (Date.now() - peerStarted) / 1000;
    await sleep(1_000);
    peerPer = (peer.rss() - peerEmpty) / n;
  } finally {
    await peer.stop();
  }
  return [
    {
      id: 'footprint-rss',
      scenario: `RSS per upstream actor (daemon RSS with ${n} ready − empty daemon, ÷ ${n})`,
      unit: 'MB',
      coffer: single(perActor),
      base: null,
      peer: single(peerPer),
      headline: `${perActor.toFixed(1)} MB per actor (daemon ${rssEmpty.toFixed(0)} → ${rssFull.toFixed(0)} MB)`,
      target: '≤ 12 MB',
      met: perActor <= 12,
      note: 'direct n/a: without a gateway no process holds the upstream set, so there is no per-upstream footprint to compare',
      extra: { rssEmptyMb: rssEmpty, rssFullMb: rssFull, peerRssEmptyMb: peerEmpty },
    },
    {
      id: 'footprint-start',
      scenario: `start to all ${n} upstreams ready (process spawn → every actor ready)`,
      unit: 's',
      coffer: single(startToReady, readyMs.length),
      base: { ...single(directReady), label: `direct (${n} clients connecting at once)` },
      peer: single(peerReady),
      headline: `${startToReady.toFixed(2)} s`,
      target: '≤ 10 s',
      met: startToReady <= 10,
    },
  ];
}

function scaleRow(scale: ScalePoint[]): Row {
  // Linear in tools returned: the growth order over all points, not point to point (one noisy point on a shared machine is not a trend).
  const perKTool = scale.map((point) => (point.coffer.median / point.tools) * 1000);
  const order = scale.length > 1 ? growthOrder(scale.map((point) => ({ tools: point.tools, median: point.coffer.median }))) : NaN;
  const met = order <= 1.1;
  const last = scale[scale.length - 1];
  return {
    id: 'scale',
    scenario: `warm tools/list vs upstreams (${scale.map((point) => point.upstreams).join(', ')}): ms per 1,000 tools ${perKTool.map((value) => value.toFixed(1)).join(' → ')}`,
    unit: 'ms',
    coffer: last ? fig(last.coffer) : null,
    base: last ? { ...fig(last.floor), label: 'floor' } : null,
    peer: last?.peer ? fig(last.peer) : null,
    headline: `growth order ${order.toFixed(2)} (1 = linear); at ${last?.upstreams ?? '?'} upstreams (${last?.tools ?? '?'} tools); medians ${scale.map((point) => `${point.upstreams}: ${point.coffer.median.toFixed(1)}`).join(', ')}`,
    target: 'no worse than linear in tools returned (growth order ≤ 1.1)',
    met,
    extra: { points: scale, growthOrder: order },
  };
}
