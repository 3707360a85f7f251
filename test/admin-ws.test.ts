// The admin WebSocket /admin/ws: a real uWS app with registerAdminWs, a real
// EventBus, stub refresh/test (the daemon's business), real `ws` clients and a
// raw TCP client that stops reading. Then, once the daemon wires it, end to end.
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import net from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import t from 'tap';
import WebSocket from 'ws';
import { registerAdminWs, type AdminDeps, type AdminWs } from '../src/admin/admin-ws.js';
import type { AdminWsOptions } from '../src/admin/ws-options.js';
import { AdminConnectionError, connectAdmin } from '../src/admin/client.js';
import { EventFilter, eventServer, parseClientMessage } from '../src/admin/messages.js';
import { EventBus } from '../src/daemon/event-bus.js';
import { uws, type us_listen_socket } from '../src/http/uws.js';
import { Logger } from '../src/log.js';
import type { AdminServerMessage, ResultMessage } from '../src/protocol/admin.js';
import { CofferError } from '../src/protocol/errors.js';
import type { CofferEvent } from '../src/protocol/events.js';
import { startGateway } from './helpers/gateway.js';
import { sleep, waitFor } from './helpers/wait.js';
import { stdioFixture } from './fixtures/fixture-servers.js';

const LOG_DIR = mkdtempSync(join(tmpdir(), 'coffer-admin-ws-'));
t.teardown(() => rmSync(LOG_DIR, { recursive: true, force: true }));

const at = () => new Date().toISOString();

// ---------------------------------------------------------------- harness

interface Harness {
  port: number;
  bus: EventBus;
  admin: AdminWs;
  token: string;
  setToken(token: string): void;
  url: string;
  close(): void;
}

const VIEW = { server: 'good', tools: { state: 'live', items: [{ key: 'echo', name: 'echo', live: true, enabled: true }] } };

async function startAdmin(options: Partial<AdminWsOptions> = {}): Promise<Harness> {
  const app = uws.App();
  const bus = new EventBus();
  let port = 0;
  let token = randomBytes(24).toString('hex');
  const deps: AdminDeps = {
    bus,
    token: () => token,
    port: () => port,
    async refresh(server) {
      switch (server) {
        case 'good':
          await sleep(20);
          return VIEW;
        case 'slow':
          await sleep(350);
          return { ...VIEW, server: 'slow' };
        case 'down':
          await sleep(10);
          throw new CofferError('UPSTREAM_UNAVAILABLE', "server 'down' is not reachable", { known: [{ capability_type: 'tool', capability_key: 'echo', enabled: true, last_seen_at: at() }] });
        case 'hung':
          throw new CofferError('UPSTREAM_TIMEOUT', "server 'hung' did not answer within 300 ms", { known: [] });
        case 'buggy':
          throw new Error('a bug with a secret path /home/x');
        default:
          throw new CofferError('RESOURCE_NOT_FOUND', `no server named '${server}'`);
      }
    },
    async test(server) {
      if (server === 'good') return { ok: true, latency_ms: 12, protocol_version: '2025-06-18', server_info: { name: 'good', version: '1' }, capabilities: { tools: 1, resources: null, prompts: null } };
      throw new CofferError('RESOURCE_NOT_FOUND', `no server named '${server}'`);
    },
    // Errors (the 'buggy' refresh) go to a file, not the test output.
    log: new Logger(join(LOG_DIR, 'daemon.log'), 'error'),
  };
  const admin = registerAdminWs(app, deps, { progressIntervalMs: 100, ...options });
  app.any('/*', (res) => {
    res.writeStatus('404 Not Found').end('not found');
  });
  const socket = await new Promise<us_listen_socket | false>((resolve) => app.listen('127.0.0.1', 0, resolve));
  if (!socket) throw new Error('cannot listen');
  port = uws.us_socket_local_port(socket);
  return {
    port,
    bus,
    admin,
    get token() {
      return token;
    },
    setToken(next) {
      token = next;
    },
    url: `ws://127.0.0.1:${port}/admin/ws`,
    close() {
      admin.close();
      uws.us_listen_socket_close(socket);
    },
  };
}

