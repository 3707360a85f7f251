// The pieces of the upstream limits on their own: the nesting scanners (no
// stack used, escapes and brackets in strings), what a message too deep to
// parse becomes, the in-flight ledger, and a POST's answer that holds
// serialised text, so its keep-alive timer can never throw.
import { PassThrough } from 'node:stream';
import t from 'tap';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { HttpReply } from '../src/http/reply.js';
import { PostExchange, serialise } from '../src/mcp/post-exchange.js';
import { approximateChars, InFlightLedger } from '../src/upstreams/in-flight.js';
import { readSse } from '../workers/actor/http-bodies.js';
import { parseInbound, TooDeepError } from '../workers/actor/inbound.js';
import { AnswerBudget, MAX_PARSE_DEPTH } from '../workers/actor/limits.js';
import { nestsDeeperThan, textDepth, topLevel } from '../src/protocol/nesting.js';
import { deepText } from './fixtures/fault-control.js';

/** A value `depth` levels deep, built without recursion. */
function deepValue(depth: number): Record<string, unknown> {
  let value: Record<string, unknown> = {};
  for (let level = 1; level < depth; level += 1) value = { d: value };
  return value;
}

t.test('textDepth: brackets in strings and escaped quotes do not count; stops past the limit', async (t) => {
  t.equal(textDepth('1', 10), 0);
  t.equal(textDepth('{"a":[1,{"b":"[[[{{{"}]}', 10), 3);
  t.equal(textDepth('["\\"[[[", "\\\\", [[]]]', 10), 3, 'an escaped quote does not end the string; an escaped backslash does not escape the quote');
  t.equal(textDepth(deepText(1_000_000), 100), 101, 'gives up just past the limit');
  t.equal(textDepth(deepText(1_000_000), Infinity), 1_000_000, '1M levels measured without the stack');
});

t.test('nestsDeeperThan: a million levels, the recursion stops at the limit', async (t) => {
  t.equal(nestsDeeperThan('x', 0), false);
  t.equal(nestsDeeperThan({}, 0), true);
  t.equal(nestsDeeperThan(deepValue(128), 128), false);
  t.equal(nestsDeeperThan(deepValue(129), 128), true);
  t.equal(nestsDeeperThan(deepValue(1_000_000), 128), true);
});

t.test('a message too deep to parse: a response becomes an error for its id; anything else is refused', async (t) => {
  const deep = deepText(MAX_PARSE_DEPTH + 1);
  t.same(topLevel(`{"result":${deep},"jsonrpc":"2.0","id":"a\\"b"}`), { id: 'a"b', hasMethod: false });
  t.same(topLevel(`{"jsonrpc":"2.0","id":7,"result":{"id":8,"method":"x","content":${deep}}}`), { id: 7, hasMethod: false }, "a nested object's id and method are not the message's");
  t.same(topLevel(`{"jsonrpc":"2.0","id":7,"methods":[],"result":${deep}}`), { id: 7, hasMethod: false }, 'only a key named method is one');
  t.match(parseInbound(`{"jsonrpc":"2.0","id":7,"result":${deep}}`), { id: 7, error: { code: -32011, data: { code: 'UPSTREAM_RESPONSE_INVALID' } } });
  t.match(parseInbound(`{"jsonrpc":"2.0","id":7,"result":{"method":"x","content":${deep}}}`), { id: 7, error: { code: -32011 } }, 'a response whose result has a method key is still answered as a response');
  t.throws(() => parseInbound(`{"jsonrpc":"2.0","method":"notifications/message","params":${deep}}`), TooDeepError);
  t.throws(() => parseInbound(`{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":${deep}}`), TooDeepError, 'a request: no answer is made up for it');
  t.same(parseInbound('{"id":1,"result":{}}'), { id: 1, result: {} }, 'anything else is parsed as usual');
  t.throws(() => parseInbound('{nope'), SyntaxError);
});

