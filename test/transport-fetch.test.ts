// The shim's fetch against a real local HTTP server: a session's requests
// leave no abort listeners gathering on the session's signal, closing the
// session aborts what is still open (an SSE answer being read included), and
// answers keep their status, headers and body.
import { getEventListeners } from 'node:events';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { openRequests, transportFetch } from '../src/shim/transport-fetch.js';

const EVENT = 'event: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}\n\n';
const open = new Set<ServerResponse>();
const server = createServer((request, response) => {
  request.resume();
  request.on('end', () => {
    if (request.url === '/json') return void response.writeHead(200, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","id":1,"result":{}}');
    if (request.url === '/missing') return void response.writeHead(404, { 'content-type': 'application/json', 'x-why': 'gone' }).end('{"error":"gone"}');
    if (request.url === '/moved') return void response.writeHead(307, { location: '/json' }).end();
    if (request.url === '/cut') return void response.destroy();
    response.writeHead(200, { 'content-type': request.url === '/sse-upper' ? 'Text/Event-Stream; charset=utf-8' : 'text/event-stream', 'x-stream': 'yes' });
    response.write(EVENT);
    if (request.url === '/sse-ends') return void response.end(EVENT);
    open.add(response);
    response.on('close', () => open.delete(response));
  });
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
t.teardown(() => {
  for (const response of open) response.destroy();
  server.close();
});

const post = (path: string, session: AbortSignal, extra: RequestInit = {}) =>
  transportFetch(`${base}${path}`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' }, signal: session, ...extra });

t.test('2,000 requests of one session leave at most its own one abort listener on its signal', async (t) => {
  const session = new AbortController();
  let most = 0;
  for (let i = 0; i < 2_000; i++) {
    const path = i % 10 === 0 ? '/sse-ends' : '/json';
    await (await post(path, session.signal)).text();
    if (i % 50 === 0) most = Math.max(most, getEventListeners(session.signal, 'abort').length);
  }
  t.ok(most <= 1, `at most ${most} listener(s) on the session's signal`);
  t.equal(openRequests(session.signal), 0, 'every request released once its answer was read');
});

t.test('a request is open while its SSE answer streams, and released however it ends', async (t) => {
  const session = new AbortController();
  const first = await post('/sse', session.signal);
  const second = await post('/sse-upper', session.signal);
  t.equal(openRequests(session.signal), 2, 'both streams open, whatever the media type\'s case');
  await first.body!.cancel();
  t.ok(await waitUntil(() => openRequests(session.signal) === 1), 'a stream its reader gave up is released');
  await second.body!.getReader().read();
  await t.rejects(post('/cut', session.signal), 'a connection cut before any answer fails');
  t.equal(openRequests(session.signal), 1, 'and is released');
  session.abort(new Error('the transport closed'));
  t.equal(openRequests(session.signal), 0, 'closing the session releases what was open');
});

t.test('closing the session aborts an SSE answer being read', async (t) => {
  const session = new AbortController();
  const response = await post('/sse', session.signal);
  t.equal(response.status, 200);
  t.equal(response.headers.get('x-stream'), 'yes', 'headers kept');
  const reader = response.body!.getReader();
  let text = '';
  while (text.length < EVENT.length) text += new TextDecoder().decode((await reader.read()).value);
  t.equal(text, EVENT, 'the first event arrives');
  session.abort(new Error('the transport closed'));
  await t.rejects(reader.read(), 'the open stream ends with the session');
});

t.test('an SSE answer read to its end keeps its bytes, and the session still closes cleanly', async (t) => {
  const session = new AbortController();
  const response = await post('/sse-ends', session.signal);
  t.equal(await response.text(), EVENT + EVENT);
  session.abort(new Error('the transport closed'));
  await t.rejects(post('/json', session.signal), 'a request of a closed session fails at once');
});

t.test('redirects and errors come as they are', async (t) => {
  const session = new AbortController();
  const moved = await post('/moved', session.signal, { redirect: 'manual' });
  t.equal(moved.status, 307);
  t.equal(moved.headers.get('location'), '/json');
  const missing = await post('/missing', session.signal);
  t.equal(missing.status, 404);
  t.equal(missing.headers.get('x-why'), 'gone');
  t.same(await missing.json(), { error: 'gone' });
});

async function waitUntil(check: () => boolean): Promise<boolean> {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  return check();
}
