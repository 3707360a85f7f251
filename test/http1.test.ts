// The actor's HTTP/1.1 client against real local servers: node:http ones, and
// raw sockets for what node:http would not send (close-delimited bodies, broken
// framing, a body cut short, an idle socket closed under a request).
import t, { type Test } from 'tap';
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { connect, createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Http1Response } from '../workers/actor/http1.js';
import { Http1Pool, http1Pool } from '../workers/actor/http1-pool.js';
import { JSONRPC } from '../src/protocol/errors.js';

interface Read {
  text: string;
  complete: boolean;
  error?: Error;
}

function read(res: Http1Response): Promise<Read> {
  return new Promise((resolve) => {
    let text = '';
    let error: Error | undefined;
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => (text += chunk));
    res.on('error', (failure: Error) => (error = failure));
    res.on('close', () => resolve({ text, complete: res.complete, error }));
  });
}

async function listen(server: Server | ReturnType<typeof createNetServer>, t: Test): Promise<URL> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => {
    server.close();
    (server as Server).closeAllConnections?.();
  });
  return new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`);
}

async function serve(t: Test, handle: (req: IncomingMessage, res: ServerResponse) => void): Promise<[URL, Http1Pool]> {
  const url = await listen(createServer(handle), t);
  const pool = await http1Pool(url);
  t.teardown(() => pool.close());
  return [url, pool];
}

/** A server that answers each connection's requests with `answer(connection number, request number)`. */
async function raw(t: Test, answer: (socket: Socket, connection: number, request: number) => void): Promise<[URL, Http1Pool, () => number]> {
  let connections = 0;
  const sockets = new Set<Socket>();
  const server = createNetServer((socket) => {
    const connection = ++connections;
    let requests = 0;
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('data', (data) => {
      if (data.includes('\r\n\r\n')) answer(socket, connection, ++requests);
    });
  });
  const url = await listen(server, t);
  t.teardown(() => sockets.forEach((socket) => socket.destroy()));
  const pool = await http1Pool(url);
  t.teardown(() => pool.close());
  return [url, pool, () => connections];
}

t.test('sends method, path, query, host, headers and body; reads content-length and chunked bodies', async (t) => {
  const [url, pool] = await serve(t, (req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      const echo = JSON.stringify({ method: req.method, url: req.url, host: req.headers.host, n: req.headers['x-n'], length: req.headers['content-length'], body });
      if (req.url?.includes('chunked')) {
        res.write(echo.slice(0, 5));
        res.end(echo.slice(5));
      } else res.end(echo);
    });
  });
  for (const path of ['/mcp?x=1', '/chunked?y=2']) {
    const res = await pool.request('POST', new URL(path, url), { 'x-n': 7, 'content-type': 'application/json' }, '{"é":1}').response;
    t.equal(res.statusCode, 200);
    t.equal(res.headers['transfer-encoding'], path.includes('chunked') ? 'chunked' : undefined, path);
    const { text, complete } = await read(res);
    t.ok(complete, path);
    t.same(JSON.parse(text), { method: 'POST', url: path, host: url.host, n: '7', length: '8', body: '{"é":1}' });
  }
});

t.test('a close-delimited body, 204 and 304 without one, a 1xx skipped', async (t) => {
  const [url, pool] = await raw(t, (socket, _connection, request) => {
    if (request === 1) socket.write('HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n');
    else if (request === 2) socket.write('HTTP/1.1 304 Not Modified\r\nContent-Length: 5\r\n\r\n');
    else socket.end('HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nuntil the end');
  });
  const noContent = await pool.request('GET', url, {}).response;
  t.equal(noContent.statusCode, 204);
  t.same(await read(noContent), { text: '', complete: true, error: undefined });
  const notModified = await pool.request('GET', url, {}).response;
  t.equal(notModified.statusCode, 304);
  t.same(await read(notModified), { text: '', complete: true, error: undefined });
  const res = await pool.request('GET', url, {}).response;
  t.same(await read(res), { text: 'until the end', complete: true, error: undefined });
});

t.test('an SSE body arrives event by event, while the stream is open', async (t) => {
  let stream: ServerResponse | undefined;
  const [url, pool] = await serve(t, (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('data: one\n\n');
    stream = res;
  });
  const res = await pool.request('GET', url, { accept: 'text/event-stream' }).response;
  res.setEncoding('utf8');
  const chunks: string[] = [];
  const done = new Promise((resolve) => res.on('close', resolve));
  await new Promise<void>((resolve) => res.on('data', (chunk: string) => {
    chunks.push(chunk);
    resolve();
  }));
  t.same(chunks, ['data: one\n\n'], 'the first event before the second is written');
  t.notOk(res.complete);
  stream!.end('data: two\n\n');
  await done;
  t.same(chunks.join(''), 'data: one\n\ndata: two\n\n');
  t.ok(res.complete);
});

t.test('keep-alive: sequential requests share a socket, concurrent ones get their own', async (t) => {
  const ports: number[] = [];
  const [url, pool] = await serve(t, (req, res) => {
    ports.push(req.socket.remotePort!);
    setTimeout(() => res.end('ok'), 20);
  });
  for (let i = 0; i < 3; i += 1) await read(await pool.request('GET', url, {}).response);
  t.equal(new Set(ports).size, 1, 'one socket for three requests in turn');
  ports.length = 0;
  await Promise.all([1, 2].map(async () => read(await pool.request('GET', url, {}).response)));
  t.equal(new Set(ports).size, 2, 'a second socket while the first is busy');
});

t.test('a reused socket closed before any answer: a GET is sent again on a new one, a POST fails; never once the answer began', async (t) => {
  const [url, pool, connections] = await raw(t, (socket, connection, request) => {
    if (request === 2 && connection <= 2) return void socket.destroy();
    if (connection === 3 && request === 2) return void socket.end('HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\npart');
    socket.write(`HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n${connection}${request}`);
  });
  t.equal((await read(await pool.request('GET', url, {}).response)).text, '11');
  t.equal((await read(await pool.request('GET', url, {}).response)).text, '21', 'the GET went again, on a new socket');
  t.equal(connections(), 2);
  // The server may have read a POST before it closed: a tools/call is never sent twice.
  await t.rejects(pool.request('POST', url, {}, 'once').response, { code: 'ECONNRESET' }, 'the POST fails as it would with node:http');
  t.equal(connections(), 2, 'and is not sent again');
  t.equal((await read(await pool.request('POST', url, {}, 'next').response)).text, '31', 'the next request opens a socket of its own');
  const broken = await read(await pool.request('GET', url, {}).response);
  t.equal(broken.text, 'part');
  t.notOk(broken.complete, 'a body cut short is not complete');
  t.ok(broken.error, 'and it says why');
  t.equal(connections(), 3, 'not retried: the answer had begun');
});

t.test('a socket let go frees its parser (garbage collection never frees one)', async (t) => {
  const { HTTPParser } = createRequire(import.meta.url)('_http_common') as { HTTPParser: { prototype: { close(): void } } };
  // Sockets of the tests before are let go by now.
  await new Promise((resolve) => setImmediate(resolve));
  const close = HTTPParser.prototype.close;
  let closed = 0;
  HTTPParser.prototype.close = function (this: unknown) {
    closed++;
    return close.call(this);
  };
  t.teardown(() => void (HTTPParser.prototype.close = close));
  const [url, pool] = await raw(t, (socket) => socket.end('HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok'));
  for (let i = 0; i < 5; i++) t.equal((await read(await pool.request('GET', url, {}).response)).text, 'ok');
  await new Promise((resolve) => setImmediate(resolve));
  t.equal(closed, 5, 'one parser closed per socket the server closed');
});

t.test("the server's Keep-Alive timeout: an idle socket is let go a second before it", async (t) => {
  const [url, pool, connections] = await raw(t, (socket, connection) => {
    socket.write(`HTTP/1.1 200 OK\r\nKeep-Alive: timeout=${connection === 1 ? 0 : 2}\r\nContent-Length: 2\r\n\r\nok`);
  });
  await read(await pool.request('GET', url, {}).response);
  await read(await pool.request('GET', url, {}).response);
  t.equal(connections(), 2, 'timeout=0: not kept');
  await reusedThenLetGo(t, url, pool, connections, 2, 'timeout=2');
});

/** A socket kept alive (Keep-Alive: timeout=2) is reused at once, and let go after a second idle: `open` sockets so far. */
async function reusedThenLetGo(t: Test, url: URL, pool: Http1Pool, connections: () => number, open: number, what: string): Promise<void> {
  await read(await pool.request('GET', url, {}).response);
  t.equal(connections(), open, `${what}: reused at once`);
  await new Promise((resolve) => setTimeout(resolve, 1_200));
  await read(await pool.request('GET', url, {}).response);
  t.equal(connections(), open + 1, `${what}: let go after a second idle`);
}

t.test('a reused socket whose answer takes longer than its Keep-Alive idle time is not let go under the request', async (t) => {
  const [url, pool, connections] = await raw(t, (socket, _connection, request) => {
    const answer = (): void => void socket.write('HTTP/1.1 200 OK\r\nKeep-Alive: timeout=2\r\nContent-Length: 2\r\n\r\nok');
    if (request === 2) setTimeout(answer, 1_500);
    else answer();
  });
  t.equal((await read(await pool.request('GET', url, {}).response)).text, 'ok');
  const slow = await read(await pool.request('GET', url, {}).response);
  t.same([slow.text, slow.complete, slow.error], ['ok', true, undefined], 'answered whole after 1.5 s, past the idle second');
  t.equal(connections(), 1, 'on the same socket');
  await reusedThenLetGo(t, url, pool, connections, 1, 'after it');
});

t.test('a Keep-Alive timeout past what a timer holds is kept without a warning per answer', async (t) => {
  const [url, pool, connections] = await raw(t, (socket) => socket.write('HTTP/1.1 200 OK\r\nKeep-Alive: timeout=99999999999\r\nContent-Length: 2\r\n\r\nok'));
  const warnings: Error[] = [];
  const onWarning = (warning: Error): number => warnings.push(warning);
  process.on('warning', onWarning);
  t.teardown(() => void process.off('warning', onWarning));
  for (let i = 0; i < 3; i++) t.same(await read(await pool.request('GET', url, {}).response), { text: 'ok', complete: true, error: undefined });
  await new Promise((resolve) => setImmediate(resolve));
  t.equal(connections(), 1, 'one socket, reused');
  t.same(warnings.map((warning) => warning.name), [], 'no TimeoutOverflowWarning (it goes to daemon.log)');
});

t.test('a fresh socket reset before the answer fails the request', async (t) => {
  const [url, pool, connections] = await raw(t, (socket) => socket.destroy());
  await t.rejects(pool.request('GET', url, {}).response, { code: 'ECONNRESET' });
  t.equal(connections(), 1);
});

t.test('a malformed answer and an oversized header block fail the request', async (t) => {
  const [url, pool] = await raw(t, (socket, connection) => {
    if (connection === 1) socket.write('HTTP/1.1 2OO OK\r\n\r\n');
    else socket.write(`HTTP/1.1 200 OK\r\nX-Big: ${'a'.repeat(17 * 1024)}\r\nContent-Length: 0\r\n\r\n`);
  });
  await t.rejects(pool.request('GET', url, {}).response, { code: 'HPE_INVALID_STATUS' });
  await t.rejects(pool.request('GET', url, {}).response, { code: 'HPE_HEADER_OVERFLOW' });
});

t.test('a switch of protocols (101) nobody asked for fails the request at once, and its socket is not reused', async (t) => {
  const [url, pool, connections] = await raw(t, (socket, connection) => {
    if (connection === 1) socket.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok');
    else socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok');
  });
  const outcome = await Promise.race([pool.request('POST', url, {}, '{}').response.then(() => 'answered', (error: NodeJS.ErrnoException) => error.code), new Promise((resolve) => setTimeout(() => resolve('still waiting'), 1_000))]);
  t.equal(outcome, 'HPE_UNEXPECTED_UPGRADE');
  t.same(await read(await pool.request('GET', url, {}).response), { text: 'ok', complete: true, error: undefined }, 'the next request is answered');
  t.equal(connections(), 2, 'on a socket of its own');
});

t.test('a body cut mid-way: complete false, with an error', async (t) => {
  const [url, pool] = await raw(t, (socket) => socket.end('HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhello'));
  const result = await read(await pool.request('GET', url, {}).response);
  t.equal(result.text, 'hello');
  t.notOk(result.complete);
  t.ok(result.error);
});

t.test('destroying a response mid-body closes its socket; the next request opens another', async (t) => {
  const ports: number[] = [];
  const closed: number[] = [];
  const [url, pool] = await serve(t, (req, res) => {
    const port = req.socket.remotePort!;
    ports.push(port);
    req.socket.on('close', () => closed.push(port));
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('data: one\n\n');
    if (ports.length > 1) res.end();
  });
  const res = await pool.request('GET', url, {}).response;
  res.on('data', () => res.destroy());
  await once(res, 'close');
  t.notOk(res.complete);
  await read(await pool.request('GET', url, {}).response);
  t.equal(ports.length, 2);
  t.not(ports[0], ports[1], 'the destroyed socket was not reused');
  t.same(closed.slice(0, 1), [ports[0]], 'and the server saw it close');
});

t.test("destroying an answer that had ended leaves its socket alone, by then another request's", async (t) => {
  const [url, pool] = await serve(t, (req, res) => (req.url === '/slow' ? setTimeout(() => res.end('slow'), 50) : res.end('fast')));
  const first = await pool.request('GET', url, {}).response;
  await new Promise((resolve) => setTimeout(resolve, 20));
  const second = pool.request('GET', new URL('/slow', url), {});
  first.destroy();
  t.equal((await read(await second.response)).text, 'slow');
});

t.test('destroying a request before its answer rejects it and closes it', async (t) => {
  const [url, pool] = await serve(t, () => {});
  const req = pool.request('GET', url, {});
  const closed = once(req, 'close');
  req.destroy();
  await t.rejects(req.response, { code: 'ECONNRESET' });
  await closed;
});

t.test('a header that would split the request is refused', async (t) => {
  const [url, pool] = await serve(t, (_req, res) => res.end());
  t.throws(() => pool.request('GET', url, { 'x-a': 'b\r\nx-evil: 1' }), TypeError);
  t.throws(() => pool.request('GET', url, { 'x-a\r\nx-evil': '1' }), TypeError, 'in the name too');
  t.throws(() => pool.request('GET', url, { 'x a': '1' }), TypeError, 'a name is one token');
  t.throws(() => pool.request('GET', url, { 'x-a': 'caf\u0100' }), TypeError, 'a value past Latin-1 could not be sent as it is');
});

t.test('close() ends the idle sockets and the requests in flight', async (t) => {
  let closed = 0;
  const [url, pool] = await serve(t, (req, res) => {
    req.socket.on('close', () => (closed += 1));
    if (req.url === '/mcp') res.end('ok');
  });
  await read(await pool.request('GET', url, {}).response);
  const hanging = pool.request('GET', new URL('/hang', url), {});
  await new Promise((resolve) => setTimeout(resolve, 50));
  pool.close();
  await t.rejects(hanging.response, { code: 'ECONNRESET' });
  await new Promise((resolve) => setTimeout(resolve, 50));
  t.equal(closed, 2);
  t.throws(() => pool.request('GET', url, {}), /Not connected/);
});

/** A self-signed certificate for localhost, made by openssl; undefined where there is no openssl. */
function selfSigned(): { key: Buffer; cert: Buffer } {
  const dir = mkdtempSync(join(tmpdir(), 'coffer-http1-'));
  const [key, cert] = [join(dir, 'key.pem'), join(dir, 'cert.pem')];
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost'], { stdio: 'ignore' });
  return { key: readFileSync(key), cert: readFileSync(cert) };
}

const credentials = selfSigned();

t.test('https, with a self-signed certificate', async (t) => {
  const ports: number[] = [];
  const server = createHttpsServer(credentials, (req, res) => {
    ports.push(req.socket.remotePort!);
    res.end(`${req.headers.host} ${(req.socket as import('node:tls').TLSSocket).alpnProtocol}`);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => server.close());
  const url = new URL(`https://localhost:${(server.address() as AddressInfo).port}/mcp`);
  const pool = await http1Pool(url, { ca: credentials.cert });
  t.teardown(() => pool.close());
  for (let i = 0; i < 2; i += 1) t.equal((await read(await pool.request('GET', url, {}).response)).text, `${url.host} http/1.1`);
  t.equal(new Set(ports).size, 1, 'kept alive');
  const strict = await http1Pool(url);
  t.teardown(() => strict.close());
  await t.rejects(strict.request('GET', url, {}).response, 'an unknown certificate is refused');
});

