// coffer as a Streamable HTTP client (the actor's upstream transport): a POST
// stream that ends (or breaks off) after a priming event (an id and a retry,
// no data) and before its answer is resumed with a GET carrying Last-Event-ID, no sooner
// than the server's retry delay (SEP-1699; the conformance suite's client
// scenario sse-retry). A stream without an event id, or with one that cannot
// go back unchanged as a header, is not resumed, and its request fails at
// once (one too long to go back is not kept, only its length); so does one
// that dropped an event over the size cap, one whose resumptions all fail,
// and one answered with a JSON body that does not carry its answer; a request
// cancelled while its resumption waits is not resumed. A GET stream's retry:
// never reopens it faster than the backoff, and a reopened one resumes from
// its last event id. An answer's media type is read
// as RFC 9110 has it: whatever its case, without its parameters; a compressed
// one, never asked for, fails its request at once, and a compressed stream of
// any other kind (GET, resumed, listen, legacy) is refused and reported, naming
// the encoding.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { gzipSync } from 'node:zlib';
import t, { type Test } from 'tap';
import { createStreamableHttp } from '../workers/actor/streamable-http.js';
import { createLegacySse } from '../workers/actor/legacy-sse.js';
import { waitFor } from './helpers/wait.js';
import type { JsonRpcMessage } from '../workers/actor/jsonrpc-session.js';
import { MAX_MESSAGE_CHARS } from '../src/protocol/message-limit.js';

const RETRY_MS = 300;

interface Upstream {
  url: string;
  gets: { lastEventId: string | undefined; at: number }[];
  closedAt: number;
  close: () => Promise<void>;
}

/** How the server answers a resuming GET: with the answer, with a stream that ends without it, or with an HTTP error. */
type OnGet = 'answer' | 'end' | 'fail';

/**
 * A server whose tools/call stream primes (with an id unless `withId` is false) and closes; the answer waits for a
 * GET, unless `answerOnPost`: then the POST stream carries it (with an event id) before it closes. `priming`
 * replaces the stream's first events; `broken`: the stream breaks off (its socket destroyed) instead of ending.
 */
async function upstream(withId: boolean, answerOnPost = false, onGet: OnGet = 'answer', priming = `${withId ? 'id: p-1\n' : ''}retry: ${RETRY_MS}\ndata: \n\n`, broken = false): Promise<Upstream> {
  let pending: unknown;
  const state: Upstream = { url: '', gets: [], closedAt: 0, close: async () => {} };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.method === 'GET') {
      state.gets.push({ lastEventId: req.headers['last-event-id'] as string | undefined, at: performance.now() });
      if (onGet === 'fail') return void res.writeHead(500, { 'content-type': 'text/plain' }).end('resumption is broken');
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`id: g-${state.gets.length}\ndata: \n\n`);
      if (onGet === 'end') return void setTimeout(() => res.end(), 10);
      if (pending !== undefined && req.headers['last-event-id']) {
        res.write(`event: message\nid: answer\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: pending, result: { content: [{ type: 'text', text: 'resumed' }] } })}\n\n`);
        pending = undefined;
      }
      return;
    }
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      const message = JSON.parse(body) as { id?: unknown };
      pending = message.id;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(priming);
      if (answerOnPost) {
        res.write(`event: message\nid: p-2\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: pending, result: { content: [{ type: 'text', text: 'direct' }] } })}\n\n`);
        pending = undefined;
      }
      setTimeout(() => {
        state.closedAt = performance.now();
        if (broken) res.socket?.destroy();
        else res.end();
      }, 30);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  state.close = () => new Promise((resolve) => (server.closeAllConnections(), server.close(() => resolve())));
  return state;
}

t.test('a POST stream that ends before its answer is resumed with GET + Last-Event-ID after the retry delay', async (t) => {
  const server = await upstream(true);
  t.teardown(server.close);
  const transport = await createStreamableHttp(server.url, {});
  t.teardown(() => transport.close());
  const errors: Error[] = [];
  transport.onerror = (error) => errors.push(error);
  const answer = new Promise<{ message: JsonRpcMessage; related: unknown }>((resolve) => (transport.onmessage = (message, related) => resolve({ message, related })));
  await transport.send({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'x', arguments: {} } });
  const { message, related } = await answer;
  t.match(message, { id: 5, result: { content: [{ text: 'resumed' }] } }, 'the answer came on the resumed stream');
  t.equal(related, 5, 'delivered as the answer to that request');
  t.equal(server.gets.length, 1, 'one GET');
  t.equal(server.gets[0]!.lastEventId, 'p-1', 'with the last event id of the POST stream');
  t.ok(server.gets[0]!.at - server.closedAt >= RETRY_MS - 20, `no sooner than retry: (${Math.round(server.gets[0]!.at - server.closedAt)} ms)`);
  t.same(errors, [], 'the priming event (no data) is no error');
});

