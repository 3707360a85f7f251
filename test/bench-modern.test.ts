// The bench's era rows, run for real at a tiny size: a coffer per era, one
// upstream of the synthetic host speaking both eras (the scenario refuses to
// measure unless each daemon speaks its own era to it), the SDK v1 and v2
// clients. The rows must exist, each with what coffer adds over its own era's
// direct path, and the modern rows judged against the legacy ones; the call
// rows also carry what the bare relay adds in each era.
import t from 'tap';
import { modernScenario } from '../bench/scenarios/modern.js';
import { table } from '../bench/report.js';
import { scenarioRows, tinySettings } from './helpers/bench-settings.js';

const ROUNDS = 20;
const TOOLS = 5;

const settings = tinySettings({ toolsPerUpstream: TOOLS, fanoutTools: TOOLS, callRounds: ROUNDS });

t.test('modern rows: tools/call and warm tools/list, legacy and modern paths, coffer against direct', async (t) => {
  const rows = await scenarioRows(t, modernScenario, settings);

  t.same(
    rows.map((row) => row.id),
    ['modern-call-legacy', 'modern-call-modern', 'modern-list-legacy', 'modern-list-modern'],
  );
  for (const row of rows) {
    t.equal(row.unit, 'ms', row.id);
    for (const figure of [row.coffer!, row.base!]) {
      t.equal(figure.n, ROUNDS, `${row.id}: every round counted`);
      t.ok(figure.median > 0 && Number.isFinite(figure.median) && figure.p99 >= figure.median, `${row.id}: median ${figure.median} ms, p99 ${figure.p99} ms`);
    }
    t.equal(row.base!.label, 'direct');
    t.equal(row.peer, null, 'no peer in these rows');
    const extra = row.extra as { addedMedianMs: number; addedP99Ms: number; mainThreadUsPerRequest: number; allThreadsUsPerRequest: number; cutShort: boolean };
    t.equal(extra.addedMedianMs, row.coffer!.median - row.base!.median, `${row.id}: added = coffer − direct`);
    t.ok(extra.mainThreadUsPerRequest > 0 && Number.isFinite(extra.mainThreadUsPerRequest), `${row.id}: main thread ${extra.mainThreadUsPerRequest} µs per request`);
    t.ok(extra.allThreadsUsPerRequest >= extra.mainThreadUsPerRequest, `${row.id}: all threads ${extra.allThreadsUsPerRequest} µs per request, the main thread's included`);
    t.equal(extra.cutShort, false);
    t.match(row.headline, /^added -?\d+\.\d\d ms median, -?\d+\.\d\d ms p99; CPU per request \d+ µs main thread, \d+ µs all threads/);
  }
  const [callLegacy, callModern, listLegacy, listModern] = rows as [(typeof rows)[0], (typeof rows)[0], (typeof rows)[0], (typeof rows)[0]];
  for (const [legacy, modern] of [
    [callLegacy, callModern],
    [listLegacy, listModern],
  ] as const) {
    t.equal(legacy.met, null, 'the legacy row is the reference');
    t.equal(modern.met, (modern.extra!.addedMedianMs as number) <= (legacy.extra!.addedMedianMs as number), 'the modern row is judged against the legacy one');
    t.match(modern.scenario, /modern era \(SDK v2 client pinned to 2026-07-28/);
    t.match(modern.headline, /\(legacy adds /);
  }
  // The call loop times the bare relay in each era too (it serves calls only): what the era's own work costs any gateway.
  for (const row of [callLegacy, callModern]) {
    const floor = row.extra!.floorAddedMedianMs as number;
    t.ok(Number.isFinite(floor), `${row.id}: the bare relay adds ${floor} ms`);
    t.match(row.headline, /; the bare relay adds -?\d+\.\d{3} ms median/);
  }
  t.match(callModern.headline, /\(legacy -?\d+\.\d{3}: the era's own work costs any gateway -?\d+\.\d{3} ms\)/);
  for (const row of [listLegacy, listModern]) t.notOk('floorAddedMedianMs' in row.extra!, `${row.id}: no bare relay on lists`);
  t.match(listModern.scenario, new RegExp(`warm tools/list \\(${TOOLS} tools\\)`));
  t.match(table(rows), /\| tools\/call echo through coffer vs direct, modern era/);
});
