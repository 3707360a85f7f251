// The fault matrix harness: one case = one misbehaving upstream ("bad", the
// fixture behind a fault switch) next to a healthy one ("good"), in a real
// gateway, driven by a real SDK client over /mcp. Every case checks the same
// promises: the gateway answers tools/list and tools/call within their
// deadlines (a result or a JSON-RPC error with data.code), "good" is not
// affected, "bad" heals by itself once the switch is flipped back, restarts
// stay bounded, and no child process is left behind.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Test } from 'tap';
import { isProcessAlive } from '../../src/daemon/daemon-file.js';
import type { ActorTuning } from '../../src/protocol/actor.js';
import type { Control } from '../fixtures/fault-control.js';
import { faultSwitch, networkConfig, startNetworkFixture, stdioFixture, type FaultSwitch, type RunningFixture } from '../fixtures/fixture-servers.js';
import { startGateway, waitFor, type Gateway } from './gateway.js';

/**
 * Short on purpose (every case waits some of these out), except connect: the
 * fixture takes 0.5 s to start on a quiet machine but 2-10 s on an overloaded one.
 */
const BAD_TIMEOUTS = { connect_ms: 15_000, request_ms: 1_500, list_deadline_ms: 600 };
const FAST_TUNING: Partial<ActorTuning> = { backoffInitialMs: 100, backoffMaxMs: 1_000, crashLoopLimit: 4, crashWindowMs: 2_000 };
/** What a loaded 2-core machine adds to a bound: a list answers from memory, a call may cross a process start. */
const LIST_SLACK_MS = 1_500;
const CALL_SLACK_MS = 4_000;
const LIST_BOUND_MS = BAD_TIMEOUTS.list_deadline_ms + LIST_SLACK_MS;
/** A call may first wait for a connect attempt, then for its own request timeout. */
const callBound = (timeouts: typeof BAD_TIMEOUTS): number => timeouts.connect_ms + timeouts.request_ms + CALL_SLACK_MS;
const GOOD_CALL_BOUND_MS = 1_000;
/** A list that missed its deadline is skipped until it settles: healing can take a couple of connect attempts. */
const recoveryBound = (timeouts: typeof BAD_TIMEOUTS): number => 2 * timeouts.connect_ms + 10_000;
/** A stdio child being closed gets stdin EOF, SIGTERM after 2 s, SIGKILL after 4 s. */
const CHILD_EXIT_MS = 8_000;

/** How one call may end: a result, coffer's error (by data.code), or the upstream's own JSON-RPC error. */
export type Outcome = 'ok' | 'UPSTREAM_TIMEOUT' | 'UPSTREAM_UNAVAILABLE' | 'upstream';

export interface FaultContext {
  gateway: Gateway;
  client: Client;
  fault: FaultSwitch;
  /** The faulty upstream's server name (unique per case: the gateway is shared). */
  name: string;
  /** GET /servers/{name}. */
  health(): Promise<{ state: string; attempts: number; last_error: string | null; degraded: boolean }>;
  /** The tool names of the merged tools/list. */
  toolNames(): Promise<string[]>;
}

export interface FaultCase {
  name: string;
  transport?: 'stdio' | 'http';
  /** In force when the upstream process starts (start-time faults). */
  atStart?: Control;
  /** Switched on once the upstream is ready. */
  fault?: Control;
  /** Runs after the switch, before the checks (e.g. kill the child). */
  provoke?(ctx: FaultContext, t: Test): Promise<void>;
  /** Whether the faulty upstream's tools are in the merged list while it is broken. */
  listed: 'absent' | 'present' | 'either';
  /** How tools/call on it may end while it is broken. */
  call: readonly Outcome[];
  /** The tool called on it (default echo). */
  tool?: string;
  /** Extra checks while broken. */
  during?(ctx: FaultContext, t: Test): Promise<void>;
  /** Upper bound on the processes it was started as over the whole case (default 3). */
  maxSpawns?: number;
  /** Overrides BAD_TIMEOUTS for this upstream. */
  timeouts?: Partial<typeof BAD_TIMEOUTS>;
}

function outcomeOf(error: unknown): Outcome | string {
  const { code, data } = error as { code?: number; data?: { code?: string } };
  if (data?.code === 'UPSTREAM_TIMEOUT' || data?.code === 'UPSTREAM_UNAVAILABLE') return data.code;
  // -32001 without data.code is the SDK client's own timeout: coffer did not answer in time.
  return typeof code === 'number' && code !== -32001 ? 'upstream' : `no answer: ${String(error)}`;
}

export async function timed<T>(step: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const started = Date.now();
  const value = await step();
  return { ms: Date.now() - started, value };
}

export function callOutcome(client: Client, tool: string, boundMs = callBound(BAD_TIMEOUTS)): Promise<{ ms: number; value: Outcome | string }> {
  return timed(() =>
    client.callTool({ name: tool, arguments: { probe: true } }, undefined, { timeout: boundMs + 5_000 }).then(
      (result) => (result.isError ? 'upstream' : 'ok') as Outcome,
      outcomeOf,
    ),
  );
}

