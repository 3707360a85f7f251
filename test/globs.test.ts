// Toolset and pin globs (`tool:read_*`): `*` any run, `?` one character, the
// whole name. The same answers as the textbook RegExp, in time bounded by the
// lengths, since a glob is written by whoever edits a toolset or a pin.
import t from 'tap';
import fc from 'fast-check';
import { performance } from 'node:perf_hooks';
import { globMatcher } from '../src/toolsets/patterns.js';
import { Pins } from '../src/search/pins.js';
import { ToolsetView } from '../src/toolsets/view.js';

/** The RegExp the globs were once compiled to: right, but backtracking. */
const reference = (glob: string) => new RegExp(`^${glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')}$`, 's');

t.test('a glob matches exactly what the RegExp reading of it matches', async (t) => {
  t.ok(globMatcher('read_*')('read_file'));
  t.ok(globMatcher('read_*')('read_'));
  t.notOk(globMatcher('read_*')('xread_file'), 'anchored at the start');
  t.notOk(globMatcher('*_file')('read_files'), 'and at the end');
  t.ok(globMatcher('a?c')('abc'));
  t.notOk(globMatcher('a?c')('ac'), '? is one character, not none');
  t.ok(globMatcher('a.b')('a.b'));
  t.notOk(globMatcher('a.b')('axb'), 'a dot is a dot');
  t.ok(globMatcher('*')(''), '* matches the empty name');
  t.ok(globMatcher('x*y*z')('x\ny\nz'), 'across line breaks');
  const text = fc.string({ unit: fc.constantFrom('a', 'b', '.', '\n', 'é'), maxLength: 12 });
  const glob = fc.string({ unit: fc.constantFrom('a', 'b', '.', '*', '?', '\n'), maxLength: 8 });
  fc.assert(fc.property(glob, text, (g, s) => globMatcher(g)(s) === reference(g).test(s)), { numRuns: 5_000 });
});

t.test('a glob built to make a backtracking matcher hang is answered at once, in a toolset and a pin alike', async (t) => {
  const glob = '*a*a*a*a*a*a*a*a*a*a*b';
  const name = 'a'.repeat(64);
  const view = new ToolsetView({ name: 'slow', description: '', servers: [{ server: 's', include: [`tool:${glob}`] }] });
  const pins = new Pins([`s/tool:${glob}`]);
  const started = performance.now();
  t.notOk(view.includes('s', 'tool', name));
  t.notOk(pins.has('s', name));
  t.ok(view.includes('s', 'tool', `${name}b`));
  // The RegExp took more than a minute on this name with seven stars; ten here.
  t.ok(performance.now() - started < 1_000, `${(performance.now() - started).toFixed(1)} ms`);
});