/** A `ws` client that records every message, with helpers to wait for one. */
interface Probe {
  ws: WebSocket;
  messages: AdminServerMessage[];
  next(predicate: (message: AdminServerMessage) => boolean, timeoutMs?: number): Promise<AdminServerMessage>;
  send(value: unknown): void;
  closed: Promise<{ code: number; reason: string }>;
  upgradeHeaders: Record<string, string | string[] | undefined>;
}

function probe(url: string, options: { headers?: Record<string, string>; protocols?: string[] } = {}): Promise<Probe> {
  const ws = new WebSocket(url, options.protocols ?? [], { headers: options.headers ?? {} });
  const messages: AdminServerMessage[] = [];
  const waiters = new Set<{ predicate: (message: AdminServerMessage) => boolean; resolve: (message: AdminServerMessage) => void; from: number }>();
  let upgradeHeaders: Probe['upgradeHeaders'] = {};
  ws.on('upgrade', (response) => (upgradeHeaders = response.headers));
  ws.on('message', (data) => {
    const message = JSON.parse(data.toString()) as AdminServerMessage;
    messages.push(message);
    for (const waiter of waiters) {
      if (waiter.predicate(message)) {
        waiters.delete(waiter);
        waiter.resolve(message);
      }
    }
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })));
  return new Promise((resolve, reject) => {
    ws.once('error', reject);
    ws.once('unexpected-response', (_request, response) => reject(new Error(`HTTP ${response.statusCode}`)));
    ws.once('open', () =>
      resolve({
        ws,
        messages,
        get upgradeHeaders() {
          return upgradeHeaders;
        },
        closed,
        send: (value) => ws.send(typeof value === 'string' ? value : JSON.stringify(value)),
        next(predicate, timeoutMs = 5_000) {
          const found = messages.find(predicate);
          if (found) return Promise.resolve(found);
          return new Promise((resolveMessage, rejectMessage) => {
            const waiter = { predicate, resolve: resolveMessage, from: messages.length };
            waiters.add(waiter);
            setTimeout(() => {
              if (waiters.delete(waiter)) rejectMessage(new Error(`no matching message within ${timeoutMs} ms; got ${JSON.stringify(messages.slice(-5))}`));
            }, timeoutMs);
          });
        },
      }),
    );
  });
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const resultOf = (id: string) => (message: AdminServerMessage) => (message.type === 'result' || message.type === 'error') && message.id === id;

/** The status code of a refused upgrade. */
function upgradeStatus(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    ws.once('unexpected-response', (_request, response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
      ws.terminate();
    });
    ws.once('open', () => {
      ws.terminate();
      reject(new Error('upgrade was accepted'));
    });
    ws.once('error', () => undefined);
  });
}

// ---------------------------------------------------------------- pure part

t.test('parseClientMessage accepts the four commands and says why it rejects', async (t) => {
  t.same(parseClientMessage('{"type":"ping","id":"1"}'), { ok: true, command: { type: 'ping', id: '1' } });
  t.same(parseClientMessage('{"type":"refresh","id":"a","server":"files"}'), { ok: true, command: { type: 'refresh', id: 'a', server: 'files' } });
  t.same(parseClientMessage('{"type":"test","id":"a","server":"files"}'), { ok: true, command: { type: 'test', id: 'a', server: 'files' } });
  t.same(parseClientMessage('{"type":"subscribe","id":"s","types":["health"],"servers":["a"]}'), { ok: true, command: { type: 'subscribe', id: 's', types: ['health'], servers: ['a'] } });
  t.same(parseClientMessage('{"type":"subscribe","id":"s"}'), { ok: true, command: { type: 'subscribe', id: 's' } });
  const rejects: Array<[string, RegExp, string | undefined]> = [
    ['not json', /not valid JSON/, undefined],
    ['[1,2]', /JSON object/, undefined],
    ['null', /JSON object/, undefined],
    ['{"id":"1"}', /'type' must be a string/, '1'],
    ['{"type":"launch","id":"1"}', /unknown type 'launch'/, '1'],
    ['{"type":"ping"}', /'id' must be/, undefined],
    ['{"type":"ping","id":7}', /'id' must be/, undefined],
    [`{"type":"ping","id":"${'x'.repeat(129)}"}`, /'id' must be/, undefined],
    ['{"type":"refresh","id":"1"}', /'server' must be/, '1'],
    ['{"type":"refresh","id":"1","server":5}', /'server' must be/, '1'],
    ['{"type":"test","id":"1","server":""}', /'server' must be/, '1'],
    ['{"type":"subscribe","id":"1","types":"health"}', /'types' must be an array/, '1'],
    ['{"type":"subscribe","id":"1","types":["weather"]}', /unknown event type 'weather'/, '1'],
    ['{"type":"subscribe","id":"1","servers":[1]}', /'servers' must be/, '1'],
  ];
  for (const [text, message, id] of rejects) {
    const parsed = parseClientMessage(text);
    t.equal(parsed.ok, false, text);
    if (parsed.ok) continue;
    t.equal(parsed.error.code, 'BAD_REQUEST', text);
    t.match(parsed.error.message, message, text);
    t.equal(parsed.id, id, `${text}: id`);
  }
});

