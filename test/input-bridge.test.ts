// The bridge from a 2025 upstream to a 2026-07-28 caller: the upstream's
// sampling, elicitation and roots requests during a call reach the modern
// caller as input_required results, and its retries answer them, with the
// upstream call kept in flight in between. Real pieces: the conformance
// fixture over Streamable HTTP behind coffer, the SDK v2 client (which
// fulfils input_required through its request handlers), raw modern POSTs for
// the requestState refusals.
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { CONFORMANCE_FIXTURE, networkConfig, startNetworkFixture, type RunningFixture } from './fixtures/fixture-servers.js';
import { startGateway, type Gateway } from './helpers/gateway.js';
import { mcpPost } from './helpers/mcp-post.js';
import { CAPABILITIES_KEY, envelope, MODERN, modernClient, modernPost } from './helpers/modern.js';
import { deepText } from './fixtures/fault-control.js';

const NS = 'c';
/** Shorter than the waits below: a parked call outlives its server's request_ms. */
const REQUEST_MS = 1500;
const ALL = { elicitation: {}, sampling: {}, roots: {} };
let gateway: Gateway;
let fixture: RunningFixture;

t.before(async () => {
  fixture = await startNetworkFixture('http', [], CONFORMANCE_FIXTURE);
  gateway = await startGateway();
  await gateway.addServer({ ...networkConfig(NS, 'http', fixture.url, { request_ms: REQUEST_MS }), namespace: NS });
});
t.teardown(async () => {
  await gateway.close();
  fixture.kill();
});

const textOf = (result: object) => (((result as { content?: unknown }).content as Array<{ text?: string }> | undefined) ?? []).map((part) => part.text).join('');
const withCaps = (capabilities: Record<string, unknown>) => ({ _meta: { [CAPABILITIES_KEY]: capabilities } });
const resultOf = (answer: { messages: unknown[] }) => (answer.messages.at(-1) as { result?: Record<string, unknown> }).result;
const errorOf = (answer: { messages: unknown[] }) => (answer.messages.at(-1) as { error?: { code: number; message: string; data?: Record<string, unknown> } }).error;

function call(name: string, extra: Record<string, unknown> = {}, id = 1) {
  return modernPost(gateway, 'tools/call', { name: `${NS}__${name}`, arguments: {}, ...withCaps(ALL), ...extra }, {}, id, 30_000);
}

t.test('a v2 client answers three concurrent questions of a 2025 upstream in one round, and two rounds in a row, through its own handlers', async (t) => {
  const client = await modernClient(gateway, 'pin', { capabilities: ALL });
  t.teardown(() => client.close());
  const asked: string[] = [];
  client.setRequestHandler('elicitation/create', async (request) => {
    asked.push(String(request.params.message));
    return { action: 'accept', content: { name: 'Alice', color: 'teal', context: 'ctx' } };
  });
  client.setRequestHandler('sampling/createMessage', async () => (asked.push('sampling'), { role: 'assistant', content: { type: 'text', text: 'Hi!' }, model: 'm', stopReason: 'endTurn' }));
  client.setRequestHandler('roots/list', async () => (asked.push('roots'), { roots: [{ uri: 'file:///r', name: 'r' }] }));
  t.equal(textOf(await client.callTool({ name: `${NS}__test_input_required_result_multiple_inputs`, arguments: {} })), 'name=Alice llm=Hi! roots=1');
  t.same(asked.sort(), ['What is your name?', 'roots', 'sampling']);
  t.equal(textOf(await client.callTool({ name: `${NS}__test_input_required_result_multi_round`, arguments: {} })), 'Alice likes teal', 'two rounds');
  const prompt = await client.getPrompt({ name: `${NS}__test_input_required_result_prompt` });
  t.match(prompt.messages[0], { content: { text: 'Context: ctx' } }, 'prompts/get is bridged too');
});

t.test('one input_required holds every question asked together; the retry with the answers completes the call', async (t) => {
  const first = resultOf(await call('test_input_required_result_multiple_inputs'));
  t.equal(first?.resultType, 'input_required');
  const requests = first!.inputRequests as Record<string, { method: string; params: Record<string, unknown> }>;
  t.same(Object.keys(requests).sort(), ['client_roots', 'greeting', 'user_name'], "the upstream's keys");
  t.notOk(JSON.stringify(requests).includes('coffer/inputKey'), 'the key hint is not passed on');
  t.match(first, { _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'coffer' } } });
  const inputResponses = {
    user_name: { action: 'accept', content: { name: 'Bo' } },
    greeting: { role: 'assistant', content: { type: 'text', text: 'Yo' }, model: 'm' },
    client_roots: { roots: [] },
  };
  const done = resultOf(await call('test_input_required_result_multiple_inputs', { inputResponses, requestState: first!.requestState }, 2));
  t.match(done, { resultType: 'complete', content: [{ text: 'name=Bo llm=Yo roots=0' }] });
});

