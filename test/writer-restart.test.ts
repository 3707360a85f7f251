// The DB writer worker dying is detected and it is replaced on the shared
// restart schedule; calls made while it is down wait for the replacement, and
// nothing acknowledged is lost.
import type { Worker } from 'node:worker_threads';
import t from 'tap';
import { openRestartingWriter, type RestartingWriterOptions } from '../src/db/restarting-writer.js';
import { spawnDbWriter, superviseDbWriter } from '../src/db/writer-handle.js';
import type { DbInit } from '../src/protocol/db.js';
import type { RestartWait } from '../src/supervision/restarter.js';
import { stdioFixture } from './fixtures/fixture-servers.js';
import { sleep, tempInit, waitFor } from './helpers/writer.js';

/** A restarting writer whose workers the test can kill: all spawned so far, the last one current; `killAtBoot` kills the next ones before they migrate. */
async function killableWriter(init: DbInit, options: RestartingWriterOptions) {
  const workers: Worker[] = [];
  const boot = { kills: 0 };
  const opened = await openRestartingWriter(init, options, (writerInit, writerOptions) => {
    const { worker, events } = spawnDbWriter(writerInit);
    workers.push(worker);
    if (boot.kills > 0) {
      boot.kills -= 1;
      void worker.terminate();
    }
    return superviseDbWriter(worker, writerOptions, events);
  });
  if (!opened.ok) throw new Error(opened.error.message);
  return { writer: opened.value, workers, boot };
}

t.test('a killed writer is replaced and calls go on', async (t) => {
  let deaths = 0;
  let restarts = 0;
  const { writer, workers } = await killableWriter(tempInit(t, 'coffer-writer-restart-'), {
    restart: { baseMs: 50, capMs: 50, resetAfterMs: 60_000 },
    onDeath: () => void deaths++,
    onRestart: () => void restarts++,
  });
  t.teardown(() => writer.close());

  t.ok((await writer.api.createServer(stdioFixture('before'), 'api')).ok);
  await workers[0]!.terminate();
  // Issued while the writer is down: waits for the replacement instead of failing or vanishing.
  const during = await writer.api.createServer(stdioFixture('during'), 'api');
  t.ok(during.ok, 'a write issued during the restart lands');
  t.equal(deaths, 1, 'the death was reported');
  t.equal(restarts, 1, 'and a replacement started');
  t.same((await writer.api.listServers()).map((record) => record.config.name).sort(), ['before', 'during'], 'nothing acknowledged was lost');
});

t.test('the shared schedule: waits double while the writer keeps dying, a death at boot counts, a long life resets', async (t) => {
  const schedule = { baseMs: 100, capMs: 400, resetAfterMs: 2_500 };
  const waits: (RestartWait & { seen: number })[] = [];
  const restartedAt: number[] = [];
  const { writer, workers, boot } = await killableWriter(tempInit(t, 'coffer-writer-schedule-'), {
    restart: schedule,
    onRestartWait: (wait) => void waits.push({ ...wait, seen: Date.now() }),
    onRestart: () => void restartedAt.push(Date.now()),
  });
  t.teardown(() => writer.close());
  const killAndWaitForReplacement = async (): Promise<void> => {
    const restarts = restartedAt.length;
    await workers.at(-1)!.terminate();
    await waitFor('the replacement writer', () => restartedAt.length > restarts, 20_000, 5);
  };

  await killAndWaitForReplacement();
  boot.kills = 1;
  await killAndWaitForReplacement();
  await killAndWaitForReplacement();
  t.same(waits.map(({ attempt, delayMs }) => [attempt, delayMs]), [[1, 100], [2, 200], [3, 400], [4, 400]], 'doubling to the cap; the death at boot was attempt 2');
  t.equal(workers.length, 5, 'one worker per attempt, never two at once');
  // Each replacement started no sooner than its wait said (the attempt killed at boot has no restart of its own).
  const starts = [restartedAt[0]!, restartedAt[1]!, restartedAt[2]!];
  for (const [i, wait] of [waits[0]!, waits[2]!, waits[3]!].entries()) t.ok(starts[i]! - wait.seen >= wait.delayMs - 2, `replacement ${i + 1} waited ${wait.delayMs} ms`);

  await sleep(schedule.resetAfterMs);
  await killAndWaitForReplacement();
  t.match(waits.at(-1), { attempt: 1, delayMs: 100 }, 'a writer that stayed up starts the run over');
  t.ok((await writer.api.createServer(stdioFixture('after'), 'api')).ok, 'the last replacement writes');
});

t.test('close() during the wait cancels the replacement; calls then fail at once', async (t) => {
  const waits: RestartWait[] = [];
  const { writer, workers } = await killableWriter(tempInit(t, 'coffer-writer-close-'), {
    restart: { baseMs: 300, capMs: 300, resetAfterMs: 60_000 },
    waitMs: 5_000,
    onRestartWait: (wait) => void waits.push(wait),
  });
  await workers[0]!.terminate();
  await waitFor('the replacement to be scheduled', () => waits.length === 1, 5_000, 5);
  await writer.close();
  const asked = Date.now();
  await t.rejects(writer.api.listServers(), { code: 'INTERNAL' }, 'a call after close is refused');
  t.ok(Date.now() - asked < 1_000, 'at once, not after the wait bound');
  await sleep(600);
  t.equal(workers.length, 1, 'no replacement was started');
  t.notOk(writer.up);
});
