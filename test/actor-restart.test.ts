// An upstream's actor worker that dies is replaced on the shared restart
// schedule: the wait shows as state `backoff`, calls meanwhile answer
// UPSTREAM_UNAVAILABLE at once, the waits double while it keeps dying and
// start over after a long life, and stop() during a wait leaves nothing running.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker, type WorkerOptions } from 'node:worker_threads';
import t from 'tap';
import { actorEntry } from '../src/paths.js';
import type { ActorEvent, ActorStatus } from '../src/protocol/actor.js';
import { callTool, grandchildOf, isAlive, startActor, toolJson, type RunningActor, type Teardown } from './fixtures/actor-harness.js';
import { stdioFixture } from './fixtures/fixture-servers.js';
import { sleep, waitFor } from './helpers/wait.js';

const SCHEDULE = { baseMs: 200, capMs: 800, resetAfterMs: 6_000 };

/** An actor on the stdio fixture whose workers the test can kill (the last one is current), each with when it was spawned. */
function killableActor(t: Teardown, name: string, args: string[] = []) {
  const workers: { worker: Worker; spawnedAt: number }[] = [];
  const newWorker = (options: WorkerOptions): Worker => {
    const worker = new Worker(actorEntry(), options);
    workers.push({ worker, spawnedAt: Date.now() });
    return worker;
  };
  const actor = startActor(t, stdioFixture(name, args), {}, { restart: SCHEDULE, newWorker });
  return { actor, workers };
}

/**
 * The process runs: neither gone nor a zombie. A stdio child whose worker was
 * killed stays a zombie until the daemon exits, as only the dead worker's
 * event loop would have reaped it.
 */
function running(pid: number): boolean {
  if (!isAlive(pid)) return false;
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/** Kills the current worker; answers the backoff status it announced, when, and the index of that event. */
async function kill(actor: RunningActor, workers: { worker: Worker }[]): Promise<{ status: ActorStatus; at: number; index: number }> {
  const from = actor.events.length;
  await workers.at(-1)!.worker.terminate();
  const event = (await actor.waitForState('backoff', from, 10_000)) as Extract<ActorEvent, { type: 'state' }>;
  return { status: event.status, at: Date.now(), index: actor.events.indexOf(event) };
}

t.test('the waits double while the worker keeps dying, calls meanwhile fail fast, a long life resets the run', async (t) => {
  const { actor, workers } = killableActor(t, 'phoenix');
  await actor.waitForState('ready');
  const childBefore = toolJson(await callTool(actor, 'whoami')).pid as number;

  const expected = [200, 400, 800, 800];
  let lastBackoff = 0;
  for (const [i, delayMs] of expected.entries()) {
    const spawned = workers.length;
    const { status, at, index } = await kill(actor, workers);
    lastBackoff = index;
    t.match(status, { state: 'backoff', attempts: i + 1, pid: null, lastError: new RegExp(`starts in ${delayMs} ms .*attempt ${i + 1}\\)$`) }, `death ${i + 1}: backoff, ${delayMs} ms`);
    t.same(actor.handle.lastStatus, status, 'the status every surface reads shows the wait');

    const asked = Date.now();
    const answer = await callTool(actor, 'echo', { text: 'hi' });
    t.match(answer, { ok: false, error: { code: -32010, message: /phoenix: .*starts in/, data: { code: 'UPSTREAM_UNAVAILABLE', server: 'phoenix' } } }, 'a call during the wait is refused');
    // Refused, so answered during the wait: a call that waited for the restart would have succeeded.
    t.comment(`refused after ${Date.now() - asked} ms (the wait: ${delayMs} ms)`);
    t.match(await actor.handle.list('tools', false), { ok: false, error: { code: 'UPSTREAM_UNAVAILABLE' } }, 'a list too');
    t.equal(workers.length, spawned, 'no replacement yet');

    await waitFor('the replacement worker', () => workers.length > spawned, 10_000, 2);
    const waited = workers.at(-1)!.spawnedAt - at;
    t.ok(waited >= delayMs - 50, `the replacement came ${waited} ms after the backoff state (wait ${delayMs} ms)`);
    // The replacements after the first die as they boot: well inside resetAfterMs, however slow the machine.
  }
  t.notOk(running(childBefore), 'the dead worker left no stdio child running');

  await actor.waitForState('ready', lastBackoff);
  t.match(toolJson(await callTool(actor, 'echo', { text: 'back' })), { text: 'back' }, 'the last replacement answers');

  await sleep(SCHEDULE.resetAfterMs - (Date.now() - workers.at(-1)!.spawnedAt) + 100);
  const { status, index } = await kill(actor, workers);
  t.match(status, { state: 'backoff', attempts: 1, lastError: /starts in 200 ms/ }, 'a worker that stayed up starts the run over');
  await actor.waitForState('ready', index);
});

t.test('stop() during the wait: no replacement, no child left', async (t) => {
  const { actor, workers } = killableActor(t, 'stopped-phoenix');
  await actor.waitForState('ready');
  const child = toolJson(await callTool(actor, 'whoami')).pid as number;
  await kill(actor, workers);
  const stopped = Date.now();
  await actor.handle.stop();
  t.ok(Date.now() - stopped < 2_000, 'stop() does not wait for the replacement');
  await sleep(SCHEDULE.baseMs + 500);
  t.equal(workers.length, 1, 'no replacement worker was started');
  t.notOk(running(child), 'no stdio child running');
  t.match(await callTool(actor, 'echo'), { ok: false, error: { data: { code: 'UPSTREAM_UNAVAILABLE' } } }, 'calls after stop() are refused');
});

t.test('a killed worker: what its stdio child forked is killed with the child, not left running', async (t) => {
  const pids = join(mkdtempSync(join(tmpdir(), 'coffer-grandchild-')), 'pids');
  const { actor, workers } = killableActor(t, 'forking-phoenix', ['--grandchild', pids]);
  await actor.waitForState('ready');
  const grandchild = grandchildOf(t, pids);
  t.ok(running(grandchild), 'the grandchild runs');
  await kill(actor, workers);
  await actor.handle.stop();
  await waitFor('the grandchild to be gone', () => !running(grandchild), 3_000).catch(() => undefined);
  t.notOk(running(grandchild), 'the first child\'s grandchild is gone');
});
