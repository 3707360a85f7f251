// Park, on the class itself: the questions a 2025 upstream asks during one
// modern call, under which keys the caller sees them, and which answers
// settle them.
import { setTimeout as sleep } from 'node:timers/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import t from 'tap';
import { Cancel } from '../src/protocol/cancel.js';
import { INPUT_KEY_META_KEY, MAX_OPEN_QUESTIONS, Park } from '../src/mcp/modern/park.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const CAPS = { elicitation: {} };
const live = { aborted: false };
const named = (key: string, message: string) => ({ message, _meta: { [INPUT_KEY_META_KEY]: key } });

t.test("a key is never reused within a call: a question under a key answered before is asked, not answered with the old answer", async (t) => {
  const park = new Park({ capabilities: CAPS, responses: {} }, 0);
  const first = park.ask('elicitation/create', named('confirm', 'Pay $5?'), new Cancel());
  const round1 = await park.next(live);
  t.same(round1?.kind === 'input' && Object.keys(round1.requests), ['confirm']);
  park.drive({ capabilities: CAPS, responses: { confirm: { action: 'accept' } } });
  t.same(await first, { ok: true, result: { action: 'accept' } });
  const second = park.ask('elicitation/create', named('confirm', 'Pay $5000?'), new Cancel());
  const round2 = await Promise.race([park.next(live), second.then(() => 'answered with the old answer')]);
  t.ok(typeof round2 === 'object' && round2?.kind === 'input', 'the second question is asked');
  const requests = round2 !== null && typeof round2 === 'object' && round2.kind === 'input' ? round2.requests : {};
  t.same(Object.values(requests).map((request) => request.params.message), ['Pay $5000?']);
  t.notOk('confirm' in requests, 'under a key of its own');
});

t.test("coffer's own key never takes the key of a question still open", async (t) => {
  const park = new Park({ capabilities: CAPS, responses: {} }, 0);
  const hinted = park.ask('elicitation/create', named('elicitation-1', 'Named?'), new Cancel());
  const plain = park.ask('elicitation/create', { message: 'Plain?' }, new Cancel());
  const step = await park.next(live);
  const requests = step?.kind === 'input' ? step.requests : {};
  t.same(Object.values(requests).map((request) => request.params.message).sort(), ['Named?', 'Plain?'], 'both are asked');
  park.drive({ capabilities: CAPS, responses: Object.fromEntries(Object.entries(requests).map(([key, request]) => [key, { action: 'accept', content: { said: request.params.message } }])) });
  t.same(await Promise.all([hinted, plain]), [
    { ok: true, result: { action: 'accept', content: { said: 'Named?' } } },
    { ok: true, result: { action: 'accept', content: { said: 'Plain?' } } },
  ], 'each answer reaches its own question');
});

t.test('the questions open in one call are bounded: past the bound the upstream is refused, and what is asked stays within it', async (t) => {
  const park = new Park({ capabilities: CAPS, responses: {} }, 0);
  const asked = Array.from({ length: MAX_OPEN_QUESTIONS + 5 }, (_, i) => park.ask('elicitation/create', { message: `Q${i}?` }, new Cancel()));
  const refused = await Promise.all(asked.slice(MAX_OPEN_QUESTIONS));
  t.match(refused, Array(5).fill({ ok: false, error: { code: -32603, message: new RegExp(`${MAX_OPEN_QUESTIONS} questions`) } }), 'the extra ones, at once');
  const step = await park.next(live);
  t.equal(step?.kind === 'input' && Object.keys(step.requests).length, MAX_OPEN_QUESTIONS);
});

t.test("an answer is not kept once handed to its question: a retry's, one given before its question came, and one for a key already answered", async (t) => {
  // Large answers, as a client may send (a request body is up to 64 MB), made here and held only through WeakRefs: only the park could keep them.
  const answer = () => ({ action: 'accept', content: { blob: 'x'.repeat(1 << 20) } });
  const refs: Array<WeakRef<object>> = [];
  const given = (responses: Record<string, Record<string, unknown>>) => {
    refs.push(...Object.values(responses).map((response) => new WeakRef(response)));
    return { capabilities: CAPS, responses };
  };
  const park = new Park(given({ early: answer() }), 0);
  t.equal(await park.ask('elicitation/create', named('early', 'Given already?'), new Cancel()).then((outcome) => outcome.ok), true, 'an answer given before its question settles it when it comes');
  const asked = park.ask('elicitation/create', named('now', 'Upload?'), new Cancel()).then((outcome) => outcome.ok);
  t.equal((await park.next(live))?.kind, 'input');
  park.drive(given({ now: answer(), early: answer() }));
  t.equal(await asked, true, 'the retry answers the open question');
  // A WeakRef's target lives at least until the job that made it ends.
  await sleep(0);
  gc();
  t.same(refs.map((ref) => ref.deref() === undefined), [true, true, true], 'the park holds none of them');
  t.notOk(park.isEnded, 'while the call goes on');
});
