// coffer as an HTTP client (Streamable HTTP, legacy SSE) against an upstream
// that keeps its POSTs open: a stream that carried its request's answer and
// never ends, a notification or a legacy POST it never acknowledges. Nothing
// waits on such an exchange any more, so its socket is closed after a grace
// period instead of being held for as long as the upstream likes (one more
// socket per call, per cancel). And a listen stream closed before its POST
// went out is not left open, nor a 401's endless body read while OAuth decides;
// and a flood of server requests gets a bounded number of reply sockets. An
// event without data (a keep-alive) carries no message on any SSE stream.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import t, { type Test } from 'tap';
import { createStreamableHttp } from '../workers/actor/streamable-http.js';
import { createLegacySse } from '../workers/actor/legacy-sse.js';
import { JsonRpcSession, RpcError, type JsonRpcMessage } from '../workers/actor/jsonrpc-session.js';
import { MAX_SOCKETS_PER_UPSTREAM } from '../workers/actor/limits.js';
import { JSONRPC } from '../src/protocol/errors.js';
import { waitFor } from './helpers/wait.js';
import type { HttpAuth } from '../workers/actor/http-auth.js';

const LINGER_MS = 200;

/** A server that answers a request on an SSE stream it never ends, and never answers a notification; counts its open sockets. */
async function upstream(t: Test): Promise<{ url: string; open: () => number }> {
  const sockets = new Set<Socket>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      const message = JSON.parse(body) as { id?: unknown };
      if (message.id === undefined) return;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: message.id, result: {} })}\n\n`);
    });
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, open: () => sockets.size };
}

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

t.test('a stream that carried its answer and stays open is closed after a grace period', async (t) => {
  const server = await upstream(t);
  const transport = await createStreamableHttp(server.url, {});
  transport.lingerMs = LINGER_MS;
  t.teardown(() => transport.close());
  const errors: Error[] = [];
  transport.onerror = (error) => errors.push(error);
  for (const id of [1, 2, 3]) {
    const answer = new Promise<JsonRpcMessage>((resolve) => (transport.onmessage = (message) => resolve(message)));
    await transport.send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'x', arguments: {} } });
    t.match(await answer, { id, result: {} }, `answer ${id}`);
  }
  t.equal(server.open(), 3, 'each stream held its socket while it could still end by itself');
  await pause(LINGER_MS + 300);
  t.equal(server.open(), 0, 'then every one was closed');
  t.same(errors, [], 'closing them is no error');
});

t.test('a notification the upstream never acknowledges is given up after a grace period', async (t) => {
  const server = await upstream(t);
  const transport = await createStreamableHttp(server.url, {});
  transport.lingerMs = LINGER_MS;
  t.teardown(() => transport.close());
  const sent = transport.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 9 } });
  await pause(50);
  t.equal(server.open(), 1, 'the POST is open');
  const outcome = await Promise.race([sent.then(() => 'sent', (error: NodeJS.ErrnoException) => error.code), pause(LINGER_MS + 1_000).then(() => 'still waiting')]);
  t.equal(outcome, 'ECONNRESET', 'its send fails once the grace period is over');
  await pause(100);
  t.equal(server.open(), 0, 'its socket is closed');
});

t.test('legacy SSE: a POST the upstream never acknowledges is let go after a grace period; its answer still comes on the stream', async (t) => {
  const sockets = new Set<Socket>();
  let stream: ServerResponse | undefined;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.method === 'GET') {
      stream = res;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('event: endpoint\ndata: /messages\n\n');
      return;
    }
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    // Never acknowledged; the answer comes on the stream a while later.
    req.on('end', () => setTimeout(() => stream!.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: (JSON.parse(body) as { id: unknown }).id, result: {} })}\n\n`), LINGER_MS + 200));
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))));
  const transport = await createLegacySse(`http://127.0.0.1:${(server.address() as AddressInfo).port}/sse`, {});
  transport.lingerMs = LINGER_MS;
  t.teardown(() => transport.close());
  const errors: Error[] = [];
  transport.onerror = (error) => errors.push(error);
  await transport.start();
  const answer = new Promise<JsonRpcMessage>((resolve) => (transport.onmessage = (message) => resolve(message)));
  const sent = transport.send({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'x', arguments: {} } });
  await pause(50);
  t.equal(sockets.size, 2, 'the stream and the POST are open');
  const outcome = await Promise.race([sent.then(() => 'sent'), pause(LINGER_MS + 1_000).then(() => 'still waiting')]);
  t.equal(outcome, 'sent', 'the send is over once the grace period is');
  await pause(100);
  t.equal(sockets.size, 1, "the POST's socket is closed, the stream's is not");
  t.match(await answer, { id: 4, result: {} }, 'the answer came on the stream');
  t.same(errors, [], 'no error');
});