/** Calls through a server whose POST stream opens with `priming` and ends; checks the answer came on the resumed stream. */
async function resumedAfter(t: Test, priming: string, id: number, within: number): Promise<Upstream> {
  const server = await upstream(true, false, 'answer', priming);
  t.teardown(server.close);
  const transport = await createStreamableHttp(server.url, {});
  t.teardown(() => transport.close());
  const answer = answerOf(transport, within);
  await transport.send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'x', arguments: {} } });
  t.match(await answer, { id, result: { content: [{ text: 'resumed' }] } }, 'the answer came on the resumed stream');
  return server;
}

t.test('a retry: in an event of its own (no data) sets the delay at once: the resuming GET waits for it', async (t) => {
  // Longer than the delay without retry:, so a retry: held back until a next event (which never comes) shows.
  const retryMs = 1_600;
  const server = await resumedAfter(t, `id: p-1\ndata: \n\nretry: ${retryMs}\n\n`, 11, retryMs + 5_000);
  t.equal(server.gets[0]?.lastEventId, 'p-1', 'the GET resumed from the priming event');
  t.ok(server.gets[0]!.at - server.closedAt >= retryMs - 20, `no sooner than retry: (${Math.round(server.gets[0]!.at - server.closedAt)} ms)`);
});

t.test('an event id in an event without data (an id-only priming event) is the last event id all the same: the stream is resumed from it', async (t) => {
  const server = await resumedAfter(t, `id: p-1\nretry: ${RETRY_MS}\n\n`, 12, RETRY_MS + 5_000);
  t.equal(server.gets[0]?.lastEventId, 'p-1', 'the GET carried the id of the event without data');
});

t.test('a POST stream that breaks off before its answer is resumed as one that ended; without an event id its request fails at once', async (t) => {
  const errors: Error[] = [];
  for (const withId of [true, false]) {
    const server = await upstream(withId, false, 'answer', undefined, true);
    const transport = await createStreamableHttp(server.url, {});
    transport.onerror = (error) => errors.push(error);
    const answer = answerOf(transport, RETRY_MS + 5_000);
    await transport.send({ jsonrpc: '2.0', id: 13, method: 'tools/call', params: { name: 'x', arguments: {} } });
    if (withId) {
      t.match(await answer, { id: 13, result: { content: [{ text: 'resumed' }] } }, 'with an id: the answer came on the resumed stream');
      t.equal(server.gets[0]?.lastEventId, 'p-1', 'resumed from the last event id');
    } else t.match(await answer, { id: 13, error: { ...LOST, message: /before answering, and it gave no event id/ } }, 'without one: an error answer at once');
    await transport.close();
    await server.close();
  }
  t.match(errors.map((error) => error.message), [/SSE stream disconnected/, /SSE stream disconnected/], 'each break reported');
});

/** The request's answer as delivered; `within` bounds how long the test waits for it. */
function answerOf(transport: Awaited<ReturnType<typeof createStreamableHttp>>, within: number): Promise<JsonRpcMessage | 'none'> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve('none'), within);
    transport.onmessage = (message) => {
      clearTimeout(timer);
      resolve(message);
    };
  });
}

const LOST = { code: -32010, data: { code: 'UPSTREAM_UNAVAILABLE' } };

t.test('a POST stream without an event id is not resumed: its request fails at once', async (t) => {
  const server = await upstream(false);
  t.teardown(server.close);
  const transport = await createStreamableHttp(server.url, {});
  t.teardown(() => transport.close());
  const answer = answerOf(transport, RETRY_MS);
  await transport.send({ jsonrpc: '2.0', id: 6, method: 'tools/call', params: { name: 'x', arguments: {} } });
  t.match(await answer, { id: 6, error: { ...LOST, message: /before answering, and it gave no event id/ } }, 'an error answer, before the retry delay has passed');
  await new Promise((resolve) => setTimeout(resolve, RETRY_MS + 300));
  t.equal(server.gets.length, 0, 'no GET');
});

