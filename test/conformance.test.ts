// Proves coffer meets the official MCP conformance suite as far as its committed
// baselines say: scripts/conformance.mjs (the runner behind `npm run conformance`)
// runs both requirement sets (2025-11-25, 2026-07-28) against a real coffer
// daemon fronting a conformance fixture and, beside it, the tasks fixture, once
// per fixture: the v1 one (2025-11-25 only: modern callers cross coffer's era
// bridge) and the v2 one, modern-only (2025 clients cross it the other way); the
// runner's third, `--fixture both`, is left to `npm run conformance -- --fixture both`.
// Every 2025-11-25 scenario must pass with each; for both sets, the failures must
// be exactly the baseline's (no regression, no stale entry). The four runs take a
// minute or two, so they run here in full.
// The client part (the non-auth client scenarios, coffer as the client: a
// daemon per scenario, thirteen of them) takes under two minutes and runs here
// too; every one of its scenarios must pass. (The client-auth part, a daemon per
// scenario for some fifty scenarios, takes about a quarter of an hour: `npm run
// conformance` runs it, this test does not.)
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { PROJECT_ROOT } from '../src/paths.js';
import { tempDir } from './helpers/cli.js';

const RUNNER = join(PROJECT_ROOT, 'scripts', 'conformance.mjs');

interface ScenarioResult {
  name: string;
  scored: boolean;
  passed: boolean;
  failures: { id: string; errorMessage?: string }[];
}

interface RequirementsRun {
  requirements: string;
  /** Server part: the conformance fixture coffer fronted, and the protocol version it spoke to it. */
  fixture?: string;
  protocol?: string;
  rows: ScenarioResult[];
  baseline: { unexpected: string[]; stale: string[]; gone: string[] };
}

/** Runs one part of the runner; its results, or null (with a failed assertion) when it wrote none. */
async function runPart(t: Test, part: 'server' | 'client'): Promise<{ code: number; runs: RequirementsRun[] } | null> {
  const out = join(tempDir(`coffer-conformance-${part}-test-`), 'result.json');
  const run = await new Promise<{ code: number; output: string }>((resolve) => {
    execFile(process.execPath, [RUNNER, '--part', part, '--out', out], { cwd: PROJECT_ROOT, timeout: 280_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? Number(error.code ?? 1) : 0, output: stdout + stderr }),
    );
  });
  t.ok(existsSync(out), 'the runner wrote its results', { output: run.output });
  if (!existsSync(out)) return null;
  const { runs } = JSON.parse(readFileSync(out, 'utf8')) as { runs: RequirementsRun[] };
  return { code: run.code, runs };
}

t.test('the conformance suite through coffer matches the committed baselines', async (t) => {
  const run = await runPart(t, 'server');
  if (!run) return;
  const { runs } = run;
  t.same(
    runs.map((r) => `${r.fixture} ${r.requirements} (coffer spoke ${r.protocol})`),
    ['legacy', 'modern'].flatMap((fixture) =>
      ['2025-11-25', '2026-07-28'].map((requirements) => `${fixture} ${requirements} (coffer spoke ${fixture === 'modern' ? '2026-07-28' : '2025-11-25'})`),
    ),
    'both requirement sets ran with each fixture, each fixture reached in the era meant',
  );
  for (const { fixture, requirements, rows, baseline } of runs) {
    t.ok(rows.filter((row) => row.scored).length >= 30, `${fixture} ${requirements}: the scored suite ran (${rows.length} scenarios)`);
    t.same(baseline, { unexpected: [], stale: [], gone: [] }, `${fixture} ${requirements}: the failures are exactly the baseline's`, {
      failures: rows.filter((row) => !row.passed).map(({ name, failures }) => ({ name, first: failures[0] })),
    });
    if (requirements === '2025-11-25') for (const { name, passed, failures } of rows) t.ok(passed, `${fixture} 2025-11-25 ${name}`, { failures });
  }
  t.equal(run.code, runs.every((r) => r.baseline.unexpected.length + r.baseline.stale.length + r.baseline.gone.length === 0) ? 0 : 1, 'the runner exit code matches its verdicts');
});

t.test('the client scenarios other than auth, coffer as the client, all pass', async (t) => {
  const run = await runPart(t, 'client');
  if (!run) return;
  const { runs } = run;
  t.same(runs.map((r) => r.requirements), ['2025-11-25', '2026-07-28'], 'both requirement sets ran');
  for (const { requirements, rows, baseline } of runs) {
    t.ok(rows.length >= 5, `${requirements}: the client scenarios ran (${rows.length})`);
    t.same(baseline, { unexpected: [], stale: [], gone: [] }, `${requirements}: the failures are exactly the baseline's`);
    for (const { name, passed, failures } of rows) t.ok(passed, `${requirements} ${name}`, { failures });
  }
  t.equal(run.code, 0, 'the runner exits 0');
});
