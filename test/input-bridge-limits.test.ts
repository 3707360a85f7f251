// InputBridge's bounds, on the class itself with small limits: the states of
// a modern upstream it remembers until their retry. The calls are stand-ins
// for the router: one that answers input_required as a 2026 upstream would.
import t from 'tap';
import { InputBridge, type BridgedRequest } from '../src/mcp/modern/input-bridge.js';

let next = 0;
const hooks = { callerId: () => `modern:${++next}`, route: () => {}, ended: () => {}, stamp: (result: Record<string, unknown>) => result };
const listener = { notify: () => {} };
const life = { aborted: false, onAbort: () => {} };

/** A 2026 upstream's call: input_required on a first request, done on a retry. */
const asksOnce: BridgedRequest['run'] = async (ctx) =>
  ctx.retry ? { content: [{ type: 'text', text: `done ${ctx.retry.requestState}` }] } : ctx.onInputRequired!('m', { resultType: 'input_required', inputRequests: { q: { method: 'elicitation/create', params: {} } }, requestState: 'up' });

function serve(bridge: InputBridge, run: BridgedRequest['run'], extra: Record<string, unknown> = {}) {
  return bridge.serve({ method: 'tools/call', params: { name: 'm__pay', ...extra }, requestId: 1, capabilities: { elicitation: {} }, caller: 'caller', listener, life, run });
}

const outcome = (answer: Promise<Record<string, unknown>>) => answer.then((result) => (result.resultType === 'input_required' ? 'input_required' : 'done'), (error) => error.data?.code as string);

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