/** Polls the upstream's health until its state is one of `states` (or the time is up); answers the last health. */
export async function waitForState(ctx: FaultContext, states: string[], timeoutMs = 10_000): Promise<Awaited<ReturnType<FaultContext['health']>>> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const health = await ctx.health();
    if (states.includes(health.state) || Date.now() > until) return health;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function register(gateway: Gateway, name: string, c: FaultCase, fault: FaultSwitch): Promise<RunningFixture | null> {
  const timeouts = { ...BAD_TIMEOUTS, ...c.timeouts };
  let network: RunningFixture | null = null;
  let config = stdioFixture(name, fault.args, timeouts);
  if (c.transport === 'http') {
    network = await startNetworkFixture('http', ['--name', name, ...fault.args]);
    config = networkConfig(name, 'http', network.url, timeouts);
  }
  const created = await gateway.api('POST', '/servers', config);
  if (created.status !== 201) throw new Error(`register ${name}: ${JSON.stringify(created.body)}`);
  return network;
}

/**
 * Runs the rows as tap subtests against one gateway with one healthy
 * upstream ("good"); each row registers its own faulty upstream and removes
 * it at the end (which must leave no child behind).
 */
export function faultMatrix(t: Test, cases: FaultCase[], tuning: Partial<ActorTuning> = {}): void {
  let shared: Promise<Gateway> | undefined;
  const gateway = (): Promise<Gateway> =>
    (shared ??= (async () => {
      const started = await startGateway({ tuning: { ...FAST_TUNING, ...tuning } });
      t.teardown(() => started.close());
      await started.addServer(stdioFixture('good'));
      return started;
    })());
  for (const [index, c] of cases.entries()) t.test(c.name, async (t) => runCase(t, await gateway(), `bad${index}`, c));
}

async function runCase(t: Test, gateway: Gateway, name: string, c: FaultCase): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'coffer-fault-'));
  const fault = faultSwitch(dir, c.atStart ?? {});
  let network: RunningFixture | null = null;
  t.teardown(async () => {
    await network?.kill();
    rmSync(dir, { recursive: true, force: true });
  });
  network = await register(gateway, name, c, fault);
  const health = async () => (await gateway.api('GET', `/servers/${name}`)).body.health;
  if (!c.atStart) await waitFor(`${name} ready`, async () => (await health()).state === 'ready');
  const client = await gateway.client();
  t.teardown(() => client.close());
  const toolNames = async () => (await client.listTools(undefined, { timeout: LIST_BOUND_MS + 5_000 })).tools.map((tool) => tool.name);
  const ctx: FaultContext = { gateway, client, fault, name, health, toolNames };
  if (c.fault) await fault.set(c.fault);
  await c.provoke?.(ctx, t);

  const list = await timed(toolNames);
  t.ok(list.ms < LIST_BOUND_MS, `tools/list answered in ${list.ms} ms (bound ${LIST_BOUND_MS})`);
  t.ok(list.value.includes('good__echo'), 'the healthy upstream is listed');
  const listed = list.value.some((tool) => tool.startsWith(`${name}__`));
  if (c.listed !== 'either') t.equal(listed, c.listed === 'present', `the faulty upstream is ${c.listed} in the list`);

  const bound = callBound({ ...BAD_TIMEOUTS, ...c.timeouts });
  const [bad, good] = await Promise.all([callOutcome(client, `${name}__${c.tool ?? 'echo'}`, bound), callOutcome(client, 'good__echo')]);
  t.ok(c.call.includes(bad.value as Outcome), `tools/call on it: ${bad.value} (allowed: ${c.call.join(', ')})`);
  t.ok(bad.ms < bound, `answered in ${bad.ms} ms (bound ${bound})`);
  t.equal(good.value, 'ok', 'the healthy upstream answers meanwhile');
  t.ok(good.ms < GOOD_CALL_BOUND_MS, `in ${good.ms} ms`);
  await c.during?.(ctx, t);
  t.equal((await gateway.api('GET', '/daemon/status')).status, 200, 'the gateway is up');

  // Fixed behind coffer's back: no restart, no refresh, it must notice by itself.
  await fault.set({});
  const healed = await timed(() =>
    waitFor(
      `${name} to recover`,
      async () => (await callOutcome(client, `${name}__echo`)).value === 'ok' && (await toolNames()).includes(`${name}__echo`),
      recoveryBound({ ...BAD_TIMEOUTS, ...c.timeouts }),
    ),
  );
  t.pass(`recovered by itself ${healed.ms} ms after the fix`);

  const pids = fault.pids();
  t.ok(pids.length <= (c.maxSpawns ?? 3), `started ${pids.length} time(s) (at most ${c.maxSpawns ?? 3})`);
  if (network !== null) {
    t.equal((await gateway.api('DELETE', `/servers/${name}`)).status, 204, 'removed (its actor stops)');
    return;
  }
  // Only the serving child may be alive; every earlier one must be gone, and removing the server stops that one too.
  await waitFor('earlier children to exit', () => pids.slice(0, -1).every((pid) => !isProcessAlive(pid)), CHILD_EXIT_MS).catch(() => undefined);
  t.same(pids.slice(0, -1).filter(isProcessAlive), [], 'no orphaned child while running');
  t.equal((await gateway.api('DELETE', `/servers/${name}`)).status, 204, 'removed (its actor stops)');
  await waitFor('its child to exit', () => pids.every((pid) => !isProcessAlive(pid)), CHILD_EXIT_MS).catch(() => undefined);
  t.same(pids.filter(isProcessAlive), [], 'no child left once the server is removed');
}
