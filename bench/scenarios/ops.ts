// What operations cost on the hot path: the same tools/call echo through three
// coffer daemons, interleaved: metrics and tracing off, metrics on (the
// default), metrics on and every call traced and exported over OTLP/HTTP to a
// local sink that discards the spans. Judged on the daemons' main-thread CPU
// per call (where the hooks run), which a busy machine disturbs far less than
// latency; the latency medians are reported beside it.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { closeAll, connect, echo } from '../clients.js';
import { interleave } from '../measure.js';
import { fig, type Row } from '../report.js';
import { mainThreadCpuNs } from '../proc.js';
import { Coffer } from '../targets/coffer.js';
import type { Context } from './context.js';

/** Each daemon's environment; `sink` is the OTLP/HTTP base URL. */
const modes = (sink: string): Record<string, Record<string, string>> => ({
  off: { COFFER_METRICS: 'off', OTEL_EXPORTER_OTLP_ENDPOINT: '' },
  metrics: { COFFER_METRICS: 'on', OTEL_EXPORTER_OTLP_ENDPOINT: '' },
  traced: { COFFER_METRICS: 'on', OTEL_EXPORTER_OTLP_ENDPOINT: sink },
});

/** An OTLP/HTTP receiver that reads and drops: the exporter's cost without a collector's. */
async function otlpSink(): Promise<{ url: string; close(): void }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() };
}

const signed = (value: number): string => `${value >= 0 ? '+' : ''}${value.toFixed(0)}`;

/** µs of each daemon's main thread per call, over `rounds` calls to each; the order rotates each round, so no daemon is always the one called after another. */
async function cpuPerCall(daemons: Record<string, Coffer>, via: Record<string, Client>, rounds: number): Promise<Record<string, number>> {
  const modes = Object.keys(daemons);
  const before = Object.fromEntries(modes.map((mode) => [mode, mainThreadCpuNs(daemons[mode]!.pid)]));
  for (let round = 0; round < rounds; round++) {
    for (let offset = 0; offset < modes.length; offset++) await echo(via[modes[(round + offset) % modes.length]!]!, 's0__echo');
  }
  return Object.fromEntries(modes.map((mode) => [mode, (mainThreadCpuNs(daemons[mode]!.pid) - before[mode]!) / rounds / 1000]));
}

export async function opsScenario(ctx: Context): Promise<Row[]> {
  const { settings, host } = ctx;
  const sink = await otlpSink();
  const daemons: Record<string, Coffer> = {};
  const clients: Client[] = [];
  try {
    for (const [mode, env] of Object.entries(modes(sink.url))) {
      ctx.log(`ops: starting coffer with ${mode}`);
      const coffer = await Coffer.start({ env });
      daemons[mode] = coffer;
      await coffer.register([{ name: 's0', url: host.url(0) }]);
      await coffer.waitReady(1, settings.readyTimeoutMs(1));
    }
    const via = Object.fromEntries(await Promise.all(Object.entries(daemons).map(async ([mode, coffer]) => [mode, await connect(coffer.mcp)] as const)));
    clients.push(...Object.values(via));
    ctx.log('ops: calls with metrics and tracing off, metrics on, metrics and tracing on');
    const loop = await interleave(
      Object.keys(daemons).map((mode) => ({ name: mode, step: () => echo(via[mode]!, 's0__echo') })),
      { rounds: settings.callRounds, warmup: 100, warmupMs: settings.warmupMs, deadlineMs: settings.loopDeadlineMs },
    );
    ctx.log('ops: main-thread CPU per call');
    const cpu = await cpuPerCall(daemons, via, settings.callRounds);
    const s = loop.summaries;
    const added = (mode: string) => s[mode]!.median - s.off!.median;
    const percent = (mode: string) => (100 * added(mode)) / s.off!.median;
    const cpuAdded = (mode: string) => cpu[mode]! - cpu.off!;
    const cpuPercent = (mode: string) => (100 * cpuAdded(mode)) / cpu.off!;
    return [
      {
        id: 'ops-overhead',
        scenario: 'tools/call echo (HTTP upstream): metrics on (default) and metrics + OTLP tracing vs both off',
        unit: 'ms',
        coffer: fig(s.metrics!),
        base: { ...fig(s.off!), label: 'off' },
        peer: null,
        headline:
          `main-thread CPU per call: off ${cpu.off!.toFixed(0)} µs, metrics ${signed(cpuAdded('metrics'))} µs (${cpuPercent('metrics').toFixed(1)} %), metrics + tracing ${signed(cpuAdded('traced'))} µs (${cpuPercent('traced').toFixed(1)} %); ` +
          `latency median metrics ${signed(added('metrics') * 1000)} µs (${percent('metrics').toFixed(1)} %), + tracing ${signed(added('traced') * 1000)} µs (${percent('traced').toFixed(1)} %)`,
        target: "< 2 % of a call's main-thread CPU with metrics on",
        met: cpuPercent('metrics') < 2,
        extra: { traced: fig(s.traced!), cpuPerCallUs: cpu, metricsAddedMs: added('metrics'), metricsPercent: percent('metrics'), tracedAddedMs: added('traced'), tracedPercent: percent('traced'), rounds: loop.rounds },
      },
    ];
  } finally {
    await closeAll(clients);
    await Promise.all(Object.values(daemons).map((coffer) => coffer.stop()));
    sink.close();
  }
}