t.test('events without data (keep-alives such as `data:`) are no message and no error, on the legacy stream and on a listen stream alike', async (t) => {
  const KEEP_ALIVES = 'data:\n\ndata: \n\nevent: message\ndata:\n\n';
  const notification = `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' })}\n\n`;
  let stream: ServerResponse | undefined;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.method === 'GET') {
      stream = res;
      return void res.writeHead(200, { 'content-type': 'text/event-stream' }).write(`event: endpoint\ndata: /messages\n\n${KEEP_ALIVES}`);
    }
    req.resume();
    req.on('end', () => {
      // The legacy POST is acknowledged and its keep-alives and notification go on the stream; the listen POST gets its own.
      if (req.url === '/messages') return void (res.writeHead(202).end(), stream!.write(`${KEEP_ALIVES}${notification}`));
      res.writeHead(200, { 'content-type': 'text/event-stream' }).end(`${KEEP_ALIVES}${notification}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const legacy = await createLegacySse(`${base}/sse`, {});
  const modern = await createStreamableHttp(`${base}/mcp`, {});
  t.teardown(() => Promise.all([legacy.close(), modern.close()]));
  const errors: Error[] = [];
  const messages: JsonRpcMessage[] = [];
  for (const transport of [legacy, modern]) {
    transport.onerror = (error) => errors.push(error);
    transport.onmessage = (message) => messages.push(message);
  }
  await legacy.start();
  await legacy.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  await modern.listen({ jsonrpc: '2.0', id: 1, method: 'subscriptions/listen', params: {} }, new AbortController().signal);
  await waitFor('both notifications', () => messages.length >= 2, 5_000);
  await pause(50);
  t.same(messages.map((message) => message.method), ['notifications/tools/list_changed', 'notifications/tools/list_changed'], 'only the notifications');
  t.same(errors.map((error) => error.message), [], 'no error');
});

t.test('a listen stream closed while its request waits for the auth headers is never opened', async (t) => {
  let posts = 0;
  const sockets = new Set<Socket>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    posts += 1;
    req.resume();
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(': listening\n\n');
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))));
  // A token refresh under way: the headers take a while.
  const auth: HttpAuth = { headers: () => pause(100).then(() => ({ authorization: 'Bearer t' })), refused: async () => null, signInNeeded: () => null };
  const transport = await createStreamableHttp(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, {}, auth);
  t.teardown(() => transport.close());
  const abort = new AbortController();
  const listening = transport.listen({ jsonrpc: '2.0', id: 'l-1', method: 'subscriptions/listen', params: {} }, abort.signal).then(() => 'ended', () => 'ended');
  await pause(20);
  abort.abort();
  const outcome = await Promise.race([listening, pause(1_000).then(() => 'still open')]);
  t.equal(outcome, 'ended', 'the listen is over');
  t.equal(sockets.size, 0, 'and holds no socket');
  t.ok(posts <= 1, 'at most the one POST, cut off');
});

t.test('a 401 whose body never ends, while OAuth decides: the body is not buffered, the call fails with the sign-in error and its socket is closed', async (t) => {
  const LIMIT = 256 * 1024 * 1024;
  let written = 0;
  const sockets = new Set<Socket>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    res.writeHead(401, { 'www-authenticate': 'Bearer realm="x"', 'content-type': 'text/html' });
    const chunk = Buffer.alloc(64 * 1024, 'x');
    const pump = (): void => {
      while (written < LIMIT && !res.destroyed) {
        written += chunk.length;
        if (!res.write(chunk)) return void res.once('drain', pump);
      }
    };
    pump();
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))));
  // A token refresh under way: the decision takes a while.
  const auth: HttpAuth = { headers: async () => ({}), refused: () => pause(500).then(() => ({ signIn: 'sign in with coffer mcp auth x' })), signInNeeded: () => null };
  const transport = await createStreamableHttp(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, {}, auth);
  t.teardown(() => transport.close());
  await t.rejects(transport.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'x', arguments: {} } }), { name: 'UpstreamAuthError', message: /coffer mcp auth x/ });
  await pause(200);
  t.ok(written < 16 * 1024 * 1024, `the upstream could send ${written} bytes meanwhile (a few socket buffers, not the body)`);
  t.equal(sockets.size, 0, 'the refused exchange is not drained: its socket is closed');
});

t.test('an upstream that floods pings and never acknowledges the replies gets a bounded number of sockets; replies past the queue are dropped and reported, a call fails with UPSTREAM_BUSY', async (t) => {
  const FLOOD = 1_000;
  const REPLY_LINGER_MS = 1_500;
  let open = 0;
  let most = 0;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      const message = JSON.parse(body) as { id?: unknown; method?: string; params?: { name?: string } };
      // A reply to one of its pings: never acknowledged.
      if (message.method === undefined) return;
      if (message.params?.name === 'flood') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        for (let i = 0; i < FLOOD; i++) res.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: `p${i}`, method: 'ping' })}\n\n`);
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result: { content: [] } }));
    });
  });
  server.on('connection', (socket: Socket) => {
    most = Math.max(most, ++open);
    socket.on('close', () => open--);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))));
  const transport = await createStreamableHttp(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, {});
  transport.lingerMs = REPLY_LINGER_MS;
  const errors: Error[] = [];
  const session = new JsonRpcSession(transport, { onerror: (error) => errors.push(error) });
  t.teardown(() => session.close());
  const busy = (error: Error): boolean => error instanceof RpcError && error.code === JSONRPC.UPSTREAM_BUSY;
  session.request('tools/call', { name: 'flood', arguments: {} }).catch(() => {});
  await waitFor('the sockets all open and a reply refused past the queue', () => open >= MAX_SOCKETS_PER_UPSTREAM && errors.some(busy), REPLY_LINGER_MS).catch(() => {});
  // Time for any socket more to reach the upstream.
  await pause(100);
  t.ok(most <= MAX_SOCKETS_PER_UPSTREAM, `${most} sockets at most, for ${FLOOD} pings`);
  t.ok(errors.some(busy), 'the replies past the queue were dropped, and reported for the log');
  await t.rejects(session.request('tools/call', { name: 'echo', arguments: {} }), { code: JSONRPC.UPSTREAM_BUSY, data: { code: 'UPSTREAM_BUSY' }, message: /retry/ }, 'a call that cannot be sent fails with a stable code, not silently');
  await pause(REPLY_LINGER_MS + 300);
  t.same(await session.request('tools/call', { name: 'echo', arguments: {} }), { content: [] }, 'once the replies are let go, calls are sent again');
});

