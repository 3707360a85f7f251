// One of 50 upstreams accepts and never answers lists or calls: from start-up
// (hung before coffer and the peer connect) and mid-session (starts hanging
// once coffer has listed it; a 1 s cache TTL makes coffer ask again). Judged:
// every healthy tool listed, each list within the deadline + 20 ms, healthy
// calls as fast as without the hang.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { closeAll, connect, echo, listAll, timed } from '../clients.js';
import { interleave } from '../measure.js';
import { sleep } from '../proc.js';
import { fig, type Row } from '../report.js';
import { summarize } from '../stats.js';
import { Coffer, type UpstreamSpec } from '../targets/coffer.js';
import { startPeer, type Peer } from '../targets/peer.js';
import type { Context } from './context.js';

const START_UP_BASE = 1000;
const MID_SESSION_BASE = 1100;
const MID_SESSION_TTL_MS = 1_000;

interface ListRun {
  latencies: number[];
  counts: number[];
}

async function lists(client: Client, runs: number, deadlineMs: number): Promise<ListRun> {
  const out: ListRun = { latencies: [], counts: [] };
  const until = Date.now() + deadlineMs;
  for (let run = 0; run < runs && Date.now() < until; run++) {
    let count = 0;
    out.latencies.push(await timed(async () => (count = (await listAll(client, 20_000)).tools)));
    out.counts.push(count);
  }
  return out;
}

/**
 * The direct path for a hung-upstream list: one connected client per healthy
 * upstream, listing in parallel (what a client without a gateway waits for,
 * if it knew which upstream to leave out).
 */
async function directLists(ctx: Context, specs: UpstreamSpec[], clients: Client[]): Promise<number[]> {
  const healthy = await Promise.all(specs.slice(0, -1).map((spec) => connect(spec.url!)));
  clients.push(...healthy);
  const latencies: number[] = [];
  for (let run = 0; run < ctx.settings.hungLists; run++) latencies.push(await timed(() => Promise.all(healthy.map((client) => client.listTools({}, { timeout: 20_000 })))));
  return latencies;
}

function specsAt(ctx: Context, prefix: string, base: number): UpstreamSpec[] {
  return Array.from({ length: ctx.settings.hungUpstreams }, (_unused, i) => ({ name: `${prefix}${i}`, url: ctx.host.url(base + i), listDeadlineMs: ctx.settings.hungDeadlineMs }));
}

function listRow(id: string, scenario: string, ctx: Context, coffer: ListRun, direct: number[], peer: ListRun | null, peerNote?: string): Row {
  const UPSTREAMS = ctx.settings.hungUpstreams;
  const healthy = (UPSTREAMS - 1) * ctx.settings.toolsPerUpstream;
  const bound = ctx.settings.hungDeadlineMs + 20;
  const c = summarize(coffer.latencies);
  const allListed = coffer.counts.every((count) => count === healthy);
  return {
    id,
    scenario,
    unit: 'ms',
    coffer: fig(c),
    base: { ...fig(summarize(direct)), label: 'direct (healthy ones, in parallel)' },
    peer: peer ? fig(summarize(peer.latencies)) : null,
    headline: `coffer listed ${Math.min(...coffer.counts)}–${Math.max(...coffer.counts)} of ${healthy} healthy tools${peer ? `, peer ${Math.min(...peer.counts)}–${Math.max(...peer.counts)}` : ''}; deadline ${ctx.settings.hungDeadlineMs} ms`,
    target: `every healthy tool; ≤ deadline + 20 ms (${bound} ms)`,
    met: allListed && c.p99 <= bound,
    ...(peerNote ? { note: peerNote } : {}),
    extra: { cofferCounts: coffer.counts, peerCounts: peer?.counts ?? null, healthyTools: healthy },
  };
}

