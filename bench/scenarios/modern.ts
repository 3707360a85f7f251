// The two protocol eras side by side: what coffer adds to a tools/call and a
// warm tools/list when client and upstream both speak 2025-11-25 (legacy: the
// SDK v1 client) and when both speak 2026-07-28 (modern: the v2 client pinned
// to it). Both eras' paths lead to one synthetic upstream of the HTTP host
// that speaks both, answering either at the same (near-zero) cost, so the two
// paths differ in their era and nothing else: with a costlier upstream on one
// path (the SDK's v2 server spends more on a modern request than on a legacy
// one, and streams its legacy answers), the difference between the eras'
// added cost would partly be the upstream's. Each era has its own daemon (the
// legacy one pinned to 2025-11-25), so each list holds its one upstream's
// tools; all four paths run interleaved round by round in one loop. The
// daemons' main-thread CPU per request is read beside the latency: it is
// where the modern envelope, validation and parking would cost, and load
// disturbs it far less than latency; so is the CPU of all its threads (the
// actor's share is most of the rest). The call loop also times the bare relay
// (bench/relay-floor.ts) in each era: what the era's own work (the envelope
// and the standard headers, each way) costs a gateway that does nothing else.
import { join } from 'node:path';
import type { Client as ModernClient } from '@modelcontextprotocol/client';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { LATEST_PROTOCOL_VERSION } from '../../src/protocol/mcp-versions.js';
import { closeAll, connect, connectModern, echo, listAll, modernEcho, modernListAll } from '../clients.js';
import { interleave, type Interleaved, type LoopOptions, type Path } from '../measure.js';
import { daemonCpuNs, startChild, threadsCpuSince, type Child } from '../proc.js';
import { fig, type Row } from '../report.js';
import { Coffer } from '../targets/coffer.js';
import { BENCH_DIST } from '../targets/paths.js';
import type { Context } from './context.js';

/** The host index of the two-era upstream, apart from the other scenarios' upstreams. */
const ERAS_INDEX = 9000;

const ERAS = ['legacy', 'modern'] as const;
type Era = (typeof ERAS)[number];

type Step = () => Promise<unknown>;

interface EraPaths {
  coffer: Coffer;
  /** Through coffer and direct to the upstream, for a call (and through the bare relay, which serves calls only) and for a list. */
  call: { coffer: Step; direct: Step; floor: Step };
  list: { coffer: Step; direct: Step };
}

interface Measured {
  loop: Interleaved;
  warmupRounds: number;
  /** Each era's daemon: µs per counted round (one request of that era each), main thread and all threads. */
  cpuUs: Record<Era, Cpu>;
}

interface Cpu {
  main: number;
  all: number;
}

/** The paths of `op`, named `<era>-<coffer|direct|floor>` (the bare relay serves calls only), warmed up, then counted with the daemons' CPU read around the count. */
async function measure(paths: Record<Era, EraPaths>, op: 'call' | 'list', options: LoopOptions): Promise<Measured> {
  const steps: Path[] = ERAS.flatMap((era) => Object.entries<Step>(paths[era][op]).map(([via, step]) => ({ name: `${era}-${via}`, step })));
  const warm = await interleave(steps, { ...options, rounds: 0 });
  const before = cpuNow(paths);
  const loop = await interleave(steps, { ...options, warmup: 0, warmupMs: 0 });
  const after = cpuNow(paths);
  const perRound = (ns: number) => ns / Math.max(1, loop.rounds) / 1000;
  const cpuUs = Object.fromEntries(ERAS.map((era) => [era, { main: perRound(after[era].main - before[era].main), all: perRound(threadsCpuSince(before[era].threads, after[era].threads)) }])) as Record<Era, Cpu>;
  return { loop, warmupRounds: warm.warmup[steps[0]!.name]!.length, cpuUs };
}

const cpuNow = (paths: Record<Era, EraPaths>): Record<Era, ReturnType<typeof daemonCpuNs>> =>
  Object.fromEntries(ERAS.map((era) => [era, daemonCpuNs(paths[era].coffer.pid)])) as Record<Era, ReturnType<typeof daemonCpuNs>>;

/** What coffer (or the bare relay) adds on one era's path: its median and p99 minus the direct path's. */
const added = (loop: Interleaved, era: Era, through: 'coffer' | 'floor' = 'coffer') => {
  const via = loop.summaries[`${era}-${through}`]!;
  const direct = loop.summaries[`${era}-direct`]!;
  return { median: via.median - direct.median, p99: via.p99 - direct.p99 };
};

