// The bench's spread rows, run for real at a tiny size: coffer and mcp-hub in
// front of two upstreams of the synthetic host, SDK clients. Every row must
// exist with its figures, and the warm-list and RSS rows judged against the
// peer as the issue's targets read (no slower; at most twice the memory); the
// CPU row reads each daemon's threads from /proc; the floor rows run bare
// workers, and a bare relay of coffer's shape beside the daemons.
import t from 'tap';
import { spreadScenarios } from '../bench/scenarios/spread.js';
import { table } from '../bench/report.js';
import { scenarioRows, tinySettings } from './helpers/bench-settings.js';

const TOOLS = 5;
const N = 2;
const settings = tinySettings({ toolsPerUpstream: TOOLS, spreadPoints: [N], spreadLatencyRounds: 5, listRounds: 3, throughputMs: 300 });

t.test('spread rows at 2 upstreams: latency, both spreads, CPU per call, the warm merged list and the daemons\' RSS, each beside mcp-hub and a bare relay, and the floor of rotating over isolates', async (t) => {
  const rows = await scenarioRows(t, spreadScenarios, settings);

  t.same(
    rows.map((row) => row.id),
    [`spread-latency-${N}`, `spread-relay-${N}`, `spread-even-${N}`, `spread-zipf-${N}`, `spread-cpu-${N}`, `spread-list-${N}`, `spread-rss-${N}`, `spread-rotation-${N}`],
  );
  const byId = new Map(rows.map((row) => [row.id, row]));
  const relay = byId.get(`spread-relay-${N}`)!;
  const latency = byId.get(`spread-latency-${N}`)!;
  t.equal(relay.coffer!.n, 5, 'the bare relay timed in every latency round');
  t.equal(relay.base!.median, latency.base!.median, 'against the same direct calls as coffer');
  t.equal(relay.met, null, 'a floor, not a target');
  t.match(relay.headline, /the bare relay adds -?[\d.]+ ms median, .* \(coffer adds -?[\d.]+\)/);
  for (const spread of ['even', 'zipf']) {
    const row = byId.get(`spread-${spread}-${N}`)!;
    const { rates, errors, relayOfPeer } = row.extra as { rates: Record<string, number[]>; errors: Record<string, number>; relayOfPeer: number };
    t.ok(rates.relay!.length === rates.coffer!.length && rates.relay!.every((rate) => rate > 0), `${spread}: the relay's windows ${rates.relay!.join(', ')} calls/s`);
    t.equal(errors.relay, 0, `${spread}: every call through the relay answered`);
    t.ok(relayOfPeer > 0, `${spread}: the relay at ${relayOfPeer.toFixed(2)}× the peer`);
  }
  const cpu = byId.get(`spread-cpu-${N}`)!;
  type Split = { main: number; all: number; busy: number; load: number };
  const split = cpu.extra as { coffer: Split; peer: Split; relay: Split; oneUpstream: Split; relayOneUpstream: Split; oneUpstreamErrors: number; directLoadUs: number };
  for (const [who, figures] of [
    ['coffer', split.coffer],
    ['mcp-hub', split.peer],
    ['the bare relay', split.relay],
    ['coffer, every call on one upstream', split.oneUpstream],
    ['the bare relay, every call on one upstream', split.relayOneUpstream],
  ] as const) {
    t.ok(figures.main > 0 && figures.main <= figures.all, `${who}: main thread ${figures.main.toFixed(0)} µs of ${figures.all.toFixed(0)} µs per call`);
    t.ok(figures.busy > 0 && figures.busy <= 1.05, `${who}: main thread ${(figures.busy * 100).toFixed(0)} % busy`);
    t.ok(Number.isFinite(figures.load), `${who}: the load's own ${figures.load.toFixed(0)} µs per call`);
  }
  // coffer's actors and writer do part of every call: its threads together cost more than its main thread.
  for (const figures of [split.coffer, split.oneUpstream]) t.ok(figures.all > figures.main * 1.05, `all threads ${figures.all.toFixed(0)} µs > main ${figures.main.toFixed(0)} µs`);
  t.equal(split.oneUpstreamErrors, 0, 'every concentrated call answered');
  t.ok(Number.isFinite(split.directLoadUs));
  t.equal(cpu.coffer!.median, split.coffer.all, 'one window: its figure is the median');
  t.equal(cpu.met, null, 'a breakdown, not a target');
  t.match(cpu.scenario, `${settings.throughputClients} clients spreading calls evenly over ${N} upstreams`);
  t.match(cpu.headline, /coffer's main thread \d+ µs per call .*mcp-hub's main thread \d+ µs.*one upstream \d+ µs per call.*the bare relay of coffer's shape \d+ µs per spread call \(main thread \d+\), \d+ µs with every call on one upstream/);
  const list = byId.get(`spread-list-${N}`)!;
  t.equal(list.coffer!.n, 3, 'every list round counted');
  t.equal(list.peer!.n, 3);
  t.ok(list.coffer!.median > 0 && list.peer!.median > 0, `list medians ${list.coffer!.median} / ${list.peer!.median} ms`);
  t.equal(list.met, list.coffer!.median <= list.peer!.median, 'met when no slower than the peer');
  t.match(list.scenario, `${N} upstreams × ${TOOLS} tools`);

  const rss = byId.get(`spread-rss-${N}`)!;
  t.equal(rss.unit, 'MB');
  t.ok(rss.coffer!.median > 20 && rss.peer!.median > 20, `RSS ${rss.coffer!.median} / ${rss.peer!.median} MB: whole processes`);
  t.equal(rss.met, rss.coffer!.median <= 2 * rss.peer!.median, 'met at no more than twice the peer');
  const { relayMb } = rss.extra as { relayMb: number };
  t.ok(relayMb > 20, `the bare relay's RSS ${relayMb} MB: a whole process`);
  t.match(rss.headline, /the bare relay of coffer's shape, after the same calls: \d+ MB/);
  t.match(table(rows), /\| daemon RSS with 2 upstreams/);

  const rotation = byId.get(`spread-rotation-${N}`)!;
  t.ok(rotation.coffer!.median > 0 && rotation.base!.median > 0, `${rotation.coffer!.median} µs per task in ${N} workers, ${rotation.base!.median} in one`);
  t.match(rotation.scenario, '4 in flight');
  t.match(rotation.headline, /µs per task in 2 workers against [\d.]+ µs in one/);
  t.equal(rotation.base!.label, 'one worker');
  t.equal(rotation.met, null, 'a floor, not a target');
});
