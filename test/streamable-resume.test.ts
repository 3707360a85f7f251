// coffer as a Streamable HTTP client (the actor's upstream transport): a POST
// stream that ends after a priming event (an id and a retry, no data) and
// before its answer is resumed with a GET carrying Last-Event-ID, no sooner
// than the server's retry delay (SEP-1699; the conformance suite's client
// scenario sse-retry). A stream without an event id is not resumed.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { createStreamableHttp } from '../workers/actor/streamable-http.js';
import type { JsonRpcMessage } from '../workers/actor/jsonrpc-session.js';

const RETRY_MS = 300;

interface Upstream {
  url: string;
  gets: { lastEventId: string | undefined; at: number }[];
  closedAt: number;
  close: () => Promise<void>;
}

/**
 * A server whose tools/call stream primes (with an id unless `withId` is false) and closes; the answer waits for a
 * GET, unless `answerOnPost`: then the POST stream carries it (with an event id) before it closes.
 */
async function upstream(withId: boolean, answerOnPost = false): Promise<Upstream> {
  let pending: unknown;
  const state: Upstream = { url: '', gets: [], closedAt: 0, close: async () => {} };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.method === 'GET') {
      state.gets.push({ lastEventId: req.headers['last-event-id'] as string | undefined, at: performance.now() });
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`id: g-${state.gets.length}\ndata: \n\n`);
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
      res.write(`${withId ? 'id: p-1\n' : ''}retry: ${RETRY_MS}\ndata: \n\n`);
      if (answerOnPost) {
        res.write(`event: message\nid: p-2\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: pending, result: { content: [{ type: 'text', text: 'direct' }] } })}\n\n`);
        pending = undefined;
      }
      setTimeout(() => {
        state.closedAt = performance.now();
        res.end();
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

t.test('a POST stream without an event id is not resumed', async (t) => {
  const server = await upstream(false);
  t.teardown(server.close);
  const transport = await createStreamableHttp(server.url, {});
  t.teardown(() => transport.close());
  transport.onmessage = () => t.fail('no answer expected');
  await transport.send({ jsonrpc: '2.0', id: 6, method: 'tools/call', params: { name: 'x', arguments: {} } });
  await new Promise((resolve) => setTimeout(resolve, RETRY_MS + 300));
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