export async function hungScenarios(ctx: Context): Promise<Row[]> {
  const { settings, host } = ctx;
  const UPSTREAMS = settings.hungUpstreams;
  const rows: Row[] = [];
  const clients: Client[] = [];
  let coffer: Coffer | undefined;
  let peer: Peer | undefined;
  try {
    // From start-up.
    await host.configure({ servers: { [START_UP_BASE + UPSTREAMS - 1]: { hang: true } } });
    const startSpecs = specsAt(ctx, 'h', START_UP_BASE);
    ctx.log(`hung: from start-up, coffer and mcp-hub with ${UPSTREAMS} upstreams, one hung`);
    coffer = await Coffer.start();
    await coffer.register(startSpecs);
    await coffer.waitReady(UPSTREAMS, settings.readyTimeoutMs(UPSTREAMS));
    const viaCoffer = await connect(coffer.mcp);
    clients.push(viaCoffer);
    const cofferStart = await lists(viaCoffer, settings.hungLists, settings.loopDeadlineMs);
    const directStart = await directLists(ctx, startSpecs, clients);
    // Started only now: its start-up (connecting to every upstream, seconds of CPU) would otherwise share the
    // 2 cores with coffer's first lists and the direct ones.
    peer = await startPeer(startSpecs);
    // The peer gets a bounded wait: it waits for the hung upstream's list before it is ready.
    const peerReady = await peer.waitReady(UPSTREAMS - 1, settings.peerHungWaitMs);
    let peerStart: ListRun | null = null;
    let peerNote = `mcp-hub ${peerReady ? 'was ready' : `not ready after ${settings.peerHungWaitMs / 1000} s`} (${await peer.connected()} of ${UPSTREAMS} connected) when listed`;
    try {
      const viaPeer = await connect(peer.mcpUrl, 'sse');
      clients.push(viaPeer);
      peerStart = await lists(viaPeer, Math.min(settings.hungLists, 5), 30_000);
    } catch (error) {
      peerNote += `; its list failed: ${String(error)}`;
    }
    rows.push(listRow('hung-startup', `hung upstream (1 of ${UPSTREAMS}) from start-up: tools/list`, ctx, cofferStart, directStart, peerStart, peerNote));
    await closeAll(clients.splice(0));
    await coffer.stop();
    coffer = undefined;
    await peer.stop();
    peer = undefined;

    // Mid-session.
    ctx.log(`hung: mid-session, coffer with ${UPSTREAMS} upstreams, then one starts hanging`);
    const midSpecs = specsAt(ctx, 'm', MID_SESSION_BASE);
    coffer = await Coffer.start({ tuning: { cacheTtlMs: MID_SESSION_TTL_MS } });
    await coffer.register(midSpecs);
    await coffer.waitReady(UPSTREAMS, settings.readyTimeoutMs(UPSTREAMS));
    const client = await connect(coffer.mcp);
    clients.push(client);
    // Warm up until every upstream is in the list (a cold first list on a busy machine may miss deadlines).
    let before = 0;
    for (let attempt = 0; attempt < 10 && before !== UPSTREAMS * settings.toolsPerUpstream; attempt++) {
      if (attempt > 0) await sleep(500);
      before = (await listAll(client)).tools;
    }
    if (before !== UPSTREAMS * settings.toolsPerUpstream) throw new Error(`mid-session: only ${before} tools listed before the hang`);
    const callLoop = { rounds: settings.hungCalls, warmup: 20, deadlineMs: settings.loopDeadlineMs };
    const healthyTools = ['m0__echo', 'm1__echo', 'm2__echo'];
    let next = 0;
    const healthyCall = () => echo(client, healthyTools[next++ % healthyTools.length]!);
    const noHang = await interleave([{ name: 'calls', step: healthyCall }], callLoop);
    await host.configure({ servers: { [MID_SESSION_BASE + UPSTREAMS - 1]: { hang: true } } });
    await sleep(MID_SESSION_TTL_MS + 200);
    const cofferMid = await lists(client, settings.hungLists, settings.loopDeadlineMs);
    const directMid = await directLists(ctx, midSpecs, clients);
    // Calls while the hung upstream's list is still outstanding in its actor.
    const withHang = await interleave([{ name: 'calls', step: healthyCall }], callLoop);
    rows.push(
      listRow('hung-midsession', `hung upstream (1 of ${UPSTREAMS}) from mid-session: tools/list`, ctx, cofferMid, directMid, null, 'peer n/a: mcp-hub answers from its connect-time snapshot and never asks again, so a mid-session hang does not reach its lists'),
    );
    const a = withHang.summaries.calls!;
    const b = noHang.summaries.calls!;
    rows.push({
      id: 'hung-calls',
      scenario: `healthy tools/call median with 1 of ${UPSTREAMS} hung vs before the hang (same session)`,
      unit: 'ms',
      coffer: fig(a),
      base: { ...fig(b), label: 'no hang' },
      peer: null,
      headline: `ratio ${(a.median / b.median).toFixed(2)}`,
      target: 'ratio ≤ 1.1',
      met: a.median / b.median <= 1.1,
    });
  } finally {
    await closeAll(clients);
    await coffer?.stop();
    await peer?.stop();
  }
  return rows;
}
