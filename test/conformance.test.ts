// Proves coffer passes the official MCP conformance suite: scripts/conformance.mjs (the runner behind
// `npm run conformance`) runs the official MCP conformance suite against a real
// coffer daemon fronting the conformance fixture; every active scenario must pass.
// The whole active suite takes seconds, so it runs here in full.
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { PROJECT_ROOT } from '../src/paths.js';
import { tempDir } from './helpers/cli.js';

const RUNNER = join(PROJECT_ROOT, 'scripts', 'conformance.mjs');

interface ScenarioResult {
  name: string;
  passed: boolean;
  failures: { id: string; errorMessage?: string }[];
}

t.test('every active conformance scenario passes through coffer', async (t) => {
  const out = join(tempDir('coffer-conformance-test-'), 'result.json');
  const run = await new Promise<{ code: number; output: string }>((resolve) => {
    execFile(process.execPath, [RUNNER, '--out', out], { cwd: PROJECT_ROOT, timeout: 240_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? Number(error.code ?? 1) : 0, output: stdout + stderr }),
    );
  });
  t.ok(existsSync(out), 'the runner wrote its results', { output: run.output });
  if (!existsSync(out)) return;
  const { active } = JSON.parse(readFileSync(out, 'utf8')) as { active: ScenarioResult[] };
  t.ok(active.length >= 30, `the active suite ran (${active.length} scenarios)`);
  for (const { name, passed, failures } of active) t.ok(passed, name, { failures: failures.map(({ id, errorMessage }) => ({ id, errorMessage })) });
  t.equal(run.code, active.every((scenario) => scenario.passed) ? 0 : 1, 'the runner exit code matches its verdicts');
});
