// The bench's measuring loop (warm-up by rounds and by time, kept out of the
// summaries but recorded: the "first calls" figures come from it) and its
// judgement of growth with upstream count.
import t from 'tap';
import { interleave } from '../bench/measure.js';
import { spreadSequence } from '../bench/scenarios/spread.js';
import { growthOrder } from '../bench/stats.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

t.test('warm-up runs for at least its rounds and its time; only later rounds are summarised', async (t) => {
  const calls = { a: 0, b: 0 };
  const started = Date.now();
  const result = await interleave(
    [
      { name: 'a', step: () => sleep(5).then(() => calls.a++) },
      { name: 'b', step: () => sleep(1).then(() => calls.b++) },
    ],
    { rounds: 4, warmup: 2, warmupMs: 120, deadlineMs: 10_000 },
  );
  const warmupRounds = result.warmup.a!.length;
  // On a loaded machine two rounds can outlast the warm-up time by themselves; only then may it stop at two.
  const twoRoundsMs = result.warmup.a!.slice(0, 2).reduce((sum, ms) => sum + ms, 0) + result.warmup.b!.slice(0, 2).reduce((sum, ms) => sum + ms, 0);
  t.ok(warmupRounds > 2 || twoRoundsMs >= 120, `time, not only the round count, bounds the warm-up (${warmupRounds} rounds, the first two ${twoRoundsMs.toFixed(0)} ms)`);
  t.equal(result.warmup.b!.length, warmupRounds, 'every path warms up alike');
  t.ok(Date.now() - started >= 120, 'the warm-up lasted its time');
  t.equal(result.samples.a!.length, 4);
  t.equal(calls.a, warmupRounds + 4, 'warm-up calls are not in the samples');
  t.equal(result.summaries.a!.n, 4);
  t.ok(result.warmup.a!.every((ms) => ms >= 4), 'warm-up timings are recorded');
});

t.test('without warmupMs, the warm-up is its round count', async (t) => {
  const result = await interleave([{ name: 'a', step: async () => undefined }], { rounds: 3, warmup: 5, deadlineMs: 10_000 });
  t.equal(result.warmup.a!.length, 5);
  t.equal(result.samples.a!.length, 3);
  t.notOk(result.cutShort);
});

t.test('growth order: the slope of ln(latency) over ln(tools)', async (t) => {
  const linear = [200, 2000, 6000, 10_000].map((tools) => ({ tools, median: tools * 0.015 }));
  t.ok(Math.abs(growthOrder(linear) - 1) < 1e-9, 'linear is 1');
  t.ok(Math.abs(growthOrder(linear.map((point) => ({ ...point, median: point.median * 7 }))) - 1) < 1e-9, 'a constant factor changes nothing');
  t.ok(Math.abs(growthOrder(linear.map((point) => ({ ...point, median: point.tools ** 2 }))) - 2) < 1e-9, 'quadratic is 2');
  // The 14:07 full run: one noisy point (17.8 ms per 1,000 tools at 300 upstreams) is not a trend.
  const measured = [
    { tools: 200, median: 3.3 },
    { tools: 2000, median: 29.3 },
    { tools: 6000, median: 107 },
    { tools: 10_000, median: 143.2 },
  ];
  t.ok(growthOrder(measured) <= 1.1);
});

t.test('spread sequences: even visits every upstream in turn; Zipf-like is skewed, deterministic and reaches the tail', async (t) => {
  const even = spreadSequence(50, 'even', 200);
  t.same(even.slice(0, 3), [0, 1, 2]);
  t.equal(new Set(even).size, 50, 'every upstream is called');
  const zipf = spreadSequence(200, 'zipf');
  t.same(zipf, spreadSequence(200, 'zipf'), 'the same sequence for every path and run');
  const counts = new Array(200).fill(0) as number[];
  for (const index of zipf) counts[index]! += 1;
  t.ok(counts[0]! > counts[10]! && counts[10]! > counts[150]!, `skewed: ${counts[0]} / ${counts[10]} / ${counts[150]} calls`);
  t.ok(zipf.every((index) => index >= 0 && index < 200), 'every index names an upstream');
  t.ok(counts.filter((count) => count > 0).length > 100, 'the long tail is called too');
});
