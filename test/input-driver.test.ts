// What of a 2026-07-28 upstream's input_required reaches a caller: only the
// requests MCP lets a server make of its client (sampling, elicitation,
// roots), whether coffer asks them of a 2025 caller round by round or hands
// the result to a 2026 caller.
import t from 'tap';
import { Cancel } from '../src/protocol/cancel.js';
import type { ForwardOutcome } from '../src/protocol/actor.js';
import { driveInputRequired } from '../src/router/input-driver.js';
import { InputBridge } from '../src/mcp/modern/input-bridge.js';

const ALL = { elicitation: {}, sampling: {}, roots: {} };
const strange = { resultType: 'input_required', inputRequests: { run: { method: 'tools/call', params: { name: 'rm', arguments: {} } } }, requestState: 's' };

t.test('a 2025 caller is never asked a request other than sampling, elicitation or roots: the call fails UPSTREAM_RESPONSE_INVALID', async (t) => {
  const asked: string[] = [];
  const ask = async (method: string): Promise<ForwardOutcome> => (asked.push(method), { ok: true, result: {} });
  const retried: unknown[] = [];
  const failed = await driveInputRequired(strange, ask, async (responses) => (retried.push(responses), { content: [] }), new Cancel()).catch((error) => error);
  t.match(failed, { code: -32011, message: /tools\/call/, data: { code: 'UPSTREAM_RESPONSE_INVALID' } });
  t.same(asked, [], 'the client was not asked');
  t.same(retried, [], 'nor the upstream retried');
});

function bridged(capabilities: Record<string, unknown>, result: Record<string, unknown>) {
  let next = 0;
  const bridge = new InputBridge({ callerId: () => `modern:${++next}`, route: () => {}, ended: () => {}, stamp: (stamped) => stamped });
  return bridge.serve({
    method: 'tools/call',
    params: { name: 'm__x' },
    requestId: 1,
    capabilities,
    caller: 'caller',
    credential: 'client:a',
    listener: { notify: () => {} },
    life: { aborted: false, onAbort: () => {} },
    run: async (ctx) => ctx.onInputRequired!('m', 'x', structuredClone(result)),
  });
}

t.test('a 2026 caller is not handed such a request either', async (t) => {
  t.match(await bridged(ALL, strange).catch((error) => error), { code: -32011, message: /tools\/call/, data: { code: 'UPSTREAM_RESPONSE_INVALID' } });
});

t.test('a 2026 caller is never handed a question whose capability it did not declare: the call fails -32021 naming it', async (t) => {
  const asks = { resultType: 'input_required', inputRequests: { name: { method: 'elicitation/create', params: {} }, mood: { method: 'sampling/createMessage', params: {} } }, requestState: 's' };
  const failed = await bridged({ elicitation: {} }, asks).catch((error) => error);
  t.match(failed, { code: -32021, message: /sampling/, data: { code: 'MISSING_CLIENT_CAPABILITY', requiredCapabilities: { sampling: {} } } });
  t.match(await bridged(ALL, asks), { resultType: 'input_required', inputRequests: asks.inputRequests }, 'declared, it is handed as it came');
});