t.test('in-flight ledger: per upstream and in total; a refusal says which cap', async (t) => {
  const ledger = new InFlightLedger(100, 150);
  t.equal(ledger.take('a', 60), null);
  t.match(ledger.take('a', 60), /in flight to a \(at most/);
  t.equal(ledger.take('b', 80), null);
  t.match(ledger.take('c', 20), /in flight to the upstreams/);
  ledger.give('a', 60);
  t.equal(ledger.take('c', 20), null);
  t.equal(ledger.inFlight(), 100);
  t.equal(ledger.inFlight('a'), 0);
  t.ok(approximateChars({ text: 'x'.repeat(1000) }, Infinity) >= 1004, 'strings and keys counted');
  t.ok(approximateChars(Array.from({ length: 100_000 }, () => 'y'.repeat(100)), 5_000) < 6_000, 'stops once past the limit');
});

t.test('a POST answer too deep to serialise is an error with its id; the keep-alive never serialises', async (t) => {
  const deep = { jsonrpc: '2.0', id: 3, result: deepValue(100_000) } as unknown as JSONRPCMessage;
  t.match(JSON.parse(serialise(deep)!), { id: 3, error: { code: -32603, data: { code: 'INTERNAL' } } });
  t.equal(serialise({ jsonrpc: '2.0', method: 'notifications/message', params: deepValue(100_000) } as JSONRPCMessage), null, 'a notification that deep is dropped');
  const written: string[] = [];
  const reply: HttpReply = {
    aborted: false,
    onAbort: () => undefined,
    send: (_status, _headers, body) => void written.push(body),
    startStream: (_status, _headers, chunk) => void written.push(chunk),
    write: (chunk) => void written.push(chunk),
    fetch: async () => undefined,
  };
  let finished = false;
  const exchange = new PostExchange([1, 3], reply, undefined, 20, () => (finished = true));
  exchange.deliver(deep);
  await new Promise((resolve) => setTimeout(resolve, 60));
  t.match(written[0], /^event: message\ndata: \{"jsonrpc":"2.0","id":3,"error"/, 'the held answer went out with the keep-alive, as text');
  exchange.deliver({ jsonrpc: '2.0', id: 1, result: {} });
  t.ok(finished);
});

/** An SSE body as readSse sees a response: no Content-Encoding, `complete` once it has ended whole. */
function sseBody(): PassThrough & { complete: boolean; headers: Record<string, string> } {
  return Object.assign(new PassThrough(), { complete: false, headers: {} });
}

t.test("SSE answers: a stream cut off at the budget gives its share back at once, so a stream refused in the same turn doesn't starve the rest", async (t) => {
  const budget = new AnswerBudget(100);
  const a = sseBody();
  const b = sseBody();
  const readA = readSse(a as never, () => {}, () => {}, { budget });
  const readB = readSse(b as never, () => {}, () => {}, { budget });
  // Both are in the middle of an event: A holds 60, B 30; B's next 20 would pass 100, so B is cut off.
  a.emit('data', `data: ${'a'.repeat(54)}`);
  b.emit('data', `data: ${'b'.repeat(24)}`);
  b.emit('data', 'b'.repeat(20));
  await t.rejects(readB, { message: /answers in flight/ }, 'B is cut off');
  // In the same turn A's next 35 fit only if B's 30 came back already.
  a.emit('data', 'a'.repeat(35));
  a.emit('data', '\n\n');
  a.complete = true;
  a.end();
  await t.resolves(readA, 'A is read to its end');
});

t.test('SSE keep-alive comments hold nothing, so they take nothing from the answer budget: a long stream of them, then its answer, is read whole', async (t) => {
  const budget = new AnswerBudget(100);
  const stream = sseBody();
  const events: string[] = [];
  const read = readSse(stream as never, (event) => events.push(event.data), () => {}, { budget });
  // Far more comment text than the budget, in chunks of one keep-alive each, CRLF and split line ends among them.
  for (let i = 0; i < 1_000; i++) stream.emit('data', [': ping\n\n', ':\r\n\r\n', ': ping\n', '\n'][i % 4]);
  stream.emit('data', 'data: {"answer":1}\n\n');
  stream.complete = true;
  stream.end();
  await t.resolves(read, 'not cut off for its keep-alives');
  t.same(events, ['{"answer":1}'], 'and its answer delivered');
  await new Promise((resolve) => setImmediate(resolve));
  t.ok(budget.take(100), 'the whole budget is free again');
});

t.test('SSE keep-alives that are one comment line each (no blank line after them) hold nothing either, on a stream that is between events', async (t) => {
  const budget = new AnswerBudget(100);
  const stream = sseBody();
  const events: string[] = [];
  const read = readSse(stream as never, (event) => events.push(event.data), () => {}, { budget });
  stream.emit('data', 'data: {"first":1}\n\n');
  // Far more comment text than the budget; CR, CRLF split across chunks, and a comment line itself split among them.
  for (let i = 0; i < 1_000; i++) stream.emit('data', [': ping\n', ':\r', '\n', ': pi', 'ng\r\n'][i % 5]);
  stream.emit('data', 'data: {"answer":1}\n\n');
  stream.complete = true;
  stream.end();
  await t.resolves(read, 'not cut off for its keep-alives');
  t.same(events, ['{"first":1}', '{"answer":1}'], 'both events delivered');
  await new Promise((resolve) => setImmediate(resolve));
  t.ok(budget.take(100), 'the whole budget is free again');
});