/** A row per era; the modern one is judged against the legacy one measured in the same loop. */
function eraRows(id: string, what: string, measured: Measured): Row[] {
  const { loop, warmupRounds, cpuUs } = measured;
  const legacy = added(loop, 'legacy');
  const modern = added(loop, 'modern');
  const floor = 'legacy-floor' in loop.summaries ? { legacy: added(loop, 'legacy', 'floor'), modern: added(loop, 'modern', 'floor') } : null;
  const client = { legacy: 'SDK v1 client, upstream spoken to in 2025-11-25', modern: 'SDK v2 client pinned to 2026-07-28, upstream spoken to in 2026-07-28' };
  return ERAS.map((era) => {
    const own = era === 'legacy' ? legacy : modern;
    return {
      id: `${id}-${era}`,
      scenario: `${what}, ${era} era (${client[era]}), after ${warmupRounds} warm-up rounds`,
      unit: 'ms',
      coffer: fig(loop.summaries[`${era}-coffer`]!),
      base: { ...fig(loop.summaries[`${era}-direct`]!), label: 'direct' },
      peer: null,
      headline:
        `added ${own.median.toFixed(2)} ms median, ${own.p99.toFixed(2)} ms p99; CPU per request ${cpuUs[era].main.toFixed(0)} µs main thread, ${cpuUs[era].all.toFixed(0)} µs all threads` +
        (era === 'modern' ? ` (legacy adds ${legacy.median.toFixed(2)} / ${legacy.p99.toFixed(2)} ms, ${cpuUs.legacy.main.toFixed(0)} / ${cpuUs.legacy.all.toFixed(0)} µs)` : '') +
        (floor ? `; the bare relay adds ${floor[era].median.toFixed(3)} ms median` + (era === 'modern' ? ` (legacy ${floor.legacy.median.toFixed(3)}: the era's own work costs any gateway ${(floor.modern.median - floor.legacy.median).toFixed(3)} ms)` : '') : ''),
      target: era === 'modern' ? 'adds no more than the legacy path (median)' : 'reference for the modern row',
      met: era === 'modern' ? modern.median <= legacy.median : null,
      extra: {
        addedMedianMs: own.median,
        addedP99Ms: own.p99,
        ...(floor ? { floorAddedMedianMs: floor[era].median } : {}),
        mainThreadUsPerRequest: cpuUs[era].main,
        allThreadsUsPerRequest: cpuUs[era].all,
        warmupRounds,
        rounds: loop.rounds,
        cutShort: loop.cutShort,
      },
    };
  });
}

export async function modernScenario(ctx: Context): Promise<Row[]> {
  const { settings, host } = ctx;
  const clients: Array<Client | ModernClient> = [];
  const daemons: Coffer[] = [];
  let floor: Child | undefined;
  try {
    ctx.log('modern: an upstream of both eras and one coffer per era');
    await host.configure({ servers: { [ERAS_INDEX]: { tools: settings.toolsPerUpstream, modern: true } } });
    const url = host.url(ERAS_INDEX);
    const profile = settings.cpuProfDir ? { cpuProfDir: settings.cpuProfDir } : {};
    const [legacyCoffer, modernCoffer] = await Promise.all([Coffer.start(profile), Coffer.start(profile)]);
    daemons.push(legacyCoffer!, modernCoffer!);
    await legacyCoffer!.register([{ name: 'l', url, protocol: LATEST_PROTOCOL_VERSION }]);
    await modernCoffer!.register([{ name: 'm', url }]);
    await Promise.all(daemons.map((coffer) => coffer.waitReady(1, settings.readyTimeoutMs(1))));
    for (const [coffer, name, want] of [[legacyCoffer!, 'l', 'legacy'], [modernCoffer!, 'm', 'modern']] as const) {
      const era = (await coffer.api('GET', `/servers/${name}`)).body?.health?.era;
      if (era !== want) throw new Error(`upstream ${name} is spoken to in the ${String(era)} era, not the ${want} one`);
    }

    const legacyVia = await connect(legacyCoffer!.mcp);
    const legacyDirect = await connect(url);
    const modernVia = await connectModern(modernCoffer!.mcp);
    const modernDirect = await connectModern(url);
    floor = await startChild(process.execPath, [join(BENCH_DIST, 'relay-floor.js'), '--upstreams', url]);
    const floorUrl = `http://127.0.0.1:${String(floor.hello.port)}/mcp`;
    const legacyFloor = await connect(floorUrl);
    const modernFloor = await connectModern(floorUrl);
    clients.push(legacyVia, legacyDirect, modernVia, modernDirect, legacyFloor, modernFloor);
    const paths: Record<Era, EraPaths> = {
      legacy: {
        coffer: legacyCoffer!,
        call: { coffer: () => echo(legacyVia, 'l__echo'), direct: () => echo(legacyDirect, 'echo'), floor: () => echo(legacyFloor, 'u0__echo') },
        list: { coffer: () => listAll(legacyVia), direct: () => listAll(legacyDirect) },
      },
      modern: {
        coffer: modernCoffer!,
        call: { coffer: () => modernEcho(modernVia, 'm__echo'), direct: () => modernEcho(modernDirect, 'echo'), floor: () => modernEcho(modernFloor, 'u0__echo') },
        list: { coffer: () => modernListAll(modernVia), direct: () => modernListAll(modernDirect) },
      },
    };

    // Every path must list the whole upstream, or the list rows would time something else.
    const listed = await Promise.all([listAll(legacyVia), listAll(legacyDirect)].map((list) => list.then((answer) => answer.tools)).concat([modernListAll(modernVia), modernListAll(modernDirect)]));
    if (listed.some((count) => count !== settings.toolsPerUpstream)) throw new Error(`lists of ${listed.join(', ')} tools, not ${settings.toolsPerUpstream} on every path`);

    ctx.log('modern: tools/call, legacy and modern paths interleaved');
    const calls = await measure(paths, 'call', { rounds: settings.callRounds, warmup: 100, warmupMs: settings.warmupMs, deadlineMs: settings.loopDeadlineMs });
    ctx.log('modern: warm tools/list, legacy and modern paths interleaved');
    const lists = await measure(paths, 'list', { rounds: settings.callRounds, warmup: 100, deadlineMs: settings.loopDeadlineMs });
    return [
      ...eraRows('modern-call', 'tools/call echo through coffer vs direct', calls),
      ...eraRows('modern-list', `warm tools/list (${settings.toolsPerUpstream} tools) through coffer vs direct`, lists),
    ];
  } finally {
    await closeAll(clients);
    await Promise.all(daemons.map((coffer) => coffer.stop()));
    await floor?.stop();
  }
}
