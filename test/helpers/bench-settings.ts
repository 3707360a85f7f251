// The bench's quick settings shrunk to the least that runs: the bench tests
// run scenarios for real, and change only what their rows read.
import type { Context, Settings } from '../../bench/scenarios/context.js';
import type { Row } from '../../bench/report.js';
import { startHost } from '../../bench/targets/host.js';

export function tinySettings(overrides: Partial<Settings> = {}): Settings {
  return {
    quick: true,
    toolsPerUpstream: 5,
    fanoutTools: 5,
    listAt: 1,
    coldAt: 1,
    hungUpstreams: 1,
    callRounds: 20,
    warmupMs: 0,
    listRounds: 1,
    coldRestarts: 1,
    throughputClients: 1,
    throughputMs: 1,
    throughputRounds: 1,
    hungDeadlineMs: 500,
    hungLists: 1,
    hungCalls: 1,
    peerHungWaitMs: 1,
    scalePoints: [1],
    peerScaleMax: 1,
    footprintUpstreams: 1,
    spreadPoints: [1],
    actorStartPoints: [1],
    spreadLatencyRounds: 1,
    loopDeadlineMs: 120_000,
    readyTimeoutMs: () => 60_000,
    ...overrides,
  };
}

/** A scenario's rows at these settings, against a synthetic host of its own (stopped when the test ends). */
export async function scenarioRows(t: { teardown(fn: () => unknown): void }, scenario: (ctx: Context) => Promise<Row[]>, settings: Settings): Promise<Row[]> {
  const host = await startHost(settings.toolsPerUpstream);
  t.teardown(() => host.stop());
  return scenario({ settings, host, log: () => undefined });
}
