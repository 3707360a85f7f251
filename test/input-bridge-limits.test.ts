// InputBridge's bounds, on the class itself with small limits: the calls it
// keeps open, the questions of a call over, and the states of a modern
// upstream it remembers until their retry. The calls are stand-ins for the router: one that runs until
// cancelled, one whose 2025 upstream asks its client, one that answers
// input_required as a 2026 upstream would.
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import type { ForwardOutcome } from '../src/protocol/actor.js';
import type { CancelSignal } from '../src/protocol/cancel.js';
import { InputBridge, PARK_TTL_MS, type BridgedRequest } from '../src/mcp/modern/input-bridge.js';
import { RequestStateSeal } from '../src/mcp/modern/request-state.js';

let next = 0;
const hooks = { callerId: () => `modern:${++next}`, route: () => {}, ended: () => {}, stamp: (result: Record<string, unknown>) => result };
const listener = { notify: () => {} };
const life = { aborted: false, onAbort: () => {} };

/** A 2026 upstream's call: input_required on a first request, done on a retry. */
const asksOnce: BridgedRequest['run'] = async (ctx) =>
  ctx.retry ? { content: [{ type: 'text', text: `done ${ctx.retry.requestState}` }] } : ctx.onInputRequired!('m', 'pay', { resultType: 'input_required', inputRequests: { q: { method: 'elicitation/create', params: {} } }, requestState: 'up' });

const untilCancelled = (signal: CancelSignal) => new Promise<never>((_resolve, reject) => signal.addEventListener('abort', () => reject(new Error(String(signal.reason)))));

/** Runs until cancelled; each call's signal is kept, to see whom the bridge cancelled. */
function running(signals: CancelSignal[]): BridgedRequest['run'] {
  return (ctx) => (signals.push(ctx.signal), untilCancelled(ctx.signal));
}

/** A 2025 upstream's call that asks its client, then runs until cancelled. */
function asking(signals: CancelSignal[]): BridgedRequest['run'] {
  return async (ctx) => {
    signals.push(ctx.signal);
    await ctx.ask!('elicitation/create', { message: 'Sure?' }, ctx.signal);
    return untilCancelled(ctx.signal);
  };
}

function serve(bridge: InputBridge, run: BridgedRequest['run'], extra: Record<string, unknown> = {}, request: Partial<BridgedRequest> = {}) {
  return bridge.serve({ method: 'tools/call', params: { name: 'm__pay', ...extra }, requestId: 1, capabilities: { elicitation: {} }, caller: 'caller', credential: 'client:a', listener, life, run, ...request });
}

const outcome = (answer: Promise<Record<string, unknown>>) => answer.then((result) => (result.resultType === 'input_required' ? 'input_required' : 'done'), (error) => error.data?.code as string);
/** The outcome, or 'running' if it does not come at once. */
const soon = (answer: Promise<Record<string, unknown>>) => Promise.race([outcome(answer), sleep(100).then(() => 'running')]);

t.test('with every call running, a new call is refused UPSTREAM_BUSY and none is cancelled', async (t) => {
  const bridge = new InputBridge(hooks, undefined, { parks: 2, wrapStates: 8 });
  const signals: CancelSignal[] = [];
  const first = [serve(bridge, running(signals)), serve(bridge, running(signals))];
  const refused = await serve(bridge, running(signals)).catch((error) => error);
  t.match(refused, { code: -32012, message: /2 calls .* running.*retry/, data: { code: 'UPSTREAM_BUSY' } });
  t.same(signals.map((signal) => signal.aborted), [false, false], 'the running calls go on');
  t.same(await Promise.all(first.map(soon)), ['running', 'running']);
});

t.test("past the bound a call waiting for its client's retry is given up, the longest waiting first, never a running one", async (t) => {
  const bridge = new InputBridge(hooks, undefined, { parks: 3, wrapStates: 8 });
  const waited: CancelSignal[] = [];
  const ran: CancelSignal[] = [];
  const asked = [await serve(bridge, asking(waited)), await serve(bridge, asking(waited))];
  t.same(asked.map((result) => result.resultType), ['input_required', 'input_required']);
  const live = [serve(bridge, running(ran))];
  live.push(serve(bridge, running(ran)));
  t.same(waited.map((signal) => signal.aborted), [true, false], 'the one that waited longest made room');
  live.push(serve(bridge, running(ran)));
  t.same(waited.map((signal) => signal.aborted), [true, true], 'then the other');
  t.equal(await outcome(serve(bridge, running(ran))), 'UPSTREAM_BUSY', 'with none waiting, a new call is refused');
  t.same(ran.map((signal) => signal.aborted), [false, false, false], 'and no running call was cancelled');
  t.same(await Promise.all(live.map(soon)), ['running', 'running', 'running']);
  const retry = { inputResponses: { 'elicitation-1': { action: 'accept', content: {} } }, requestState: asked[0]!.requestState };
  t.equal(await outcome(serve(bridge, running(ran), retry)), 'REQUEST_STATE_EXPIRED', "a given-up call's retry finds it over");
});