t.test('a POST stream whose last event id cannot be sent back unchanged as Last-Event-ID is not resumed: its request fails at once, saying why', async (t) => {
  const ids: Record<string, [string, RegExp]> = {
    'a control character': ['p\u0001-1', /cannot be sent back as Last-Event-ID: it holds characters/],
    'a character past Latin-1': ['p-\u20ac', /cannot be sent back as Last-Event-ID: it holds characters/],
    'a Latin-1 letter (a header carries its UTF-8 bytes, which a server reads as two Latin-1 ones)': ['p-\u00e9', /cannot be sent back as Last-Event-ID: it holds characters/],
    'a space at its end (a server trims it)': ['p-1 ', /cannot be sent back as Last-Event-ID: it holds characters/],
    '20,000 characters': ['p'.repeat(20_000), /cannot be sent back as Last-Event-ID: it is 20000 characters long, past the 1024/],
    'an empty id after a good one (the spec: it clears the last event id)': ['', /before answering, and it gave no event id/],
  };
  let id = 30;
  for (const [name, [eventId, message]] of Object.entries(ids)) {
    const server = await upstream(true, false, 'answer', `id: p-0\ndata: \n\nid: ${eventId}\nretry: ${RETRY_MS}\ndata: \n\n`);
    const transport = await createStreamableHttp(server.url, {});
    transport.onerror = () => {};
    const answer = answerOf(transport, RETRY_MS);
    await transport.send({ jsonrpc: '2.0', id: ++id, method: 'tools/call', params: { name: 'x', arguments: {} } });
    t.match(await answer, { id, error: { ...LOST, message } }, `${name}: an error answer, before the retry delay has passed`);
    await new Promise((resolve) => setTimeout(resolve, RETRY_MS + 300));
    t.equal(server.gets.length, 0, `${name}: no GET`);
    await transport.close();
    await server.close();
  }
});

t.test('an event id too long to be sent back is not kept, only its length: streams that gave one hold no more for it, and still fail at once when they end', async (t) => {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const STREAMS = 6;
  const ID_CHARS = 6_000_000;
  const longId = 'i'.repeat(ID_CHARS);
  const open: ServerResponse[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      // The priming event's id, then a notification to say the id has been read.
      res.write(`id: ${longId}\nretry: ${RETRY_MS}\ndata: \n\nevent: message\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"primed"}}\n\n`);
      open.push(res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))));
  const transport = await createStreamableHttp(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, {});
  t.teardown(() => transport.close());
  transport.onerror = () => {};
  const answers: JsonRpcMessage[] = [];
  let primed = 0;
  transport.onmessage = (message) => (message.method === undefined ? answers.push(message) : (primed += 1));
  gc();
  const before = process.memoryUsage().heapUsed;
  for (let id = 1; id <= STREAMS; id++) await transport.send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'x', arguments: {} } });
  await waitFor('every stream primed', () => primed === STREAMS, 10_000);
  await new Promise((resolve) => setImmediate(resolve));
  gc();
  const grown = process.memoryUsage().heapUsed - before;
  t.ok(grown < (STREAMS * ID_CHARS) / 4, `${STREAMS} streams with a ${ID_CHARS}-character id each hold ${Math.round(grown / 1e6)} MB more, not their ids`);
  for (const res of open) res.end();
  await waitFor('every request answered', () => answers.length === STREAMS, 5_000);
  t.match(answers, Array(STREAMS).fill({ error: { ...LOST, message: new RegExp(`cannot be sent back as Last-Event-ID: it is ${ID_CHARS} characters long, past the 1024`) } }), 'each request fails at once, saying why it cannot be resumed');
});

/** A transport to a server that answers with `handler`; both closed when `t` ends. */
async function transportTo(t: Test, handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<Awaited<ReturnType<typeof createStreamableHttp>>> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))));
  const transport = await createStreamableHttp(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, {});
  t.teardown(() => transport.close());
  return transport;
}

