// The upstream fault matrix, part 1: stdio upstreams that hang, crash, exit,
// loop, or write what is not MCP. Each row runs test/helpers/fault-matrix.ts:
// list and call answered in time, the healthy upstream unaffected, recovery
// after the fix without restarting coffer, bounded restarts, no orphans.
import t, { type Test } from 'tap';
import { faultMatrix, waitForState, type FaultCase, type FaultContext } from './helpers/fault-matrix.js';

/** An upstream that never gets through initialize is shown as such, not as merely empty. */
async function showsConnectFailure(ctx: FaultContext, t: Test): Promise<void> {
  const health = await waitForState(ctx, ['backoff', 'failed']);
  t.match(health.last_error, /connect failed/, `${health.state}, and the reason is shown: ${health.last_error}`);
  t.ok((await ctx.gateway.api('GET', '/daemon/status')).body.upstreams.degraded >= 1, 'counted as degraded in the daemon status');
}

const CASES: FaultCase[] = [
  { name: 'hangs after connect', fault: { fault: 'hang' }, listed: 'absent', call: ['UPSTREAM_TIMEOUT'] },
  { name: 'hangs mid-call (first page, progress, then silence)', fault: { fault: 'hang-mid' }, listed: 'absent', call: ['UPSTREAM_TIMEOUT'] },
  {
    name: 'crashes mid-call',
    fault: { fault: 'crash' },
    listed: 'absent',
    call: ['UPSTREAM_UNAVAILABLE'],
    // Every request kills it, so it restarts (with backoff) until fixed.
    maxSpawns: 12,
  },
  {
    name: 'exits at start',
    atStart: { fault: 'exit-at-start' },
    listed: 'absent',
    call: ['UPSTREAM_UNAVAILABLE'],
    maxSpawns: 12,
    during: showsConnectFailure,
  },
  {
    name: 'crash loop (ready, then exits 200 ms later, every time)',
    atStart: { fault: 'crash-loop' },
    listed: 'either',
    call: ['ok', 'UPSTREAM_UNAVAILABLE'],
    // Backoff doubles from 100 ms up to 1 s (then `failed`, retried every 1 s): a respawn storm would be dozens a second.
    maxSpawns: 14,
    async during(ctx, t) {
      const health = await waitForState(ctx, ['backoff', 'failed']);
      t.ok(['backoff', 'failed'].includes(health.state) && health.attempts >= 1, `visible as ${health.state} after ${health.attempts} quick death(s)`);
    },
  },
  {
    name: 'garbage on stdout, never MCP',
    atStart: { fault: 'garbage' },
    // Only connect_ms tells garbage from a slow start: keep it short here.
    timeouts: { connect_ms: 8_000 },
    listed: 'absent',
    call: ['UPSTREAM_UNAVAILABLE'],
    maxSpawns: 8,
    during: showsConnectFailure,
  },
  { name: 'non-JSON lines between its messages', fault: { fault: 'garbage-mid' }, listed: 'present', call: ['ok'] },
  { name: 'responses with ids nobody asked for', fault: { fault: 'unknown-id' }, listed: 'present', call: ['ok'] },
  { name: 'drips one byte a second', fault: { fault: 'drip' }, listed: 'absent', call: ['UPSTREAM_TIMEOUT'] },
];

faultMatrix(t, CASES);