t.test('at most maxSockets sockets: a request past them waits its turn (leaving if destroyed), past maxWaiting it is refused', async (t) => {
  const ports = new Set<number>();
  const [url] = await serve(t, (req, res) => {
    ports.add(req.socket.remotePort!);
    setTimeout(() => res.end(req.url), 50);
  });
  const pool = new Http1Pool(() => connect({ host: '127.0.0.1', port: Number(url.port) }), url.host, 1, 2, 0);
  t.teardown(() => pool.close());
  const first = pool.request('GET', new URL('/1', url), {});
  const gone = pool.request('GET', new URL('/gone', url), {});
  const third = pool.request('GET', new URL('/3', url), {});
  t.throws(() => pool.request('GET', url, {}), { code: JSONRPC.UPSTREAM_BUSY, data: { code: 'UPSTREAM_BUSY' }, message: /retry when earlier calls have finished/ }, 'a third waiting one is refused at once');
  gone.destroy();
  await t.rejects(gone.response, { code: 'ECONNRESET' }, 'a waiting request destroyed fails');
  t.equal((await read(await first.response)).text, '/1');
  t.equal((await read(await third.response)).text, '/3', 'the next one waiting went once the socket was free');
  t.equal(ports.size, 1, 'on the one socket');
  const waiting = [pool.request('GET', url, {}), pool.request('GET', url, {})];
  pool.close();
  for (const request of waiting) await t.rejects(request.response, { code: 'ECONNRESET' }, 'close() fails the requests waiting too');
});