t.test('a POST stream whose event over the size cap was dropped and that ends unanswered is not resumed: its request fails at once, saying so', async (t) => {
  let gets = 0;
  const big = 'x'.repeat(MAX_MESSAGE_CHARS);
  const transport = await transportTo(t, (req, res) => {
    if (req.method === 'GET') return void (gets++, res.writeHead(200, { 'content-type': 'text/event-stream' }).end('id: g\ndata: \n\n'));
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(`id: p-1\nretry: ${RETRY_MS}\ndata: \n\nid: p-2\nevent: message\ndata: {"jsonrpc":"2.0","id":61,"result":{"text":"${big}"}}\n\n`);
    });
  });
  const errors: Error[] = [];
  transport.onerror = (error) => errors.push(error);
  const answer = answerOf(transport, 3 * RETRY_MS + 5_000);
  await transport.send({ jsonrpc: '2.0', id: 61, method: 'tools/call', params: { name: 'x', arguments: {} } });
  t.match(await answer, { id: 61, error: { ...LOST, message: /an upstream message over 64 MB \(SSE event\) was dropped from it/ } }, 'an error answer naming the size');
  t.equal(gets, 0, 'no GET: a resumption would bring the same event again');
  t.match(errors.map((error) => error.message), [/over 64 MB \(SSE event\) was dropped/], 'the drop reported');
});

t.test('resumed streams that all end without the answer: three GETs, then the request fails', async (t) => {
  const server = await upstream(true, false, 'end');
  t.teardown(server.close);
  const transport = await createStreamableHttp(server.url, {});
  t.teardown(() => transport.close());
  const answer = answerOf(transport, 3 * RETRY_MS + 5_000);
  await transport.send({ jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'x', arguments: {} } });
  t.match(await answer, { id: 8, error: { ...LOST, message: /3 GETs with Last-Event-ID did not bring the answer/ } }, 'an error answer');
  t.same(server.gets.map((get) => get.lastEventId), ['p-1', 'g-1', 'g-2'], 'each GET resumes from the last event id seen');
});

t.test('resuming GETs that fail (HTTP 500) are reported and retried, then the request fails', async (t) => {
  const server = await upstream(true, false, 'fail');
  t.teardown(server.close);
  const transport = await createStreamableHttp(server.url, {});
  t.teardown(() => transport.close());
  const errors: Error[] = [];
  transport.onerror = (error) => errors.push(error);
  const answer = answerOf(transport, 3 * RETRY_MS + 5_000);
  await transport.send({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'x', arguments: {} } });
  t.match(await answer, { id: 9, error: LOST }, 'an error answer');
  t.equal(server.gets.length, 3, 'three GETs');
  t.same(errors.map((error) => error.message), Array(3).fill('resuming the answer to request 9 failed: HTTP 500'), 'each failed GET reported');
});

t.test('a request cancelled while its resumption waits is not resumed', async (t) => {
  const server = await upstream(true);
  t.teardown(server.close);
  const transport = await createStreamableHttp(server.url, {});
  t.teardown(() => transport.close());
  const answer = answerOf(transport, RETRY_MS + 500);
  await transport.send({ jsonrpc: '2.0', id: 10, method: 'tools/call', params: { name: 'x', arguments: {} } });
  await new Promise((resolve) => setTimeout(resolve, 100));
  t.ok(server.closedAt > 0, 'the POST stream ended before its answer');
  await transport.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 10, reason: 'the caller gave up' } });
  t.equal(await answer, 'none', 'no answer');
  t.equal(server.gets.length, 0, 'no GET');
});

t.test('a POST stream that carried its answer is not resumed when it ends', async (t) => {
  const server = await upstream(true, true);
  t.teardown(server.close);
  const transport = await createStreamableHttp(server.url, {});
  t.teardown(() => transport.close());
  const answer = new Promise<JsonRpcMessage>((resolve) => (transport.onmessage = (message) => resolve(message)));
  await transport.send({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'x', arguments: {} } });
  t.match(await answer, { id: 7, result: { content: [{ text: 'direct' }] } }, 'the answer came on the POST stream');
  await new Promise((resolve) => setTimeout(resolve, RETRY_MS + 300));
  t.equal(server.gets.length, 0, 'no GET');
});

/** A server whose GET stream for server messages primes with `retry` and ends at once, every time. */
async function flappingStream(retry: string): Promise<{ url: string; gets: () => number; close: () => Promise<void> }> {
  let gets = 0;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.method === 'GET') {
      gets += 1;
      return void res.writeHead(200, { 'content-type': 'text/event-stream' }).end(`retry: ${retry}\ndata: \n\n`);
    }
    req.resume();
    req.on('end', () => res.writeHead(202).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  return { url, gets: () => gets, close: () => new Promise((resolve) => (server.closeAllConnections(), server.close(() => resolve()))) };
}

