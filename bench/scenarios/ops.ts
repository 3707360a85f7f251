// What operations cost on the hot path: the same tools/call echo through three
// coffer daemons, interleaved: metrics and tracing off, metrics on (the
// default), metrics on and every call traced and exported over OTLP/HTTP to a
// local sink that discards the spans.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { closeAll, connect, echo } from '../clients.js';
import { interleave } from '../measure.js';
import { fig, type Row } from '../report.js';
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
    const s = loop.summaries;
    const added = (mode: string) => s[mode]!.median - s.off!.median;
    const percent = (mode: string) => (100 * added(mode)) / s.off!.median;
    return [
      {
        id: 'ops-overhead',
        scenario: 'tools/call echo (HTTP upstream): metrics on (default) and metrics + OTLP tracing vs both off',
        unit: 'ms',
        coffer: fig(s.metrics!),
        base: { ...fig(s.off!), label: 'off' },
        peer: null,
        headline: `metrics ${added('metrics') >= 0 ? '+' : ''}${(added('metrics') * 1000).toFixed(0)} µs median (${percent('metrics').toFixed(1)} %); metrics + tracing ${(added('traced') * 1000).toFixed(0)} µs (${percent('traced').toFixed(1)} %)`,
        target: '< 2 % of a call with metrics on',
        met: percent('metrics') < 2,
        extra: { traced: fig(s.traced!), metricsAddedMs: added('metrics'), metricsPercent: percent('metrics'), tracedAddedMs: added('traced'), tracedPercent: percent('traced'), rounds: loop.rounds },
      },
    ];
  } finally {
    await closeAll(clients);
    await Promise.all(Object.values(daemons).map((coffer) => coffer.stop()));
    sink.close();
  }
}