t.test("an upstream's question keys are plain names, not the object's own members", async (t) => {
  for (const [id, key] of ['toString', 'constructor', 'hasOwnProperty', '__proto__'].entries()) {
    const first = resultOf(await call('test_keyed_question', { arguments: { key } }, 10 + 2 * id));
    t.equal(first?.resultType, 'input_required', `${key}: asked, not taken as answered`);
    t.same(Object.keys(first!.inputRequests as object), [key], `${key}: the upstream's key`);
    const inputResponses = JSON.parse(`{${JSON.stringify(key)}: {"action": "accept", "content": {"name": "Bo"}}}`);
    const done = resultOf(await call('test_keyed_question', { arguments: { key }, inputResponses, requestState: first!.requestState }, 11 + 2 * id));
    t.match(done, { resultType: 'complete', content: [{ text: 'accept:{"name":"Bo"}' }] }, `${key}: the answer reaches the upstream`);
  }
});

t.test('a retry that leaves a question unanswered is asked it again; unknown keys are ignored', async (t) => {
  const first = resultOf(await call('test_input_required_result_multiple_inputs'));
  const partial = { user_name: { action: 'accept', content: { name: 'Cy' } }, nonsense: { x: 1 } };
  const again = resultOf(await call('test_input_required_result_multiple_inputs', { inputResponses: partial, requestState: first!.requestState }, 2));
  t.equal(again?.resultType, 'input_required');
  t.same(Object.keys(again!.inputRequests as object).sort(), ['client_roots', 'greeting'], 'only what is still open');
  t.not(again!.requestState, first!.requestState, 'a new state for the new round');
  const rest = { greeting: { role: 'assistant', content: { type: 'text', text: 'Hey' }, model: 'm' }, client_roots: { roots: [{ uri: 'file:///a' }] } };
  t.match(resultOf(await call('test_input_required_result_multiple_inputs', { inputResponses: rest, requestState: again!.requestState }, 3)), { content: [{ text: 'name=Cy llm=Hey roots=1' }] });
});

t.test('the parked upstream call outlives its request_ms: the retry comes later and still completes', async (t) => {
  const first = resultOf(await call('test_input_required_result_elicitation'));
  // The point of the test is the delay: the call waits longer than the server's request_ms allows a call.
  await sleep(REQUEST_MS * 2);
  const done = resultOf(await call('test_input_required_result_elicitation', { inputResponses: { user_name: { action: 'accept', content: { name: 'Late' } } }, requestState: first!.requestState }, 2));
  t.match(done, { resultType: 'complete', content: [{ text: 'Hello, Late!' }] });
});

t.test('requestState refusals: changed, replayed, for another tool, malformed inputResponses', async (t) => {
  const answer = { user_name: { action: 'accept', content: { name: 'Di' } } };
  const first = resultOf(await call('test_input_required_result_elicitation'));
  const state = first!.requestState as string;
  t.match(errorOf(await call('test_input_required_result_elicitation', { inputResponses: answer, requestState: `${state}-TAMPERED` }, 2)), { code: -32602, data: { code: 'REQUEST_STATE_INVALID' } }, 'changed');
  t.match(errorOf(await call('test_input_required_result_tampered_state', { inputResponses: answer, requestState: state }, 3)), { code: -32602, message: /another request/, data: { code: 'REQUEST_STATE_INVALID' } }, 'another tool');
  t.match(errorOf(await call('test_input_required_result_elicitation', { inputResponses: { user_name: 7 }, requestState: state }, 4)), { code: -32602, message: /inputResponses\.user_name/ }, 'not an object');
  t.match(resultOf(await call('test_input_required_result_elicitation', { inputResponses: answer, requestState: state }, 5)), { content: [{ text: 'Hello, Di!' }] }, 'the state still works after refusals');
  t.match(errorOf(await call('test_input_required_result_elicitation', { inputResponses: answer, requestState: state }, 6)), { code: -32602, data: { code: 'REQUEST_STATE_EXPIRED' } }, 'replayed after the call ended');
});

t.test("a question the request did not declare is refused to the upstream: the call goes on with what it may ask, or fails -32021", async (t) => {
  const only = resultOf(await call('test_input_required_result_capabilities', withCaps({ sampling: {} })));
  t.same(Object.values(only!.inputRequests as Record<string, { method: string }>).map((request) => request.method), ['sampling/createMessage'], 'no elicitation');
  const failed = await call('test_missing_capability', withCaps({ elicitation: {} }));
  t.equal(failed.status, 400);
  t.match(errorOf(failed), { code: -32021, data: { requiredCapabilities: { sampling: {} } } });
});

t.test("an answer nested too deep for coffer to hand to the upstream's thread is refused to the upstream in its place: the call ends, the daemon stays up", async (t) => {
  const tool = `${NS}__test_input_required_result_elicitation`;
  const first = resultOf(await call('test_input_required_result_elicitation'));
  const content = deepText(20_000);
  const params = `"name":"${tool}","arguments":{},"requestState":${JSON.stringify(first!.requestState)},"inputResponses":{"user_name":{"action":"accept","content":${content}}}`;
  const body = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{${params},"_meta":${JSON.stringify(envelope({}, ALL))}}}`;
  const retried = await mcpPost(gateway, body, { 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call', 'mcp-name': tool }, 10_000);
  t.match(retried.messages.at(-1), { id: 2 }, 'the retry is answered');
  t.notOk(retried.text.includes('call stack'), 'with no internal error text');
  t.match(resultOf(await call('test_input_required_result_elicitation', { inputResponses: { user_name: { action: 'accept', content: { name: 'Flat' } } }, requestState: resultOf(await call('test_input_required_result_elicitation', {}, 3))!.requestState }, 4)), { content: [{ text: 'Hello, Flat!' }] }, 'and the daemon goes on serving');
});