t.test("past its bound of a modern upstream's waiting states the oldest is forgotten: its retry is refused, never let through", async (t) => {
  const bridge = new InputBridge(hooks, undefined, { parks: 8, wrapStates: 2 });
  const states: unknown[] = [];
  for (let i = 0; i < 3; i++) states.push((await serve(bridge, asksOnce)).requestState);
  const retry = (state: unknown) => outcome(serve(bridge, asksOnce, { inputResponses: { q: { action: 'accept', content: {} } }, requestState: state }));
  t.equal(await retry(states[0]), 'REQUEST_STATE_INVALID', 'the oldest, forgotten');
  t.equal(await retry(states[1]), 'done');
  t.equal(await retry(states[2]), 'done');
  t.equal(await retry(states[2]), 'REQUEST_STATE_INVALID', 'and each once');
});

t.test('a requestState opens only unchanged, for the method it was given for, and until its expiry: the millisecond it expires it is refused', async (t) => {
  let now = 1_000;
  const bridge = new InputBridge(hooks, new RequestStateSeal(undefined, () => now), { parks: 8, wrapStates: 8 });
  const [first, second] = [(await serve(bridge, asksOnce)).requestState as string, (await serve(bridge, asksOnce)).requestState as string];
  const answer = { inputResponses: { q: { action: 'accept', content: {} } } };
  const retry = (requestState: string, request: Partial<BridgedRequest> = {}) => outcome(serve(bridge, asksOnce, { ...answer, requestState }, request));
  t.equal(await retry(`${first}.x`), 'REQUEST_STATE_INVALID', 'a part added after the seal');
  t.equal(await retry(first, { method: 'prompts/get' }), 'REQUEST_STATE_INVALID', 'another method, same name');
  now = 1_000 + PARK_TTL_MS - 1;
  t.equal(await retry(first), 'done', 'a millisecond before its expiry');
  now = 1_000 + PARK_TTL_MS;
  t.equal(await retry(second), 'REQUEST_STATE_EXPIRED', 'at its expiry');
});

t.test("a modern upstream's states are forgotten once expired, whatever the bound: they hold no memory past their life", async (t) => {
  const realNow = Date.now;
  let shift = 0;
  Date.now = () => realNow() + shift;
  t.teardown(() => void (Date.now = realNow));
  const bridge = new InputBridge(hooks, undefined, { parks: 8, wrapStates: 8 });
  const remembered = () => (bridge as unknown as { wrapStates: Map<string, number> }).wrapStates.size;
  const states: unknown[] = [];
  for (let i = 0; i < 3; i++) states.push((await serve(bridge, asksOnce)).requestState);
  t.equal(remembered(), 3);
  shift = PARK_TTL_MS + 1;
  const fresh = (await serve(bridge, asksOnce)).requestState;
  t.equal(remembered(), 1, 'the three expired ones went when the next was remembered');
  t.equal(await outcome(serve(bridge, asksOnce, { inputResponses: { q: { action: 'accept', content: {} } }, requestState: states[0] })), 'REQUEST_STATE_EXPIRED', 'an expired one is refused as such');
  t.equal(await outcome(serve(bridge, asksOnce, { inputResponses: { q: { action: 'accept', content: {} } }, requestState: fresh })), 'done');
});

t.test("a question still open when its call ends is refused to the upstream at once: no retry can answer it, so none is waited for", async (t) => {
  const bridge = new InputBridge(hooks, undefined, { parks: 8, wrapStates: 8 });
  let question: Promise<ForwardOutcome> | undefined;
  // A 2025 upstream that asks something, does not wait for the answer (it decides without it) and ends the call.
  const asksInPassing: BridgedRequest['run'] = async (ctx) => {
    question = ctx.ask!('elicitation/create', { message: 'Anything to add?' }, ctx.signal);
    await sleep(10);
    return { content: [{ type: 'text', text: 'done' }] };
  };
  t.equal(await outcome(serve(bridge, asksInPassing)), 'done', 'the call ends within the gather window: its result, no input_required');
  const leftover = await Promise.race([question!, sleep(1_000).then(() => 'still waiting for an answer')]);
  t.match(leftover, { ok: false, error: { code: -32603, message: /call .*ended/ } }, 'the question nobody can answer now is refused');
});