t.test('legacy SSE: a huge invalid endpoint event fails the connection with a short quote of it, not the whole event', async (t) => {
  const huge = `http://[${'x'.repeat(4 << 20)}`;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.method === 'GET') return void res.writeHead(200, { 'content-type': 'text/event-stream' }).write(`event: endpoint\ndata: ${huge}\n\n`);
    res.writeHead(202).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))));
  const transport = await createLegacySse(`http://127.0.0.1:${(server.address() as AddressInfo).port}/sse`, {});
  t.teardown(() => transport.close());
  const error = await transport.start().then(() => null, (reason: unknown) => reason as Error);
  t.match(error?.message, /^SSE error: invalid endpoint "http:\/\/\[x+… \[\d+ more chars\]"$/, 'it names the endpoint by its start, and says how much was cut');
  t.ok((error?.message.length ?? Infinity) < 400, `the message is short (${error?.message.length} characters for a ${huge.length}-character event)`);
});

t.test('legacy SSE: an endpoint event without a URL fails the connection naming it; nothing is POSTed to the stream itself', async (t) => {
  let posts = 0;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.method === 'GET') return void res.writeHead(200, { 'content-type': 'text/event-stream' }).write('event: endpoint\ndata: \n\n');
    posts += 1;
    res.writeHead(202).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))));
  const transport = await createLegacySse(`http://127.0.0.1:${(server.address() as AddressInfo).port}/sse`, {});
  t.teardown(() => transport.close());
  await t.rejects(transport.start(), /invalid endpoint ""/, 'the connection fails, saying why');
  await transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' }).catch(() => undefined);
  t.equal(posts, 0, 'no POST reached the stream URL');
});
