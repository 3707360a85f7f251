// The actor's own MCP client plumbing, pure parts: the SSE parser, stdio line
// splitting, and JSON-RPC correlation, progress, cancellation and server requests.
import t from 'tap';
import { JsonRpcSession, RpcError, SessionClosedError, type JsonRpcMessage, type MessageTransport } from '../workers/actor/jsonrpc-session.js';
import { SseParser, type EventId } from '../src/protocol/sse-parser.js';
import { LineSplitter, parseLine } from '../workers/actor/stdio-transport.js';
import { Cancel } from '../src/protocol/cancel.js';

class FakeTransport implements MessageTransport {
  onmessage?: (message: JsonRpcMessage) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  sent: JsonRpcMessage[] = [];
  failSends = false;
  async start(): Promise<void> {}
  async send(message: JsonRpcMessage): Promise<void> {
    if (this.failSends) throw new Error('refused');
    this.sent.push(message);
  }
  async close(): Promise<void> {
    this.onclose?.();
  }
  reply(message: JsonRpcMessage): void {
    this.onmessage?.(message);
  }
}

t.test('SSE: events, multi-line data, comments, ids, CRLF and split chunks', async (t) => {
  const ids: EventId[] = [];
  const parser = new SseParser(undefined, { onLastEventId: (id) => ids.push(id) });
  t.same(parser.push(': comment\n\nevent: endpoint\ndata: /messages?s=1\n\n'), [{ event: 'endpoint', data: '/messages?s=1' }]);
  t.same(parser.push('id: 7\ndata: {"a":\ndata:1}\n\n'), [{ event: 'message', data: '{"a":\n1}' }], 'data lines join with \\n; no space after the colon is fine');
  t.same(ids, ['7'], 'the id is the last event id');
  t.same(parser.push('data: x\r\n\r\n'), [{ event: 'message', data: 'x' }], 'CRLF');
  t.same(parser.push('data: sp'), [], 'an incomplete line waits');
  t.same(parser.push('lit\n'), [], 'a line waits for its blank line');
  t.same(parser.push('\n'), [{ event: 'message', data: 'split' }]);
  t.same(parser.push('data: a\r'), [], 'a CR at the end of a chunk');
  t.same(parser.push('\n\r\n'), [{ event: 'message', data: 'a' }], 'a CRLF split across chunks is one line end');
  t.same(parser.push('event: ping\n\nretry: 500\ndata: r\n\n'), [{ event: 'message', data: 'r' }], 'an event without data is not dispatched');
  t.same(parser.push('data\n\n'), [{ event: 'message', data: '' }], 'a field with no colon has an empty value');
  t.same(parser.push('unknown: field\ndata:  two spaces\n\n'), [{ event: 'message', data: ' two spaces' }], 'only one leading space is removed');
  t.same(ids, ['7'], 'the last id carries over events without one');
});

t.test('SSE: a retry: field is handed on as soon as its line is read, whether or not its event dispatches', async (t) => {
  const retries: number[] = [];
  const parser = new SseParser(undefined, { onRetry: (ms) => retries.push(ms) });
  t.same(parser.push('retry: 500\n'), [], 'no event yet');
  t.same(retries, [500], 'the delay, before the event ends');
  t.same(parser.push('\nretry: 70\n\nretry: soon\nretry: -1\n\n'), [], 'events without data are not dispatched');
  t.same(retries, [500, 70], 'each valid retry:, in its own event; values that are not digits are ignored');
  t.same(parser.push('retry: 9\ndata: x\n\n'), [{ event: 'message', data: 'x' }], 'an event carries no retry: of its own');
  t.same(retries, [500, 70, 9]);
});

t.test('SSE: an id in an event without data still becomes the last event id, as the WHATWG parser has it', async (t) => {
  const ids: EventId[] = [];
  const parser = new SseParser(undefined, { onLastEventId: (id) => ids.push(id) });
  t.same(parser.push('id: 1\n'), [], 'not before its blank line');
  t.same(ids, []);
  t.same(parser.push('\n'), [], 'not dispatched');
  t.same(ids, ['1'], 'but its id is the last event id');
  t.same(parser.push('data: a\n\nid: 2\nevent: x\n\nid\n\ndata: b\n\n').map((event) => event.data), ['a', 'b']);
  t.same(ids, ['1', '2', ''], 'an id field without a value clears it');
  t.same(parser.push('id: 3\u0000\n\ndata: c\n\nid: 4\ndata: d'), [{ event: 'message', data: 'c' }]);
  t.same(ids, ['1', '2', ''], 'an id with NUL is ignored; one in an event the stream has not ended is not taken');
});