t.test('EventFilter narrows by type and server; empty means all', async (t) => {
  const health: CofferEvent = { type: 'health', server: 'a', state: 'ready', last_error: null, at: at() };
  const healthB: CofferEvent = { ...health, server: 'b' };
  const global: CofferEvent = { type: 'list_changed', server: null, kind: 'tools', at: at() };
  const audit: CofferEvent = { type: 'audit', entry: { id: 1, at: at(), actor: 'api', event_type: 'server_added', server: 'b', payload: {} } };
  const invocation: CofferEvent = { type: 'invocation', invocation: { at: at(), server: 'a', kind: 'tool', key: 'echo', duration_ms: 1, status: 'ok', session: 's', error_code: null } };
  t.equal(eventServer(audit), 'b');
  t.equal(eventServer(invocation), 'a');
  t.equal(eventServer(global), null);
  const filter = new EventFilter();
  for (const event of [health, healthB, global, audit, invocation]) t.ok(filter.matches(event), `all: ${event.type}`);
  t.same(filter.set(['health', 'list_changed'], ['a']), { types: ['health', 'list_changed'], servers: ['a'] });
  t.same([health, healthB, global, audit, invocation].map((event) => filter.matches(event)), [true, false, true, false, false]);
  t.same(filter.set([], undefined), { types: null, servers: null });
  t.ok(filter.matches(audit));
});

// ---------------------------------------------------------------- transport

t.test('upgrade: Host and Origin must be loopback, the token is required', async (t) => {
  const h = await startAdmin();
  t.teardown(() => h.close());

  t.equal(await upgradeStatus(h.url, { ...bearer(h.token), host: 'evil.example:' + h.port }), 403, 'foreign Host');
  t.equal(await upgradeStatus(h.url, { ...bearer(h.token), host: '127.0.0.1:' + (h.port + 1) }), 403, 'wrong port in Host');
  t.equal(await upgradeStatus(h.url, { ...bearer(h.token), origin: 'http://evil.example' }), 403, 'foreign Origin');
  t.equal(await upgradeStatus(h.url.replace('/admin/ws', '/admin/other'), bearer(h.token)), 404, 'other paths are not the admin socket');

  for (const [label, url, headers, protocols] of [
    ['no token', h.url, {}, []],
    ['wrong token', h.url, bearer('x'.repeat(h.token.length)), []],
    ['wrong token of another length', h.url, bearer('short'), []],
    ['token in the query only', `${h.url}?token=${h.token}`, {}, []],
    ['wrong subprotocol token', h.url, {}, ['coffer.v1', 'coffer.token.nope']],
  ] as Array<[string, string, Record<string, string>, string[]]>) {
    const client = await probe(url, { headers, protocols });
    const closed = await client.closed;
    t.equal(closed.code, 4401, `${label}: 4401`);
    t.match(closed.reason, /token/, `${label}: reason says why`);
    t.same(client.messages, [], `${label}: nothing was streamed`);
  }
  t.equal(h.admin.stats().clients, 0);

  const viaHeader = await probe(h.url, { headers: { ...bearer(h.token), origin: `http://localhost:${h.port}` } });
  viaHeader.send({ type: 'ping', id: 'p1' });
  const pong = (await viaHeader.next(resultOf('p1'))) as ResultMessage;
  t.equal(pong.ok, true, 'Bearer header works (with a loopback Origin)');
  t.equal(viaHeader.ws.protocol, '', 'no subprotocol offered, none echoed');

  const viaProtocol = await probe(h.url, { protocols: ['coffer.v1', `coffer.token.${h.token}`] });
  t.equal(viaProtocol.ws.protocol, 'coffer.v1', 'the fixed protocol name is echoed');
  t.notMatch(JSON.stringify(viaProtocol.upgradeHeaders), h.token, 'the token is never echoed');
  viaProtocol.send({ type: 'ping', id: 'p2' });
  t.equal(((await viaProtocol.next(resultOf('p2'))) as ResultMessage).ok, true, 'subprotocol token works');
  t.equal(h.admin.stats().clients, 2);

  // Our own client, and how it reports failures.
  const admin = await connectAdmin({ port: h.port, token: h.token });
  t.equal((await admin.request({ type: 'ping' })).ok, true);
  await admin.close();
  const refused = await connectAdmin({ port: h.port, token: 'wrong' }).catch((error: unknown) => error);
  t.ok(refused instanceof AdminConnectionError);
  t.equal((refused as AdminConnectionError).code, 4401);
  const unreachable = await connectAdmin({ port: 1, token: 'x' }).catch((error: unknown) => error);
  t.equal((unreachable as AdminConnectionError).code, 'ECONNREFUSED');
  t.ok((unreachable as AdminConnectionError).unreachable);

  viaHeader.ws.close();
  viaProtocol.ws.close();
});

