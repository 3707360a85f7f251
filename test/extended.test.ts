// extended(): a spread's values, Object.assign's hidden classes, and an own
// "__proto__" key kept as data.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { extended } from '../src/protocol/extended.js';

t.test('the values of a spread: later keys win, the inputs stay as they were', async (t) => {
  const base = { a: 1, b: 2 };
  const extra = { b: 3, c: 4 };
  t.same(extended(base, extra), { a: 1, b: 3, c: 4 });
  t.same(base, { a: 1, b: 2 });
  t.same(extra, { b: 3, c: 4 });
});

t.test('an own "__proto__" key of parsed JSON stays an own data key; the prototype stays Object.prototype', async (t) => {
  const base = JSON.parse('{"__proto__": {"polluted": true}, "keep": 1}') as Record<string, unknown>;
  const out = extended(base, { added: 2 }) as Record<string, unknown>;
  t.equal(Object.getPrototypeOf(out), Object.prototype);
  t.same(Object.getOwnPropertyDescriptor(out, '__proto__')?.value, { polluted: true });
  t.equal(out.polluted, undefined, 'nothing inherited from it');
  const fromExtra = extended({ keep: 1 }, JSON.parse('{"__proto__": {"polluted": true}}') as object) as Record<string, unknown>;
  t.equal(Object.getPrototypeOf(fromExtra), Object.prototype);
  t.same(Object.getOwnPropertyDescriptor(fromExtra, '__proto__')?.value, { polluted: true });
});

t.test('objects it makes in optimised code share one hidden class (a spread followed by a new key does not, on this runtime)', async (t) => {
  const module = fileURLToPath(new URL('../src/protocol/extended.js', import.meta.url));
  const script = `
    const { extended } = await import(${JSON.stringify(module)});
    const make = () => ({ requestId: 1, caller: 'k', signal: null });
    const viaExtended = (c) => extended(c, { toolset: 1 });
    const viaSpread = (c) => ({ ...c, toolset: 1 });
    for (let i = 0; i < 50000; i++) { viaExtended(make()); viaSpread(make()); }
    const optimised = (f) => (%GetOptimizationStatus(f) & 16) !== 0;
    console.log(JSON.stringify({
      extended: %HaveSameMap(viaExtended(make()), viaExtended(make())), extendedOptimised: optimised(viaExtended),
      spread: %HaveSameMap(viaSpread(make()), viaSpread(make())), spreadOptimised: optimised(viaSpread),
    }));`;
  const seen = JSON.parse(execFileSync(process.execPath, ['--allow-natives-syntax', '--input-type=module', '-e', script], { encoding: 'utf8' })) as Record<string, boolean>;
  t.ok(seen.extendedOptimised && seen.spreadOptimised, 'both callers were optimised');
  t.equal(seen.extended, true, 'extended: one hidden class');
  t.equal(seen.spread, false, 'a spread followed by a new key: a hidden class per object (why extended exists)');
});