t.test('SSE: an id longer than the parser keeps is kept as its length only; a shorter one after it is kept whole', async (t) => {
  const ids: EventId[] = [];
  const parser = new SseParser(undefined, { onLastEventId: (id) => ids.push(id) }, 4);
  t.same(parser.push('id: 12345\ndata: a\n\ndata: b\n\nid: 1234\n\n').map((event) => event.data), ['a', 'b']);
  t.same(ids, [{ chars: 5 }, '1234'], 'handed on once each, as it changed');
});

t.test('SSE: a BOM at the start is skipped; two events in one chunk', async (t) => {
  const parser = new SseParser();
  t.same(parser.push('\uFEFFdata: 1\n\ndata: 2\n\n').map((e) => e.data), ['1', '2']);
});

t.test('stdio lines: split across chunks, CRLF tolerated, non-JSON rejected', async (t) => {
  const lines = new LineSplitter();
  t.same(lines.push('{"a":1}\n{"b"'), ['{"a":1}']);
  t.same(lines.push(':2}\r\nnoise\n'), ['{"b":2}', 'noise']);
  t.same(parseLine('{"jsonrpc":"2.0","id":1,"result":{}}'), { jsonrpc: '2.0', id: 1, result: {} });
  t.throws(() => parseLine('this is not json {{{'), /not a JSON-RPC message/);
  t.throws(() => parseLine('42'), /not a JSON-RPC message object/);
});

t.test('JSON-RPC: ids correlate out of order; results come back unchanged', async (t) => {
  const transport = new FakeTransport();
  const session = new JsonRpcSession(transport);
  const a = session.request('tools/list', undefined);
  const b = session.request('tools/call', { name: 'echo', arguments: { x: 1 } });
  t.same(transport.sent, [
    { jsonrpc: '2.0', id: 0, method: 'tools/list' },
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { x: 1 } } },
  ]);
  const odd = { content: [], extra: { kept: true }, _meta: { z: 1 } };
  transport.reply({ jsonrpc: '2.0', id: 1, result: odd });
  transport.reply({ jsonrpc: '2.0', id: 0, result: { tools: [] } });
  t.equal(await b, odd, 'the very object parsed, no schema in between');
  t.same(await a, { tools: [] });
});

t.test('JSON-RPC: errors keep code, message and data', async (t) => {
  const transport = new FakeTransport();
  const session = new JsonRpcSession(transport);
  const pending = session.request('tools/call', {});
  transport.reply({ jsonrpc: '2.0', id: 0, error: { code: -32602, message: 'unknown tool x', data: { hint: 1 } } });
  const error = (await pending.catch((e: unknown) => e)) as RpcError;
  t.ok(error instanceof RpcError);
  t.same([error.code, error.rpcMessage, error.data], [-32602, 'unknown tool x', { hint: 1 }]);
});

t.test('JSON-RPC: progress routed by token; notifications; unknown responses reported', async (t) => {
  const transport = new FakeTransport();
  const notes: string[] = [];
  const errors: string[] = [];
  const session = new JsonRpcSession(transport, { onNotification: (m) => notes.push(m), onerror: (e) => errors.push(e.message) });
  const progress: unknown[] = [];
  const pending = session.request('tools/call', { name: 'slow', _meta: { progressToken: 'downstream', other: 1 } }, { onprogress: (p) => progress.push(p) });
  t.same(transport.sent[0]!.params, { name: 'slow', _meta: { progressToken: 0, other: 1 } }, 'our own token replaces the downstream one');
  transport.reply({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 0, progress: 1, total: 3, message: 'step 1' } });
  transport.reply({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 99, progress: 1 } });
  transport.reply({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
  transport.reply({ jsonrpc: '2.0', id: 0, result: {} });
  await pending;
  transport.reply({ jsonrpc: '2.0', id: 0, result: {} });
  t.same(progress, [{ progress: 1, total: 3, message: 'step 1' }]);
  t.same(notes, ['notifications/tools/list_changed']);
  t.equal(errors.length, 2, 'an unknown progress token and a duplicate response are reported');
});