t.test('calls and streams leave keptForBrief sockets to brief requests: a reply goes out while the calls it answers hold the rest', async (t) => {
  const held: ServerResponse[] = [];
  const [url] = await serve(t, (req, res) => {
    if (req.url === '/call') held.push(res);
    else res.end(req.url);
  });
  const pool = new Http1Pool(() => connect({ host: '127.0.0.1', port: Number(url.port) }), url.host, 3, 4, 1);
  t.teardown(() => pool.close());
  const calls = [pool.request('POST', new URL('/call', url), {}, '{}'), pool.request('POST', new URL('/call', url), {}, '{}')];
  while (held.length < 2) await new Promise((resolve) => setTimeout(resolve, 5));
  const third = pool.request('POST', new URL('/call', url), {}, '{}');
  const reply = pool.request('POST', new URL('/reply', url), {}, '{}', true);
  t.equal((await read(await reply.response)).text, '/reply', 'the reply is sent at once, on the socket the calls leave to it');
  await new Promise((resolve) => setTimeout(resolve, 50));
  t.equal(held.length, 2, 'a third call waits: two of three sockets is what calls may hold');
  held.shift()!.end('done');
  t.equal((await read(await calls[0]!.response)).text, 'done');
  while (held.length < 2) await new Promise((resolve) => setTimeout(resolve, 5));
  t.pass('once a call is over, the one waiting goes');
  for (const res of held) res.end('done');
  t.equal((await read(await third.response)).text, 'done');
  t.equal((await read(await calls[1]!.response)).text, 'done');
});
