// The shared restart policy (src/supervision/): the pure schedule, and the
// restarter's one-replacement-at-a-time cycle driven by a replacement that is
// a plain function (the workers themselves: actor-restart and writer-restart).
import t from 'tap';
import { Restarter, type RestartWait } from '../src/supervision/restarter.js';
import { attemptAfterDeath, restartDelay, type RestartSchedule } from '../src/supervision/restart-schedule.js';
import { sleep, waitFor } from './helpers/wait.js';

t.test('the delay doubles from the base and stops at the cap', async (t) => {
  const actor = { baseMs: 1_000, capMs: 60_000 };
  t.same([0, 1, 2, 3, 4, 5, 6, 7, 20].map((attempt) => restartDelay(actor, attempt)), [1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000, 60_000]);
  const writer = { baseMs: 500, capMs: 10_000 };
  t.same([0, 1, 2, 3, 4, 5, 6].map((attempt) => restartDelay(writer, attempt)), [500, 1_000, 2_000, 4_000, 8_000, 10_000, 10_000]);
});

t.test('a worker that stayed up long enough starts the count over', async (t) => {
  const schedule: RestartSchedule = { baseMs: 1_000, capMs: 60_000, resetAfterMs: 60_000 };
  t.equal(attemptAfterDeath(schedule, 4, 59_999), 4, 'a short life continues the run');
  t.equal(attemptAfterDeath(schedule, 4, 60_000), 0, 'a minute up resets it');
  t.equal(attemptAfterDeath(schedule, 0, 0), 0);
});

/** A restarter whose replacements answer as `outcomes` says (true: up), recording its waits and replacements. */
function restarter(schedule: RestartSchedule, outcomes: boolean[] = []) {
  const waits: RestartWait[] = [];
  let replacements = 0;
  const onReplace = new Set<() => void>();
  const subject = new Restarter(schedule, {
    replace: async () => {
      replacements += 1;
      for (const listener of onReplace) listener();
      return outcomes.shift() ?? true;
    },
    onWait: (wait) => void waits.push(wait),
  });
  return { subject, waits, replacements: () => replacements, onReplace };
}

const FAST: RestartSchedule = { baseMs: 20, capMs: 80, resetAfterMs: 400 };

t.test('deaths told twice start one replacement; failed attempts wait longer', async (t) => {
  const { subject, waits, replacements } = restarter(FAST, [false, false]);
  const before = Date.now();
  subject.died();
  subject.died();
  t.equal(waits.length, 1, 'one replacement scheduled');
  await waitFor('three replacements', () => replacements() === 3, 5_000, 5);
  await sleep(100);
  t.equal(replacements(), 3, 'two replacements that did not come up, then one that did, and no more');
  t.same(waits.map(({ attempt, delayMs }) => [attempt, delayMs]), [[1, 20], [2, 40], [3, 80]]);
  t.ok(waits[0]!.at >= before + 20, 'the wait names when the replacement starts');
  subject.stop();
});

t.test('a death while the replacement starts counts as a failed attempt', async (t) => {
  const { subject, waits, replacements, onReplace } = restarter(FAST);
  const dieWhileStarting = (): void => {
    onReplace.delete(dieWhileStarting);
    subject.died();
  };
  onReplace.add(dieWhileStarting);
  subject.died();
  await waitFor('the second replacement', () => replacements() === 2, 5_000, 5);
  t.same(waits.map(({ attempt }) => attempt), [1, 2], 'the second attempt was scheduled by the death during start');
  subject.stop();
});

t.test('the run grows while deaths come quickly and resets after a long life', async (t) => {
  const { subject, waits, replacements } = restarter(FAST);
  for (let i = 1; i <= 4; i++) {
    subject.died();
    await waitFor(`replacement ${i}`, () => replacements() === i, 5_000, 5);
    // Up until the promise of replace() settles.
    await sleep(0);
  }
  await sleep(FAST.resetAfterMs);
  subject.died();
  t.same(waits.map(({ delayMs }) => delayMs), [20, 40, 80, 80, 20]);
  subject.stop();
});

t.test('stop() during the wait cancels the replacement, and later deaths are ignored', async (t) => {
  const { subject, waits, replacements } = restarter(FAST);
  subject.died();
  subject.stop();
  await sleep(100);
  subject.died();
  t.equal(replacements(), 0, 'no replacement started');
  t.equal(waits.length, 1);
});