t.test('events stream as they happen; subscribe narrows them', async (t) => {
  const h = await startAdmin();
  t.teardown(() => h.close());
  const a = await probe(h.url, { headers: bearer(h.token) });
  const b = await probe(h.url, { headers: bearer(h.token) });

  const health: CofferEvent = { type: 'health', server: 'files', state: 'ready', last_error: null, at: at() };
  h.bus.publish(health);
  t.same(await a.next((m) => m.type === 'event'), { type: 'event', event: health }, 'client a gets the event');
  t.same(await b.next((m) => m.type === 'event'), { type: 'event', event: health }, 'client b too');

  a.send({ type: 'subscribe', id: 's1', types: ['server', 'list_changed'], servers: ['files'] });
  t.same(await a.next(resultOf('s1')), { type: 'result', id: 's1', ok: true, data: { types: ['server', 'list_changed'], servers: ['files'] } });
  const events: CofferEvent[] = [
    { type: 'health', server: 'files', state: 'backoff', last_error: 'gone', at: at() },
    { type: 'server', action: 'added', server: 'other', at: at() },
    { type: 'server', action: 'updated', server: 'files', at: at() },
    { type: 'list_changed', server: null, kind: 'tools', at: at() },
    { type: 'preference', server: 'files', capability_type: 'tool', capability_key: 'echo', enabled: false, at: at() },
  ];
  for (const event of events) h.bus.publish(event);
  h.bus.publish({ type: 'recovered', server: 'files', kind: 'tools', at: at() });
  await b.next((m) => m.type === 'event' && m.event.type === 'recovered');
  // a's last matching event is the list_changed; b (unfiltered) got all of them.
  await sleep(50);
  t.same(
    a.messages.filter((m) => m.type === 'event').map((m) => (m as { event: CofferEvent }).event),
    [health, events[2], events[3]],
    'a got only server/list_changed events of files (and the gateway-wide one)',
  );
  t.equal(b.messages.filter((m) => m.type === 'event').length, 1 + events.length + 1, 'b got everything');

  a.send({ type: 'subscribe', id: 's2', types: [] });
  t.same(await a.next(resultOf('s2')), { type: 'result', id: 's2', ok: true, data: { types: null, servers: null } }, 'empty = all again');
  const invocation: CofferEvent = { type: 'invocation', invocation: { at: at(), server: 'x', kind: 'tool', key: 'k', duration_ms: 3, status: 'ok', session: 's', error_code: null } };
  h.bus.publish(invocation);
  t.same(await a.next((m) => m.type === 'event' && m.event.type === 'invocation'), { type: 'event', event: invocation });

  a.ws.close();
  b.ws.close();
});