t.test("Cancel: an AbortSignal's behaviour as the actor uses it, and a session request cancelled by one", async (t) => {
  const cancel = new Cancel();
  const ran: string[] = [];
  const second = () => ran.push('second');
  cancel.addEventListener('abort', () => ran.push('first'), { once: true });
  cancel.addEventListener('abort', second);
  cancel.addEventListener('abort', () => ran.push('third'));
  cancel.removeEventListener('abort', second);
  t.equal(cancel.aborted, false);
  cancel.abort('stop');
  cancel.abort('again');
  t.same(ran, ['first', 'third'], 'listeners run once, in order; a removed one does not');
  t.equal(cancel.reason, 'stop', 'the first reason stays');
  cancel.addEventListener('abort', () => ran.push('late'));
  t.same(ran, ['first', 'third'], 'a listener added after the abort never runs');
  const unreasoned = new Cancel();
  unreasoned.abort();
  t.ok(unreasoned.reason instanceof DOMException && unreasoned.reason.name === 'AbortError', 'no reason: an AbortError, as AbortSignal gives');

  const transport = new FakeTransport();
  const session = new JsonRpcSession(transport, {});
  const call = new Cancel();
  const pending = session.request('tools/call', { name: 'slow' }, { signal: call });
  call.abort(new Error('client went away'));
  await t.rejects(pending, /client went away/);
  t.same(transport.sent[1], { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 0, reason: 'client went away' } });
  const done = new Cancel();
  const answered = session.request('ping', undefined, { signal: done });
  transport.reply({ jsonrpc: '2.0', id: 1, result: {} });
  await answered;
  done.abort('too late');
  t.equal(transport.sent.length, 3, 'a request already answered sends no cancellation when its signal aborts later');
});

t.test('JSON-RPC: abort sends notifications/cancelled and rejects with the reason', async (t) => {
  const transport = new FakeTransport();
  const late: string[] = [];
  const errors: string[] = [];
  const session = new JsonRpcSession(transport, { onLate: (method) => late.push(method), onerror: (error) => errors.push(error.message) });
  const abort = new AbortController();
  const pending = session.request('tools/call', { name: 'slow' }, { signal: abort.signal });
  abort.abort(new Error('user gave up'));
  await t.rejects(pending, /user gave up/);
  t.same(transport.sent[1], { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 0, reason: 'user gave up' } });
  transport.reply({ jsonrpc: '2.0', id: 0, result: {} });
  t.same(late, ['tools/call'], 'a late answer is ignored and reported as late');
  t.same(errors, [], 'not as protocol noise');
  transport.reply({ jsonrpc: '2.0', id: 0, result: {} });
  t.same(errors, ['Received a response for an unknown message ID: 0'], 'a second answer to it is noise again');
  // Only the latest abandoned requests are remembered: a server that never answers them costs a bounded map.
  for (let i = 0; i < 300; i++) {
    const gaveUp = new AbortController();
    const request = session.request('ping', undefined, { signal: gaveUp.signal });
    gaveUp.abort('gave up');
    await t.rejects(request);
  }
  transport.reply({ jsonrpc: '2.0', id: 1, result: {} });
  transport.reply({ jsonrpc: '2.0', id: 300, result: {} });
  t.same(late, ['tools/call', 'ping'], 'the latest is still known');
  t.equal(errors.length, 2, 'the oldest is forgotten');
  const already = new AbortController();
  already.abort('no');
  await t.rejects(session.request('ping', undefined, { signal: already.signal }));
  t.equal(transport.sent.filter((message) => message.method === 'ping').length, 300, 'an already aborted request is never sent');
});

t.test('JSON-RPC: server requests: ping answered, others -32601', async (t) => {
  const transport = new FakeTransport();
  new JsonRpcSession(transport);
  transport.reply({ jsonrpc: '2.0', id: 'srv-1', method: 'ping' });
  transport.reply({ jsonrpc: '2.0', id: 5, method: 'sampling/createMessage', params: {} });
  await new Promise((resolve) => setImmediate(resolve));
  t.same(transport.sent, [
    { jsonrpc: '2.0', id: 'srv-1', result: {} },
    { jsonrpc: '2.0', id: 5, error: { code: -32601, message: 'Method not found' } },
  ]);
});

t.test('JSON-RPC: close rejects what waits; send failures reject their request', async (t) => {
  const transport = new FakeTransport();
  let closed = 0;
  const session = new JsonRpcSession(transport, { onclose: () => closed++ });
  const pending = session.request('tools/list', undefined);
  transport.failSends = true;
  await t.rejects(session.request('ping', undefined), /refused/);
  transport.failSends = false;
  await session.close();
  const error = await pending.catch((e: unknown) => e);
  t.ok(error instanceof SessionClosedError);
  await t.rejects(session.request('ping', undefined), SessionClosedError);
  await session.close();
  t.equal(closed, 1, 'onclose once');
});
