// Call overhead (HTTP and stdio upstream) and throughput: coffer, direct and
// the peer against the same upstreams: 10 HTTP servers of the host and one
// stdio server.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { closeAll, connect, connectStdio, echo } from '../clients.js';
import { interleave, roundRobin, throughput, type Interleaved } from '../measure.js';
import { fig, type Row } from '../report.js';
import { summarize, type Summary } from '../stats.js';
import { Coffer, type UpstreamSpec } from '../targets/coffer.js';
import { STDIO_SERVER } from '../targets/paths.js';
import { startPeer, type Peer } from '../targets/peer.js';
import type { Context } from './context.js';

const HTTP_UPSTREAMS = 10;
/** The calls reported as "cold": the first of the warm-up, right after start-up. */
const COLD_ROUNDS = 100;

export async function callScenarios(ctx: Context): Promise<Row[]> {
  const { settings, host } = ctx;
  const specs: UpstreamSpec[] = Array.from({ length: HTTP_UPSTREAMS }, (_unused, i) => ({ name: `s${i}`, url: host.url(i) }));
  specs.push({ name: 'st', stdio: { command: process.execPath, args: [STDIO_SERVER, '--name', 'st'] } });
  const clients: Client[] = [];
  let coffer: Coffer | undefined;
  let peer: Peer | undefined;
  const rows: Row[] = [];
  try {
    ctx.log(`calls: starting coffer and mcp-hub with ${specs.length} upstreams`);
    coffer = await Coffer.start({ ...(settings.cpuProfDir ? { cpuProfDir: settings.cpuProfDir } : {}) });
    await coffer.register(specs);
    peer = await startPeer(specs);
    await coffer.waitReady(specs.length, settings.readyTimeoutMs(specs.length));
    if (!(await peer.waitReady(specs.length, settings.readyTimeoutMs(specs.length)))) throw new Error('mcp-hub did not connect to every upstream');

    const viaCoffer = await connect(coffer.mcp);
    const viaPeer = await connect(peer.mcpUrl, 'sse');
    const direct = await connect(host.url(0));
    const directStdio = await connectStdio(process.execPath, [STDIO_SERVER, '--name', 'direct']);
    clients.push(viaCoffer, viaPeer, direct, directStdio);

    const loop = { rounds: settings.callRounds, warmup: COLD_ROUNDS, warmupMs: settings.warmupMs, deadlineMs: settings.loopDeadlineMs };
    ctx.log('calls: overhead, HTTP upstream');
    const http = await interleave(
      [
        { name: 'direct', step: () => echo(direct, 'echo') },
        { name: 'coffer', step: () => echo(viaCoffer, 's0__echo') },
        { name: 'peer', step: () => echo(viaPeer, 's0__echo') },
      ],
      loop,
    );
    rows.push(overheadRow('call-overhead-http', 'call overhead, Streamable HTTP upstream (tools/call echo)', http));
    ctx.log('calls: overhead, stdio upstream');
    const stdio = await interleave(
      [
        { name: 'direct', step: () => echo(directStdio, 'echo') },
        { name: 'coffer', step: () => echo(viaCoffer, 'st__echo') },
        { name: 'peer', step: () => echo(viaPeer, 'st__echo') },
      ],
      loop,
    );
    rows.push(overheadRow('call-overhead-stdio', 'call overhead, stdio upstream (tools/call echo)', stdio));

    ctx.log(`calls: throughput, ${settings.throughputClients} clients`);
    rows.push(await throughputRow(ctx, coffer, peer, clients));
  } finally {
    await closeAll(clients);
    await coffer?.stop();
    await peer?.stop();
  }
  return rows;
}