t.test('refresh and test: progress, then the result or the error envelope', async (t) => {
  const h = await startAdmin();
  t.teardown(() => h.close());
  const c = await probe(h.url, { headers: bearer(h.token) });

  c.send({ type: 'refresh', id: 'r1', server: 'good' });
  const r1 = (await c.next(resultOf('r1'))) as ResultMessage;
  t.same(r1, { type: 'result', id: 'r1', ok: true, data: VIEW });
  const r1Messages = c.messages.filter((m) => 'id' in m && m.id === 'r1');
  t.equal(r1Messages[0]!.type, 'progress', 'progress comes first');
  t.match(r1Messages[0], { type: 'progress', id: 'r1', stage: 'started', message: /refreshing 'good'/, elapsed_ms: 0 });
  t.equal(r1Messages.at(-1)!.type, 'result', 'the result comes last');

  c.send({ type: 'refresh', id: 'r2', server: 'slow' });
  await c.next(resultOf('r2'));
  const r2Progress = c.messages.filter((m) => m.type === 'progress' && m.id === 'r2');
  t.ok(r2Progress.length >= 3, `a slow refresh reports while it waits (${r2Progress.length} progress messages)`);
  t.match(r2Progress[1], { stage: 'waiting', message: /still waiting/ });

  c.send({ type: 'refresh', id: 'r3', server: 'down' });
  t.match(await c.next(resultOf('r3')), {
    type: 'result',
    id: 'r3',
    ok: false,
    error: { code: 'UPSTREAM_UNAVAILABLE', message: /not reachable/, details: { known: [{ capability_key: 'echo', enabled: true }] } },
  });
  c.send({ type: 'refresh', id: 'r4', server: 'hung' });
  t.match(await c.next(resultOf('r4')), { ok: false, error: { code: 'UPSTREAM_TIMEOUT', details: { known: [] } } });
  c.send({ type: 'refresh', id: 'r5', server: 'nope' });
  t.match(await c.next(resultOf('r5')), { ok: false, error: { code: 'RESOURCE_NOT_FOUND' } });
  c.send({ type: 'refresh', id: 'r6', server: 'buggy' });
  const r6 = (await c.next(resultOf('r6'))) as ResultMessage;
  t.match(r6, { ok: false, error: { code: 'INTERNAL', message: /daemon log/ } });
  t.notMatch(JSON.stringify(r6), /secret path/, 'an internal error does not leak its message');

  c.send({ type: 'test', id: 't1', server: 'good' });
  t.match(await c.next(resultOf('t1')), { ok: true, data: { ok: true, latency_ms: 12 } });
  t.match(
    c.messages.find((m) => m.type === 'progress' && m.id === 't1'),
    { stage: 'started', message: /testing 'good'/ },
  );
  c.send({ type: 'test', id: 't2', server: 'nope' });
  t.match(await c.next(resultOf('t2')), { ok: false, error: { code: 'RESOURCE_NOT_FOUND' } });

  // Two at once, answered independently; a reused id while in flight is refused.
  c.send({ type: 'refresh', id: 'x', server: 'slow' });
  c.send({ type: 'refresh', id: 'x', server: 'good' });
  t.match(await c.next((m) => m.type === 'error' && m.id === 'x'), { error: { code: 'BAD_REQUEST', message: /still running/ } });
  t.match(await c.next((m) => m.type === 'result' && m.id === 'x'), { ok: true, data: { server: 'slow' } });

  // Through our client, with per-request progress.
  const admin = await connectAdmin({ port: h.port, token: h.token });
  const progress: string[] = [];
  const result = await admin.request({ type: 'refresh', server: 'slow' }, { onProgress: (p) => progress.push(p.stage) });
  t.equal(result.ok, true);
  t.equal(progress[0], 'started');
  t.ok(progress.includes('waiting'));
  t.match(await admin.request({ type: 'refresh', server: 'down' }), { ok: false, error: { code: 'UPSTREAM_UNAVAILABLE' } });
  t.match(await admin.request({ type: 'refresh', server: '' }), { ok: false, error: { code: 'BAD_REQUEST' } }, 'a rejected frame resolves as ok:false');
  await admin.close();
  c.ws.close();
});