t.test("a GET stream that ends at once is reopened no faster than without retry:, whatever its retry: says (0, or past what a timer holds)", async (t) => {
  const warnings: Error[] = [];
  const onWarning = (warning: Error): number => warnings.push(warning);
  process.on('warning', onWarning);
  t.teardown(() => void process.off('warning', onWarning));
  for (const retry of ['0', '99999999999']) {
    const server = await flappingStream(retry);
    const transport = await createStreamableHttp(server.url, {});
    transport.onerror = () => {};
    await transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    await transport.close();
    await server.close();
    t.ok(server.gets() <= 2, `retry: ${retry}: ${server.gets()} GET(s) in 1.5 s: at most the first and one a second later`);
  }
  t.same(warnings.map((warning) => warning.name), [], 'no TimeoutOverflowWarning (it goes to daemon.log)');
});

t.test('a GET stream that breaks is reopened with Last-Event-ID: a server that keeps its place sends what was missed; an id that cannot go back is not sent', async (t) => {
  const changed = (n: number) => `id: s-${n}\nevent: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/tools/list_changed', params: { n } })}\n\n`;
  for (const [firstId, expected] of [['s-1', 's-1'], ['bad\u00e9', undefined]] as const) {
    const gets: Array<string | undefined> = [];
    const server = createServer((req: IncomingMessage, res: ServerResponse) => {
      if (req.method !== 'GET') return void (req.resume(), req.on('end', () => res.writeHead(202).end()));
      const from = req.headers['last-event-id'] as string | undefined;
      gets.push(from);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      // The first stream gives one event and breaks; the server then announces n: 2, which only a resumption from s-1 brings.
      if (gets.length === 1) return void res.end(changed(1).replace('s-1', firstId));
      if (from === 's-1') res.write(changed(2));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const transport = await createStreamableHttp(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, {});
    transport.onerror = () => {};
    const heard: unknown[] = [];
    transport.onmessage = (message) => void heard.push((message as { params?: { n?: number } }).params?.n);
    await transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    const until = Date.now() + 3_000;
    while (gets.length < 2 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 50));
    await new Promise((resolve) => setTimeout(resolve, 100));
    await transport.close();
    await new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve())));
    t.same(gets, [undefined, expected], `id ${JSON.stringify(firstId)}: the first GET has no Last-Event-ID, the reopening one ${expected === undefined ? 'none either' : 'the last id'}`);
    t.same(heard, expected === undefined ? [1] : [1, 2], expected === undefined ? 'only what came on the first stream' : 'what the server sent while it was down comes on the reopened stream');
  }
});

t.test('a JSON answer that does not carry the answer to its request (not JSON, another id, a notification, empty) fails that request at once', async (t) => {
  const bodies: Record<string, (id: number) => string> = {
    'not JSON': () => 'hello',
    'another id': (id) => JSON.stringify({ jsonrpc: '2.0', id: id + 1_000, result: {} }),
    'a notification': () => JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'hi' } }),
    empty: () => '',
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      const message = JSON.parse(body) as { id: number; params: { name: string } };
      res.writeHead(200, { 'content-type': 'application/json' }).end(bodies[message.params.name]!(message.id));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))));
  const transport = await createStreamableHttp(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, {});
  t.teardown(() => transport.close());
  transport.onerror = () => {};
  let id = 20;
  for (const name of Object.keys(bodies)) {
    id += 1;
    const asked = id;
    const answer = new Promise<JsonRpcMessage | 'none'>((resolve) => {
      const timer = setTimeout(() => resolve('none'), RETRY_MS);
      transport.onmessage = (message) => {
        if (message.id !== asked) return;
        clearTimeout(timer);
        resolve(message);
      };
    });
    await transport.send({ jsonrpc: '2.0', id: asked, method: 'tools/call', params: { name, arguments: {} } });
    t.match(await answer, { id: asked, error: { code: -32011, message: /did not carry its answer/, data: { code: 'UPSTREAM_RESPONSE_INVALID' } } }, `${name}: an error answer at once`);
  }
});