/** Judged warm (a daemon runs for hours); the first COLD_ROUNDS calls after start-up are reported beside it. */
function overheadRow(id: string, scenario: string, loop: Interleaved): Row {
  const s = loop.summaries;
  const c = s.coffer!;
  const d = s.direct!;
  const addedMedian = c.median - d.median;
  const addedP99 = c.p99 - d.p99;
  const [coldCoffer, coldDirect, coldPeer] = ['coffer', 'direct', 'peer'].map((name) => summarize(loop.warmup[name]!.slice(0, COLD_ROUNDS))) as [Summary, Summary, Summary];
  const coldAddedMedian = coldCoffer.median - coldDirect.median;
  const warmupRounds = loop.warmup.coffer!.length;
  return {
    id,
    scenario: `${scenario}, after ${warmupRounds} warm-up rounds`,
    unit: 'ms',
    coffer: fig(c),
    base: { ...fig(d), label: 'direct' },
    peer: fig(s.peer!),
    headline: `added ${addedMedian.toFixed(2)} ms median, ${addedP99.toFixed(2)} ms p99 (peer adds ${(s.peer!.median - d.median).toFixed(2)} / ${(s.peer!.p99 - d.p99).toFixed(2)}); first ${COLD_ROUNDS} calls: +${coldAddedMedian.toFixed(2)} ms`,
    target: '≤ 0.5 ms median / ≤ 3 ms p99 added',
    met: addedMedian <= 0.5 && addedP99 <= 3,
    extra: {
      addedMedianMs: addedMedian,
      addedP99Ms: addedP99,
      peerAddedMedianMs: s.peer!.median - d.median,
      peerAddedP99Ms: s.peer!.p99 - d.p99,
      warmupRounds,
      cold: { rounds: COLD_ROUNDS, addedMedianMs: coldAddedMedian, coffer: fig(coldCoffer), direct: fig(coldDirect), peer: fig(coldPeer) },
    },
  };
}

async function throughputRow(ctx: Context, coffer: Coffer, peer: Peer, clients: Client[]): Promise<Row> {
  const { settings, host } = ctx;
  const n = settings.throughputClients;
  const gatewayTools = Array.from({ length: HTTP_UPSTREAMS }, (_unused, i) => `s${i}__echo`);
  const cofferClients = await Promise.all(Array.from({ length: n }, () => connect(coffer.mcp)));
  const peerClients = await Promise.all(Array.from({ length: n }, () => connect(peer.mcpUrl, 'sse')));
  // Direct: every worker holds its own session to each upstream, as a client without a gateway would.
  const directClients = await Promise.all(Array.from({ length: n }, () => Promise.all(Array.from({ length: HTTP_UPSTREAMS }, (_unused, i) => connect(host.url(i))))));
  clients.push(...cofferClients, ...peerClients, ...directClients.flat());
  const paths = {
    direct: () =>
      directClients.map((sessions, w) => {
        let next = w;
        return { call: () => echo(sessions[next++ % sessions.length]!, 'echo') };
      }),
    coffer: () => cofferClients.map((client, w) => roundRobin(client, gatewayTools, w)),
    peer: () => peerClients.map((client, w) => roundRobin(client, gatewayTools, w)),
  };
  const rates: Record<string, number[]> = { direct: [], coffer: [], peer: [] };
  const errors: Record<string, number> = { direct: 0, coffer: 0, peer: 0 };
  const order = ['direct', 'coffer', 'peer'] as const;
  // Warm-up, not counted: each actor's code is optimised on its own, after hundreds of its calls.
  const warmupRates: Record<string, number> = {};
  for (const name of order) warmupRates[name] = (await throughput(paths[name](), settings.warmupMs)).callsPerSecond;
  for (let round = 0; round < settings.throughputRounds; round++) {
    for (let offset = 0; offset < order.length; offset++) {
      const name = order[(round + offset) % order.length]!;
      const result = await throughput(paths[name](), settings.throughputMs);
      rates[name]!.push(result.callsPerSecond);
      errors[name]! += result.errors;
    }
  }
  const c = summarize(rates.coffer!);
  const d = summarize(rates.direct!);
  const p = summarize(rates.peer!);
  const ofDirect = c.median / d.median;
  const ofPeer = c.median / p.median;
  return {
    id: 'throughput',
    scenario: `throughput, ${n} concurrent clients across ${HTTP_UPSTREAMS} upstreams (calls/s; n = ${settings.throughputMs / 1000} s windows after ${settings.warmupMs / 1000} s of warm-up each)`,
    unit: 'calls/s',
    coffer: fig(c),
    base: { ...fig(d), label: 'direct' },
    peer: fig(p),
    headline: `${(ofDirect * 100).toFixed(0)} % of direct, ${ofPeer.toFixed(2)}× the peer`,
    target: '≥ 80 % of direct and ≥ 2× the peer',
    met: ofDirect >= 0.8 && ofPeer >= 2,
    extra: { rates, errors, warmupRates },
  };
}