t.test('bad frames get an error and the socket stays usable; abuse closes it', async (t) => {
  const h = await startAdmin({ badFrameLimit: 20 });
  t.teardown(() => h.close());
  const c = await probe(h.url, { headers: bearer(h.token) });
  const errors = () => c.messages.filter((m) => m.type === 'error');

  c.send('this is not json');
  c.ws.send(Buffer.from([1, 2, 3]), { binary: true });
  c.send({ type: 'launch', id: 'u1' });
  c.send({ type: 'refresh', id: 'w1', server: 42 });
  c.send({ type: 'ping' });
  c.send({ type: 'ping', id: 'big', padding: 'x'.repeat(100 * 1024) });
  await waitFor('6 errors', () => errors().length >= 6, 5_000);
  t.match(errors(), [
    { type: 'error', error: { code: 'BAD_REQUEST', message: /not valid JSON/ } },
    { type: 'error', error: { code: 'BAD_REQUEST', message: /binary/ } },
    { type: 'error', id: 'u1', error: { code: 'BAD_REQUEST', message: /unknown type 'launch'/ } },
    { type: 'error', id: 'w1', error: { code: 'BAD_REQUEST', message: /'server' must be/ } },
    { type: 'error', error: { code: 'BAD_REQUEST', message: /'id' must be/ } },
    { type: 'error', error: { code: 'BAD_REQUEST', message: /over the 65536-byte limit/ } },
  ]);
  c.send({ type: 'ping', id: 'after' });
  t.match(await c.next(resultOf('after')), { ok: true, data: { pong: true } }, 'still usable');
  h.bus.publish({ type: 'server', action: 'added', server: 'z', at: at() });
  await c.next((m) => m.type === 'event');

  // Past the hard limit uWS closes the socket itself.
  const huge = await probe(h.url, { headers: bearer(h.token) });
  huge.send({ type: 'ping', id: 'huge', padding: 'x'.repeat(300 * 1024) });
  // uWS drops the connection without a close frame: the client sees 1006.
  t.ok([1006, 1009].includes((await huge.closed).code), 'a frame over 256 KiB closes the socket');

  // Abuse: more than 20 bad frames in the window.
  const abuser = await probe(h.url, { headers: bearer(h.token) });
  for (let i = 0; i < 25; i++) abuser.send('garbage');
  const closed = await abuser.closed;
  t.equal(closed.code, 1008);
  t.match(closed.reason, /too many bad frames/);
  t.equal(abuser.messages.length, 20, 'answered the first 20');

  c.send({ type: 'ping', id: 'still' });
  t.match(await c.next(resultOf('still')), { ok: true }, 'other clients are unaffected');
  c.ws.close();
});

t.test('token rotation closes sockets opened with the old token; close() says going away', async (t) => {
  const h = await startAdmin();
  let closedOnce = false;
  t.teardown(() => {
    if (!closedOnce) h.close();
  });
  const old = await probe(h.url, { headers: bearer(h.token) });
  h.setToken(randomBytes(24).toString('hex'));
  h.bus.publish({ type: 'server', action: 'added', server: 'z', at: at() });
  const closed = await old.closed;
  t.equal(closed.code, 4401);
  t.match(closed.reason, /rotated/);
  t.equal(old.messages.length, 0, 'the event after rotation was not sent to the old client');

  // Rotation with no traffic at all is noticed by the periodic sweep.
  const idle = await probe(h.url, { headers: bearer(h.token) });
  h.setToken(randomBytes(24).toString('hex'));
  t.equal((await idle.closed).code, 4401);

  const a = await probe(h.url, { headers: bearer(h.token) });
  const b = await connectAdmin({ port: h.port, token: h.token });
  h.close();
  closedOnce = true;
  t.same(await a.closed, { code: 1001, reason: 'coffer daemon is shutting down' });
  t.equal((await b.closed).code, 1001);
  t.equal(h.admin.stats().clients, 0);
  h.admin.close();
});

// ---------------------------------------------------------------- backpressure