t.test('an answer compressed though coffer asked for none fails its request at once, naming the encoding', async (t) => {
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      const message = JSON.parse(body) as { id: number; params: { name: string } };
      const answer = JSON.stringify({ jsonrpc: '2.0', id: message.id, result: {} });
      const type = message.params.name;
      if (type === 'an error page') return void res.writeHead(500, { 'content-type': 'text/plain', 'content-encoding': 'gzip' }).end(gzipSync('the tool is down'));
      res.writeHead(200, { 'content-type': type, 'content-encoding': 'gzip' }).end(gzipSync(type === 'text/event-stream' ? `event: message\ndata: ${answer}\n\n` : answer));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))));
  const transport = await createStreamableHttp(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, {});
  t.teardown(() => transport.close());
  transport.onerror = () => {};
  let id = 40;
  for (const type of ['application/json', 'text/event-stream']) {
    const answer = new Promise<JsonRpcMessage>((resolve) => (transport.onmessage = resolve));
    await transport.send({ jsonrpc: '2.0', id: ++id, method: 'tools/call', params: { name: type, arguments: {} } });
    t.match(await answer, { id, error: { code: -32011, message: /Content-Encoding gzip.*turn compression off/, data: { code: 'UPSTREAM_RESPONSE_INVALID' } } }, type);
  }
  const page = { jsonrpc: '2.0' as const, id: ++id, method: 'tools/call', params: { name: 'an error page', arguments: {} } };
  await t.rejects(transport.send(page), /HTTP 500\): the upstream answered with Content-Encoding gzip.*turn compression off/, 'an error body: its message says so instead of quoting compressed bytes');
});

/**
 * A server that compresses every SSE stream it opens (the GET stream, a resuming GET, a listen answer, the legacy
 * stream at /sse) and keeps it open; a tools/call POST stream primes with an event id, uncompressed, and ends.
 */
async function compressing(t: Test): Promise<{ url: string; gets: Array<string | undefined> }> {
  const gets: Array<string | undefined> = [];
  const compressed = (res: ServerResponse, text: string): void => void res.writeHead(200, { 'content-type': 'text/event-stream', 'content-encoding': 'gzip' }).write(gzipSync(text));
  const notification = `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' })}\n\n`;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.method === 'GET') {
      if (req.url === '/sse') return compressed(res, 'event: endpoint\ndata: /messages\n\n');
      gets.push(req.headers['last-event-id'] as string | undefined);
      return compressed(res, `id: g-${gets.length}\n${notification}`);
    }
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      const message = JSON.parse(body) as { id?: unknown; method: string };
      if (message.id === undefined) return void res.writeHead(202).end();
      if (message.method === 'subscriptions/listen') return compressed(res, notification);
      res.writeHead(200, { 'content-type': 'text/event-stream' }).end(`id: p-1\nretry: ${RETRY_MS}\ndata: \n\n`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, gets };
}

const COMPRESSED = /Content-Encoding gzip, which coffer did not ask for and does not read: turn compression off/;

/** What `settling` came to within a second (its value, or its error's message), or `still`. */
function within1s(settling: Promise<unknown>, still: string): Promise<unknown> {
  const outcome = settling.then((value) => value, (error: Error) => error.message);
  return Promise.race([outcome, new Promise((resolve) => setTimeout(() => resolve(still), 1_000))]);
}

