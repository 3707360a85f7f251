// The bench entry points' command lines: --help, and a bad option is a usage
// error (exit 2, the reason and the usage) before anything is started.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import t from 'tap';
import { DIST_ROOT } from '../src/paths.js';

const run = (script: string, ...args: string[]) => spawnSync(process.execPath, [join(DIST_ROOT, 'bench', script), ...args], { encoding: 'utf8', timeout: 30_000 });

for (const [script, name] of [['run.js', 'bench'], ['soak.js', 'soak']] as const) {
  t.test(`npm run ${name}`, async (t) => {
    const help = run(script, '--help');
    t.equal(help.status, 0);
    t.match(help.stdout, new RegExp(`^usage: npm run ${name}`));
    t.match(help.stdout, /exit codes:/);

    const unknown = run(script, '--bogus');
    t.equal(unknown.status, 2, 'an unknown option is a usage error');
    t.match(unknown.stderr, /Unknown option '--bogus'\nusage:/);
    t.notMatch(unknown.stderr, /\n\s+at /, 'no stack trace');
  });
}

t.test('bad values are refused before anything starts', async (t) => {
  for (const [script, args, reason] of [
    ['run.js', ['--only', 'calls,nope'], /--only: unknown scenario nope/],
    ['run.js', ['--footprint-at', '0'], /--footprint-at must be a positive integer/],
    ['soak.js', ['--seconds', 'x'], /--seconds must be a positive integer/],
    ['soak.js', ['--minutes', '1', '--seconds', '5'], /not both/],
  ] as const) {
    const answer = run(script, ...args);
    t.equal(answer.status, 2, `${script} ${args.join(' ')}`);
    t.match(answer.stderr, reason);
  }
});