/** A client that upgrades by hand and then never reads its socket. */
async function stalledClient(port: number, token: string): Promise<net.Socket> {
  const socket = net.connect(port, '127.0.0.1');
  await once(socket, 'connect');
  socket.write(
    [
      'GET /admin/ws HTTP/1.1',
      `Host: 127.0.0.1:${port}`,
      'Upgrade: websocket',
      'Connection: Upgrade',
      `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}`,
      'Sec-WebSocket-Version: 13',
      `Authorization: Bearer ${token}`,
      '',
      '',
    ].join('\r\n'),
  );
  let head = '';
  while (!head.includes('\r\n\r\n')) {
    const [chunk] = (await once(socket, 'data')) as [Buffer];
    head += chunk.toString('latin1');
  }
  if (!head.startsWith('HTTP/1.1 101')) throw new Error(`upgrade refused: ${head}`);
  socket.pause();
  return socket;
}

function gc(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

t.test('a client that stops reading: events dropped and counted, memory bounded, others unaffected, closed with 1013', async (t) => {
  const LIMIT = 1024 * 1024;
  const h = await startAdmin({ eventBufferLimit: LIMIT, stallTimeoutMs: 1_500 });
  t.teardown(() => h.close());
  const stalled = await stalledClient(h.port, h.token);
  t.teardown(() => stalled.destroy());

  const healthy = await connectAdmin({ port: h.port, token: h.token });
  let received = 0;
  let reportedDropped = 0;
  healthy.onEvent(() => received++);
  healthy.onDropped((message) => (reportedDropped += message.count));
  await waitFor('two clients', () => h.admin.stats().clients === 2);

  const TOTAL = 50_000;
  const payload = { note: 'x'.repeat(900) };
  gc();
  const before = process.memoryUsage();
  let maxBuffered = 0;
  for (let i = 0; i < TOTAL; i++) {
    h.bus.publish({ type: 'audit', entry: { id: i, at: at(), actor: 'system', event_type: 'load', server: 's', payload } });
    if (i % 250 === 249) {
      maxBuffered = Math.max(maxBuffered, h.admin.stats().buffered);
      // The healthy client reads on this same event loop: the publisher waits
      // for it between batches, as a reader in its own process would keep up.
      // The stalled client gets no such wait.
      await waitFor('healthy client kept up', () => received + reportedDropped === i + 1, 10_000, 1);
    }
  }
  const published = h.admin.stats();
  t.ok(published.dropped > 0, `events were dropped for the stalled client (${published.dropped})`);
  t.ok(maxBuffered < 2 * LIMIT + 64 * 1024, `uWS send buffers stayed bounded (max ${maxBuffered} bytes for ~${(TOTAL * 1000) / 1e6} MB published)`);

  t.equal(received, TOTAL, `the healthy client got every event (${reportedDropped} dropped)`);

  gc();
  const after = process.memoryUsage();
  const heapGrowth = after.heapUsed - before.heapUsed;
  const rssGrowth = after.rss - before.rss;
  t.comment(`heapUsed growth ${(heapGrowth / 1e6).toFixed(1)} MB, rss growth ${(rssGrowth / 1e6).toFixed(1)} MB, external ${((after.external - before.external) / 1e6).toFixed(1)} MB`);
  t.ok(heapGrowth < 4 * 1024 * 1024, 'heap did not grow with the published volume');
  t.ok(rssGrowth < 40 * 1024 * 1024, 'rss did not grow with the published volume (~50 MB published)');

  // It stayed over the limit: closed with 1013, counted.
  await waitFor('stalled client closed', () => h.admin.stats().closed_slow === 1, 10_000);
  t.equal(h.admin.stats().clients, 1, 'only the healthy client is left');

  // What the stalled client would have read: events, then a close frame with 1013.
  const chunks: Buffer[] = [];
  stalled.on('data', (chunk: Buffer) => chunks.push(chunk));
  stalled.resume();
  await Promise.race([once(stalled, 'end'), once(stalled, 'close'), sleep(10_000)]);
  const data = Buffer.concat(chunks);
  const closeAt = data.lastIndexOf(0x88);
  t.ok(closeAt >= 0 && data[closeAt + 1] === data.length - closeAt - 2, 'the stream ends with a close frame');
  t.equal(data.readUInt16BE(closeAt + 2), 1013);
  t.match(data.subarray(closeAt + 4).toString(), /too slow/);

  // Healthy client still streaming.
  h.bus.publish({ type: 'server', action: 'removed', server: 's', at: at() });
  await waitFor('one more', () => received + reportedDropped === TOTAL + 1);
  await healthy.close();
});

t.test('a slow client is told how many events it missed once it drains', async (t) => {
  const h = await startAdmin({ eventBufferLimit: 64 * 1024, stallTimeoutMs: 60_000 });
  t.teardown(() => h.close());
  const c = await probe(h.url, { headers: bearer(h.token) });
  // Stop reading, flood, resume.
  (c.ws as unknown as { _socket: net.Socket })._socket.pause();
  const TOTAL = 20_000;
  for (let i = 0; i < TOTAL; i++) h.bus.publish({ type: 'audit', entry: { id: i, at: at(), actor: 'system', event_type: 'load', server: 's', payload: { note: 'y'.repeat(500) } } });
  const dropped = h.admin.stats().dropped;
  t.ok(dropped > 0, `dropped ${dropped}`);
  (c.ws as unknown as { _socket: net.Socket })._socket.resume();
  const notice = await c.next((m) => m.type === 'dropped', 10_000);
  t.same(notice, { type: 'dropped', count: dropped }, 'one dropped notice with the count');
  const events = c.messages.filter((m) => m.type === 'event').length;
  t.equal(events + dropped, TOTAL, 'delivered + dropped = published');
  h.bus.publish({ type: 'server', action: 'added', server: 'after', at: at() });
  await c.next((m) => m.type === 'event' && m.event.type === 'server');
  t.equal(c.messages.filter((m) => m.type === 'dropped').length, 1, 'one notice only');
  c.ws.close();
});

// ---------------------------------------------------------------- end to end

t.test('end to end against a real daemon', async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  // A daemon without the route answers 404 and connectAdmin rejects: the test fails.
  const admin = await connectAdmin({ port: gateway.daemon.port, token: gateway.daemon.token });
  t.teardown(() => admin.close());
  const observer = await connectAdmin({ port: gateway.daemon.port, token: gateway.daemon.token });
  t.teardown(() => observer.close());
  const seen: CofferEvent[] = [];
  observer.onEvent((event) => seen.push(event));

  await gateway.addServer(stdioFixture('fx', ['--prompts']));
  await waitFor('server added event', () => seen.find((event) => event.type === 'server' && event.action === 'added' && event.server === 'fx'));
  await waitFor('health ready event', () => seen.find((event) => event.type === 'health' && event.server === 'fx' && event.state === 'ready'));
  t.pass('a second admin client saw the server added and its health');

  const progress: string[] = [];
  const result = await admin.request({ type: 'refresh', server: 'fx' }, { onProgress: (p) => progress.push(p.message) });
  t.equal(result.ok, true, 'refresh answered');
  t.ok(progress.length >= 1, `with progress first: ${progress[0]}`);
  const data = (result as { data: { server: string; tools: { state: string; items: Array<{ key: string; live: boolean }> }; prompts: { state: string } } }).data;
  t.equal(data.server, 'fx');
  t.equal(data.tools.state, 'live');
  t.ok(
    data.tools.items.some((item) => item.key === 'echo' && item.live),
    'the fresh list has the fixture tools',
  );
  t.equal(data.prompts.state, 'live');

  t.match(await admin.request({ type: 'refresh', server: 'ghost' }), { ok: false, error: { code: 'RESOURCE_NOT_FOUND' } });
  t.match(await admin.request({ type: 'test', server: 'fx' }), { ok: true, data: { ok: true, server_info: { name: 'fx' } } });

  // A server that never answers its lists: the error envelope of a real refresh, with the known keys.
  await gateway.addServer(stdioFixture('hung', ['--hang'], { request_ms: 300 }));
  const hung = await admin.request({ type: 'refresh', server: 'hung' }, { timeoutMs: 15_000 });
  t.match(hung, { ok: false, error: { code: 'UPSTREAM_TIMEOUT', details: { known: [] } } });

  // Disable fx via REST: the observer sees it.
  t.equal((await gateway.api('POST', '/servers/fx/disable')).status, 200);
  await waitFor('server updated event', () => seen.find((event) => event.type === 'server' && event.server === 'fx' && event.action === 'updated'));
  t.pass('REST changes stream to admin clients');
});