t.test('a compressed stream of any kind is refused naming the encoding, and handled as any stream that cannot be used', async (t) => {
  t.test('the GET stream: reported, and retried as one refused with an HTTP error: twice, after a growing delay, then given up', async (t) => {
    const server = await compressing(t);
    const transport = await createStreamableHttp(`${server.url}/mcp`, {});
    t.teardown(() => transport.close());
    const errors: Error[] = [];
    const messages: JsonRpcMessage[] = [];
    transport.onerror = (error) => errors.push(error);
    transport.onmessage = (message) => messages.push(message);
    await transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    await waitFor('a second GET', () => server.gets.length >= 2, 3_000).catch(() => undefined);
    t.equal(server.gets.length, 2, 'the stream was opened again');
    t.match(errors.map((error) => error.message), [COMPRESSED], 'the first stream was reported, naming the encoding');
    await waitFor('a third GET', () => server.gets.length >= 3, 3_000).catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    t.equal(server.gets.length, 3, `then once more, and no more (${server.gets.length} GETs in all)`);
    t.equal(errors.length, server.gets.length, 'each reported');
    t.ok(errors.every((error) => COMPRESSED.test(error.message)), 'naming the encoding');
    t.same(messages, [], 'nothing was read from them');
  });
  t.test('a resumed answer: each GET reported, then the request fails', async (t) => {
    const server = await compressing(t);
    const transport = await createStreamableHttp(`${server.url}/mcp`, {});
    t.teardown(() => transport.close());
    const errors: Error[] = [];
    transport.onerror = (error) => errors.push(error);
    const answer = answerOf(transport, 3 * RETRY_MS + 3_000);
    await transport.send({ jsonrpc: '2.0', id: 51, method: 'tools/call', params: { name: 'x', arguments: {} } });
    t.match(await answer, { id: 51, error: { ...LOST, message: /3 GETs with Last-Event-ID did not bring the answer/ } }, 'the request fails once its resumptions have');
    t.same(server.gets, ['p-1', 'p-1', 'p-1'], "three GETs, each from the POST stream's id (nothing was read from them)");
    t.match(errors.map((error) => error.message), [COMPRESSED, COMPRESSED, COMPRESSED], 'each reported, naming the encoding');
  });
  t.test('a listen stream: it fails, naming the encoding (the listener then reopens it with backoff)', async (t) => {
    const server = await compressing(t);
    const transport = await createStreamableHttp(`${server.url}/mcp`, {});
    t.teardown(() => transport.close());
    transport.onerror = () => {};
    const abort = new AbortController();
    t.teardown(() => abort.abort());
    t.match(await within1s(transport.listen({ jsonrpc: '2.0', id: 'l-1', method: 'subscriptions/listen', params: {} }, abort.signal), 'still open'), COMPRESSED);
  });
  t.test('the legacy SSE stream: the connection fails, naming the encoding', async (t) => {
    const server = await compressing(t);
    const transport = await createLegacySse(`${server.url}/sse`, {});
    t.teardown(() => transport.close());
    t.match(await within1s(transport.start(), 'still starting'), COMPRESSED);
  });
  t.end();
});

t.test("an answer's media type is read whatever its case and parameters, and only as the type it names", async (t) => {
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      const message = JSON.parse(body) as { id: number; params: { name: string } };
      const answer = JSON.stringify({ jsonrpc: '2.0', id: message.id, result: { content: [{ type: 'text', text: message.params.name }] } });
      const type = message.params.name;
      res.writeHead(200, { 'content-type': type }).end(type.toLowerCase().startsWith('text/event-stream') ? `event: message\ndata: ${answer}\n\n` : answer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))));
  const transport = await createStreamableHttp(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, {});
  t.teardown(() => transport.close());
  const answers: JsonRpcMessage[] = [];
  transport.onmessage = (message) => answers.push(message);
  let id = 40;
  for (const type of ['Application/JSON; Charset=UTF-8', 'TEXT/EVENT-STREAM', 'text/event-stream ;charset=utf-8']) {
    await transport.send({ jsonrpc: '2.0', id: ++id, method: 'tools/call', params: { name: type, arguments: {} } });
    await new Promise((resolve) => setTimeout(resolve, 50));
    t.match(answers.at(-1), { id, result: { content: [{ text: type }] } }, `${type}: answered`);
  }
  await t.rejects(transport.send({ jsonrpc: '2.0', id: ++id, method: 'tools/call', params: { name: 'text/plain; note=application/json', arguments: {} } }), /Unexpected content type/, 'a type that only mentions application/json is no JSON answer');
});

t.test('a session id outside ASCII goes back byte for byte, as node:http would send it: the server knows its session', async (t) => {
  const received: Array<string | undefined> = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      received.push(req.headers['mcp-session-id'] as string | undefined);
      const message = JSON.parse(body) as { id?: number };
      // node:http writes a header as Latin-1: the byte 0xE9.
      if (message.id === undefined) return void res.writeHead(202).end();
      res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 'séance-1' }).end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result: { body } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))));
  const transport = await createStreamableHttp(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, {});
  t.teardown(() => transport.close());
  const reports: string[] = [];
  transport.onerror = (error) => reports.push(error.message);
  for (const id of [1, 2]) {
    const answer = new Promise<JsonRpcMessage>((resolve) => (transport.onmessage = resolve));
    await transport.send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'ünïcode', arguments: {} } });
    t.match(await answer, { id, result: { body: /"name":"ünïcode"/ } }, `request ${id} is answered, its UTF-8 body read as sent`);
  }
  await transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  t.same(received, [undefined, 'séance-1', 'séance-1'], 'the session id went back as it came, on a request and on a notification');
  t.same(reports, [], 'nothing was reported');
});
