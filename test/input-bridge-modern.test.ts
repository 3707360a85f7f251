// A 2026-07-28 upstream's input_required results through coffer: a 2025
// client is asked each inputRequest as a server→client request on its call's
// stream and coffer retries the upstream until it completes; a 2026 client
// gets the result itself, with the upstream's requestState sealed inside
// coffer's. Real pieces: the v2 fixture upstream (two rounds: elicitation,
// then sampling, each state checked), the v1 and v2 SDK clients over HTTP.
import t from 'tap';
import { CreateMessageRequestSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { mcpPost } from './helpers/mcp-post.js';
import { CAPABILITIES_KEY, MODERN, modernClient, modernFront, modernPost, PROTOCOL_VERSION_KEY } from './helpers/modern.js';
import { deepText } from './fixtures/fault-control.js';

const ASKED = { elicitation: {}, sampling: {} };

interface Logged {
  method: string;
  meta: Record<string, unknown> | null;
  params: Record<string, any> | undefined;
}

const front = modernFront(t);

const calls = async (): Promise<Logged[]> => ((await (await fetch(`${front.upstream.hello.control}/log`)).json()) as Logged[]).filter((entry) => entry.method === 'tools/call');
const firstText = (result: any): string => result.content[0].text;

t.test('a 2025 client is asked the upstream’s inputRequests on its call, and coffer retries the upstream round by round', async (t) => {
  const before = (await calls()).length;
  const client = await front.gateway.client('legacy-asked', ASKED);
  t.teardown(() => client.close());
  const asked: string[] = [];
  client.setRequestHandler(ElicitRequestSchema, async (request) => (asked.push(request.params.message), { action: 'accept', content: { name: 'Ada' } }));
  client.setRequestHandler(CreateMessageRequestSchema, async () => (asked.push('sampling'), { model: 'm', role: 'assistant', content: { type: 'text', text: 'fine' } }));
  t.equal(firstText(await client.callTool({ name: 'm__ask', arguments: {} })), 'state-ok name=Ada mood=fine');
  t.same(asked, ['Your name?', 'sampling'], 'one question per round, in order');
  const sent = (await calls()).slice(before);
  t.same(sent.map((entry) => entry.params?.requestState ?? null), [null, 'asked-name', 'asked-mood:Ada'], "the upstream's states, byte for byte");
  t.same(sent[0]!.meta?.[CAPABILITIES_KEY], ASKED, 'the upstream is told what the caller declared');
});

t.test('a 2026 client gets the upstream’s input_required with coffer’s sealed state, and its v2 SDK completes the rounds', async (t) => {
  const client = await modernClient(front.gateway, 'pin', { capabilities: ASKED });
  t.teardown(() => client.close());
  client.setRequestHandler('elicitation/create', async () => ({ action: 'accept', content: { name: 'Bea' } }));
  client.setRequestHandler('sampling/createMessage', async () => ({ role: 'assistant', content: { type: 'text', text: 'calm' }, model: 'm', stopReason: 'endTurn' }));
  t.equal(firstText(await client.callTool({ name: 'm__ask', arguments: {} })), 'state-ok name=Bea mood=calm');

  const caps = { _meta: { [CAPABILITIES_KEY]: ASKED } };
  const first = (await modernPost(front.gateway, 'tools/call', { name: 'm__ask', arguments: {}, ...caps })).messages.at(-1) as any;
  t.match(first.result, { resultType: 'input_required', inputRequests: { name: { method: 'elicitation/create' } } }, 'the requests as the upstream wrote them');
  t.not(first.result.requestState, 'asked-name', "the upstream's state is not shown as it is");
  const tampered = (await modernPost(front.gateway, 'tools/call', { name: 'm__ask', arguments: {}, ...caps, inputResponses: { name: { action: 'accept', content: { name: 'X' } } }, requestState: `${first.result.requestState}x` }, {}, 2)).messages.at(-1) as any;
  t.match(tampered.error, { code: -32602, data: { code: 'REQUEST_STATE_INVALID' } }, 'a changed state is refused');
  const second = (await modernPost(front.gateway, 'tools/call', { name: 'm__ask', arguments: {}, ...caps, inputResponses: { name: { action: 'accept', content: { name: 'Cid' } } }, requestState: first.result.requestState }, {}, 3)).messages.at(-1) as any;
  t.match(second.result, { resultType: 'input_required', inputRequests: { mood: { method: 'sampling/createMessage' } } }, 'the second round');
  t.equal((await calls()).at(-1)!.params?.requestState, 'asked-name', 'the upstream got its own state back');
});

t.test('a modern upstream’s requestState is good for one retry: of two sent at once one goes on, the other and any later one are refused', async (t) => {
  const caps = { _meta: { [CAPABILITIES_KEY]: ASKED } };
  const first = (await modernPost(front.gateway, 'tools/call', { name: 'm__ask', arguments: {}, ...caps })).messages.at(-1) as any;
  const before = (await calls()).length;
  const retry = { name: 'm__ask', arguments: {}, ...caps, inputResponses: { name: { action: 'accept', content: { name: 'Eve' } } }, requestState: first.result.requestState };
  const both = await Promise.all([2, 3].map(async (id) => (await modernPost(front.gateway, 'tools/call', retry, {}, id)).messages.at(-1) as any));
  t.same(both.map((answer) => answer.result?.resultType ?? answer.error?.data?.code).sort(), ['REQUEST_STATE_INVALID', 'input_required']);
  const later = (await modernPost(front.gateway, 'tools/call', retry, {}, 4)).messages.at(-1) as any;
  t.match(later.error, { code: -32602, message: /already used/, data: { code: 'REQUEST_STATE_INVALID' } }, 'a replay after the retry');
  t.equal((await calls()).length - before, 1, 'the upstream got its state back once');
});

t.test('inputResponses a 2026 client sends unasked, on its first request, reach the modern upstream as they came', async (t) => {
  const given = { name: { action: 'accept', content: { name: 'Dee' } }, unknown_extra_key: { action: 'accept', content: { foo: 'bar' } } };
  const answer = (await modernPost(front.gateway, 'tools/call', { name: 'm__ask', arguments: {}, _meta: { [CAPABILITIES_KEY]: ASKED }, inputResponses: given })).messages.at(-1) as any;
  t.match(answer.result, { resultType: 'input_required' }, 'the upstream answered (this one always asks first)');
  const sent = (await calls()).at(-1)!;
  t.same(sent.params?.inputResponses, given, 'with the answers, unknown keys included: the upstream decides what it recognises');
  t.notOk('requestState' in (sent.params ?? {}), 'and no requestState, as none was given');
});

t.test('a modern upstream’s requestState is good only for the tool it was given for, also through search mode’s call tool', async (t) => {
  t.equal((await front.gateway.api('POST', '/toolsets', { name: 'finder', mode: 'search', servers: [{ server: 'm' }] })).status, 201);
  const caps = { _meta: { [CAPABILITIES_KEY]: ASKED } };
  const viaSearch = (tool: string, id: number, extra: Record<string, unknown> = {}) =>
    modernPost(front.gateway, 'tools/call', { name: 'coffer__call_tool', arguments: { name: tool, arguments: { text: 'hi' } }, ...caps, ...extra }, {}, id, undefined, '/mcp/finder');
  const first = (await viaSearch('m__ask', 1)).messages.at(-1) as any;
  t.match(first.result, { resultType: 'input_required' });
  const before = (await calls()).length;
  const other = (await viaSearch('m__echo', 2, { inputResponses: { name: { action: 'accept', content: { name: 'Fay' } } }, requestState: first.result.requestState })).messages.at(-1) as any;
  t.match(other.error, { code: -32602, data: { code: 'REQUEST_STATE_INVALID' } }, 'refused for another tool');
  t.equal((await calls()).length - before, 0, 'and the other tool never got the state');
  const again = (await viaSearch('m__ask', 3)).messages.at(-1) as any;
  const own = (await viaSearch('m__ask', 4, { inputResponses: { name: { action: 'accept', content: { name: 'Fay' } } }, requestState: again.result.requestState })).messages.at(-1) as any;
  t.match(own.result, { resultType: 'input_required', inputRequests: { mood: {} } }, 'its own tool goes on');
});

t.test("clientCapabilities nested too deep for coffer to hand to a modern upstream (it is told them) are the caller's to flatten: -32602 BAD_REQUEST, not an upstream failure", async (t) => {
  const deep = deepText(20_000);
  const meta = `{${JSON.stringify(PROTOCOL_VERSION_KEY)}:"${MODERN}",${JSON.stringify(CAPABILITIES_KEY)}:{"experimental":{"x":${deep}}}}`;
  const body = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"m__echo","arguments":{"text":"hi"},"_meta":${meta}}}`;
  const answer = await mcpPost(front.gateway, body, { 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call', 'mcp-name': 'm__echo' });
  t.match(answer.messages.at(-1), { id: 1, error: { code: -32602, message: /nests deeper than 128 levels \(its params or its clientCapabilities\)/, data: { code: 'BAD_REQUEST' } } });
  t.notOk(answer.text.includes('call stack'), 'no internal error text');
});
