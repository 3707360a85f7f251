// Hostile or broken input on the client and admin side: malformed
// and mistyped JSON-RPC, batch abuse, unknown / stolen / reused session ids
// and request ids, bodies over the limit, 10,000 sessions, path tricks in tool
// names and resource URIs, missing / wrong / old tokens on every REST route,
// path tricks in REST names, fuzzed server configs, a foreign Host or Origin
// (DNS rebinding), bad admin WebSocket frames. Each must get a clear error,
// never a 500, a crash or a hang, and must change no state.
import { request as httpRequest } from 'node:http';
import net from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import fc from 'fast-check';
import t, { type Test } from 'tap';
import WebSocket from 'ws';
import { Logger } from '../src/log.js';
import { Dispatcher, type DispatcherParts } from '../src/mcp/dispatcher.js';
import { SessionRegistry } from '../src/mcp/sessions.js';
import { SessionTags } from '../src/mcp/session-tag.js';
import { serveFetch } from './helpers/fetch-reply.js';
import { startGateway, waitFor, type Gateway } from './helpers/gateway.js';
import { stdioFixture } from './fixtures/fixture-servers.js';
import { MCP_HEADERS, mcpAuthHeader, mcpPost } from './helpers/mcp-post.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const PROTOCOL = '2025-11-25';
const INIT = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: PROTOCOL, capabilities: {}, clientInfo: { name: 'hostile', version: '1' } } };

/** Opens a session (initialize + initialized) and answers the headers that use it. */
async function openSession(gateway: Gateway): Promise<Record<string, string>> {
  const answer = await mcpPost(gateway, INIT);
  if (answer.status !== 200 || !answer.sessionId) throw new Error(`initialize failed: ${answer.status} ${answer.text}`);
  const headers = { 'mcp-session-id': answer.sessionId, 'mcp-protocol-version': PROTOCOL };
  await mcpPost(gateway, { jsonrpc: '2.0', method: 'notifications/initialized' }, headers);
  return headers;
}

/** A raw HTTP request: the path goes out byte for byte (fetch would resolve `..` and `%2e%2e` first). */
function raw(
  port: number,
  options: { method: string; path: string; headers?: Record<string, string>; body?: string },
): Promise<{ status: number; text: string; headers: Record<string, string | string[] | undefined> }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method: options.method, path: options.path, headers: options.headers ?? {}, timeout: 20_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8'), headers: res.headers }));
      res.on('error', reject);
    });
    // An accepted WebSocket upgrade (101) is an answer too.
    req.on('upgrade', (res, socket) => {
      socket.destroy();
      resolve({ status: res.statusCode ?? 101, text: '', headers: res.headers });
    });
    req.on('timeout', () => req.destroy(new Error(`no answer to ${options.method} ${options.path} within 20 s`)));
    req.on('error', reject);
    req.end(options.body);
  });
}

/** What must not change: the servers (config + enabled) and every capability's switch. */
async function snapshot(gateway: Gateway): Promise<unknown> {
  const servers = (await gateway.api('GET', '/servers')).body.servers as Array<Record<string, any>>;
  const result: Record<string, unknown> = {};
  for (const server of servers) {
    const { health: _health, ...config } = server;
    const capabilities = await gateway.api('GET', `/servers/${server.name}/capabilities`);
    const switches: Record<string, boolean> = {};
    for (const kind of ['tools', 'resources', 'prompts', 'resourceTemplates']) {
      for (const item of (capabilities.body?.[kind]?.items ?? capabilities.body?.error?.details?.[kind] ?? []) as Array<{ key: string; enabled: boolean }>) {
        switches[`${kind}:${item.key}`] = item.enabled;
      }
    }
    result[server.name] = { config, switches };
  }
  return result;
}

/** Which fixture answered a `whoami` call. */
function servedBy(result: any): string | undefined {
  if (!result) return undefined;
  return (result.structuredContent ?? JSON.parse(result.content?.[0]?.text ?? '{}')).name;
}

/** A normal SDK client still gets a tool list and a routed call. */
async function stillServes(t: Test, gateway: Gateway, what: string): Promise<void> {
  const client = await gateway.client(`after-${what}`);
  const tools = await client.listTools();
  t.ok(tools.tools.some((tool) => tool.name === 'alpha__whoami'), `${what}: a normal client still lists tools`);
  t.equal(servedBy(await client.callTool({ name: 'alpha__whoami', arguments: {} })), 'alpha', `${what}: and calls are routed`);
  await client.close();
}

let gateway: Gateway;
let before: unknown;

t.before(async () => {
  gateway = await startGateway();
  await gateway.addServer(stdioFixture('alpha', ['--resources', '--prompts']));
  await gateway.addServer(stdioFixture('beta', ['--resources', '--prompts']));
  // One switch off, so "no state change" covers preferences too.
  const off = await gateway.api('POST', '/servers/beta/capabilities/tool/disable', { key: 'echo' });
  if (off.status !== 200) throw new Error(`disable failed: ${JSON.stringify(off.body)}`);
  before = await snapshot(gateway);
});
t.teardown(() => gateway?.close());

t.test('/mcp: malformed JSON and JSON-RPC with wrong types get a 4xx JSON-RPC error', async (t) => {
  const session = await openSession(gateway);
  const cases: Array<[string, unknown, number, number]> = [
    // label, body, status, JSON-RPC error code
    ['malformed JSON', '{"jsonrpc": "2.0", "id": 1, "method": ', 400, -32700],
    ['empty body', '', 400, -32700],
    ['not UTF-8 JSON', '\u0000\u0001\u0002', 400, -32700],
    ['id an object', { jsonrpc: '2.0', id: { a: 1 }, method: 'ping' }, 400, -32700],
    ['id null', { jsonrpc: '2.0', id: null, method: 'ping' }, 400, -32700],
    ['method a number', { jsonrpc: '2.0', id: 1, method: 5 }, 400, -32700],
    ['params an array', { jsonrpc: '2.0', id: 1, method: 'tools/list', params: [] }, 400, -32700],
    ['params a string', { jsonrpc: '2.0', id: 1, method: 'tools/list', params: 'x' }, 400, -32700],
    ['missing jsonrpc', { id: 1, method: 'ping' }, 400, -32700],
    ['jsonrpc 1.0', { jsonrpc: '1.0', id: 1, method: 'ping' }, 400, -32700],
    ['a bare number', 42, 400, -32700],
    ['a bare string', '"ping"', 400, -32700],
    ['null', 'null', 400, -32700],
  ];
  for (const [label, body, status, code] of cases) {
    for (const [where, headers] of [['no session', {}], ['session', session]] as const) {
      const answer = await mcpPost(gateway, body, headers);
      t.equal(answer.status, status, `${label} (${where}): ${status}`);
      t.equal(answer.messages[0]?.error?.code, code, `${label} (${where}): JSON-RPC ${code}`);
      t.equal(answer.messages[0]?.id, null, `${label} (${where}): id null`);
    }
  }
  // Well-formed but meaningless on a session: answered as JSON-RPC errors in a 200 stream.
  const unknown = await mcpPost(gateway, { jsonrpc: '2.0', id: 2, method: 'no/such/method' }, session);
  t.match(unknown, { status: 200, messages: [{ id: 2, error: { code: -32601 } }] }, 'unknown method: -32601');
  const noName = await mcpPost(gateway, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: { evil: true } } }, session);
  t.match(noName, { status: 200, messages: [{ id: 3, error: { code: -32602 } }] }, 'tools/call with an object name: -32602');
  const badCursor = await mcpPost(gateway, { jsonrpc: '2.0', id: 4, method: 'tools/list', params: { cursor: 17 } }, session);
  t.match(badCursor, { status: 200, messages: [{ id: 4, error: { code: -32602 } }] }, 'a cursor of the wrong type: -32602');
  // Transport-level refusals.
  t.equal((await mcpPost(gateway, INIT, { 'content-type': 'text/plain' })).status, 415, 'wrong Content-Type: 415');
  t.equal((await mcpPost(gateway, INIT, { accept: 'application/json' })).status, 406, 'Accept without text/event-stream: 406');
  t.equal((await mcpPost(gateway, { jsonrpc: '2.0', id: 5, method: 'ping' }, { ...session, 'mcp-protocol-version': '1999-01-01' })).status, 400, 'unknown protocol version: 400');
  t.equal((await fetch(`${gateway.url}/mcp`, { method: 'PUT', headers: { ...session, ...mcpAuthHeader(gateway) } })).status, 405, 'PUT: 405');
  t.same(await snapshot(gateway), before, 'no state changed');
});

t.test('/mcp: batches — empty, mixed with initialize, over 100, 1000 requests, duplicate ids', async (t) => {
  const session = await openSession(gateway);
  const pings = (n: number, from = 100) => Array.from({ length: n }, (_, k) => ({ jsonrpc: '2.0', id: from + k, method: 'ping' }));

  t.match(await mcpPost(gateway, [], session), { status: 400, messages: [{ error: { code: -32600 } }] }, 'an empty batch: -32600');
  t.match(await mcpPost(gateway, [INIT, pings(1)[0]]), { status: 400, messages: [{ error: { code: -32600 } }] }, 'initialize in a batch: -32600');
  t.match(await mcpPost(gateway, [INIT, pings(1)[0]], session), { status: 400, messages: [{ error: { code: -32600 } }] }, 'initialize in a batch on a session: -32600');
  t.match(await mcpPost(gateway, pings(1000)), { status: 400, messages: [{ error: { code: -32600, message: /exceed 100/ } }] }, '1000 requests without a session: -32600');
  t.match(await mcpPost(gateway, pings(1000), session), { status: 400, messages: [{ error: { code: -32600, message: /exceed 100/ } }] }, '1000 requests: -32600');
  t.match(await mcpPost(gateway, pings(101), session), { status: 400 }, '101 requests: refused');

  const hundred = await mcpPost(gateway, [...pings(99), { jsonrpc: '2.0', id: 'list', method: 'tools/list' }], session);
  t.equal(hundred.status, 200, '100 requests: answered');
  t.equal(hundred.messages.length, 100, 'one answer per request');
  t.same(new Set(hundred.messages.map((message) => message.id)).size, 100, 'every id answered once');

  // A huge batch of invalid entries is refused as a whole, without answering each.
  t.match(await mcpPost(gateway, Array.from({ length: 100 }, () => ({ jsonrpc: '2.0', id: {}, method: 7 })), session), { status: 400 }, 'a batch of garbage: 400');
  // Notifications and stray responses only: 202, nothing to answer.
  t.equal((await mcpPost(gateway, [{ jsonrpc: '2.0', method: 'notifications/whatever' }, { jsonrpc: '2.0', id: 'x', result: {} }], session)).status, 202, 'notifications only: 202');

  // Duplicate request ids: the transport routes answers by id, so a reused id
  // used to strand the first request's stream forever. Now refused up front.
  t.match(await mcpPost(gateway, [pings(1, 7)[0], pings(1, 7)[0]], session), { status: 400, messages: [{ error: { code: -32600, message: /already used/ } }] }, 'the same id twice in a batch: -32600');
  const slow = mcpPost(gateway, { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'alpha__slow', arguments: { ms: 1500, steps: 1 } } }, session);
  await new Promise((resolve) => setTimeout(resolve, 300));
  t.match(await mcpPost(gateway, pings(1, 7)[0], session), { status: 400, messages: [{ error: { code: -32600, message: /id 7 is already used/ } }] }, 'an id still pending: -32600');
  t.match(await slow, { status: 200, messages: [{ id: 7, result: { content: [{ text: /slept/ }] } }] }, 'the first request with that id is still answered (no stranded stream)');
  t.match(await mcpPost(gateway, pings(1, 7)[0], session), { status: 200, messages: [{ id: 7, result: {} }] }, 'the id is free again once answered');
  t.match(await mcpPost(gateway, { jsonrpc: '2.0', id: '7', method: 'ping' }, session), { status: 200 }, 'id "7" and id 7 are different ids');
  t.same(await snapshot(gateway), before, 'no state changed');
});

t.test('/mcp: unknown, foreign and stale session ids; requests before initialize; a second initialize', async (t) => {
  const ping = { jsonrpc: '2.0', id: 1, method: 'ping' };
  t.match(await mcpPost(gateway, ping), { status: 400, messages: [{ error: { code: -32000, message: /not initialized/ } }] }, 'a request before initialize: 400');
  t.match(await mcpPost(gateway, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'alpha__echo' } }), { status: 400 }, 'a call before initialize: 400, not routed');
  for (const id of ['nope', '', '00000000-0000-0000-0000-000000000000', 'x'.repeat(4000), '../../etc/passwd', '\u00e9t\u00e9']) {
    const answer = await mcpPost(gateway, ping, { 'mcp-session-id': encodeURIComponent(id) === id ? id : encodeURIComponent(id), 'mcp-protocol-version': PROTOCOL });
    t.match(answer, { status: 404, messages: [{ error: { code: -32001 } }] }, `unknown session id ${JSON.stringify(id.slice(0, 20))}: 404`);
  }
  for (const method of ['GET', 'DELETE']) {
    t.equal((await fetch(`${gateway.url}/mcp`, { method, headers: { 'mcp-session-id': 'nope', accept: 'text/event-stream', ...mcpAuthHeader(gateway) } })).status, 404, `${method} with an unknown session: 404`);
    t.equal((await fetch(`${gateway.url}/mcp`, { method, headers: { accept: 'text/event-stream', ...mcpAuthHeader(gateway) } })).status, 400, `${method} without a session: 400`);
  }

  const a = await openSession(gateway);
  const b = await openSession(gateway);
  t.not(a['mcp-session-id'], b['mcp-session-id'], 'sessions get distinct ids');
  t.match(a['mcp-session-id'], /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/, 'a random UUID (122 bits)');
  t.match(await mcpPost(gateway, INIT, a), { status: 400, messages: [{ error: { code: -32600, message: /already initialized/ } }] }, 'a second initialize on a session: 400');
  // A session is bound to the credential that opened it: the same credential
  // presenting the id is that session (another one gets 404: test/mcp-auth.test.ts).
  const same = await mcpPost(gateway, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, { 'mcp-session-id': a['mcp-session-id']! });
  t.equal(same.status, 200, "A's credential presenting A's session id is served as A");
  t.equal(same.sessionId, a['mcp-session-id'], 'and answered on that session');
  t.equal((await fetch(`${gateway.url}/mcp`, { method: 'DELETE', headers: { ...a, ...mcpAuthHeader(gateway) } })).status, 200, 'DELETE ends A');
  t.match(await mcpPost(gateway, ping, a), { status: 404 }, 'A after DELETE: 404');
  t.equal((await fetch(`${gateway.url}/mcp`, { method: 'DELETE', headers: { ...a, ...mcpAuthHeader(gateway) } })).status, 404, 'a second DELETE: 404');
  t.match(await mcpPost(gateway, ping, b), { status: 200, messages: [{ result: {} }] }, 'B is unaffected');
  t.same(await snapshot(gateway), before, 'no state changed');
});

/**
 * Sends `head`, then (if `bodyBytes`) streams that many bytes from one reused
 * 1 MiB buffer, reading the answer as soon as it comes. Never allocates the body.
 */
function streamBody(port: number, head: string, bodyBytes: number, chunked: boolean): Promise<{ status: number; body: string; sentMiB: number }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const piece = Buffer.alloc(1 << 20, 0x20);
    const framed = chunked ? Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')]) : piece;
    let sent = 0;
    let answer = '';
    let done = false;
    const finish = (error?: Error) => {
      if (done) return;
      done = true;
      socket.destroy();
      if (error) return reject(error);
      const [statusLine = '', body = ''] = [answer.split('\r\n')[0], answer.split('\r\n\r\n')[1]];
      resolve({ status: Number(statusLine.split(' ')[1] ?? 0) || 0, body, sentMiB: Math.round(sent / (1 << 20)) });
    };
    const pump = () => {
      while (!done && sent < bodyBytes) {
        sent += piece.length;
        if (!socket.write(framed)) return void socket.once('drain', pump);
      }
    };
    socket.setTimeout(60_000, () => finish(new Error('no answer within 60 s')));
    socket.on('data', (chunk) => {
      answer += chunk.toString('latin1');
      if (answer.includes('\r\n\r\n') && answer.includes('}')) finish();
    });
    socket.on('error', () => finish());
    // status 0: the connection was dropped without an HTTP answer.
    socket.on('close', () => finish());
    socket.write(head);
    pump();
  });
}

t.test('bodies over the limit: 413 (declared at once, chunked when the limit is crossed), nothing buffered beyond it', async (t) => {
  const port = gateway.daemon.port;
  const head = (path: string, length: string) =>
    `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\nauthorization: Bearer ${gateway.daemon.token}\r\n${length}\r\n`;
  const MCP_LIMIT = 64 * 1024 * 1024;
  const API_LIMIT = 1024 * 1024;

  // Declared Content-Length over the limit: refused before the body is sent.
  for (const [path, limit] of [['/mcp', MCP_LIMIT], ['/api/v1/servers', API_LIMIT]] as const) {
    for (const declared of [limit + 1, 10 * limit, 999_999_999]) {
      const started = Date.now();
      const answer = await streamBody(port, head(path, `content-length: ${declared}\r\n`), 0, false);
      t.equal(answer.status, 413, `${path} declaring ${declared} bytes: 413 without sending the body`);
      t.match(JSON.parse(answer.body), { error: { code: 'PAYLOAD_TOO_LARGE' } });
      t.ok(Date.now() - started < 10_000, 'answered at once');
    }
    // uWS's own parser drops a connection whose Content-Length has 10+ digits
    // (or is not a number) before coffer sees the request: no status, no crash.
    for (const declared of ['1000000000', String(2 ** 40), '-1', 'abc', '1e9']) {
      const answer = await streamBody(port, head(path, `content-length: ${declared}\r\n`), 0, false);
      t.ok([0, 400, 413].includes(answer.status), `${path} declaring ${declared}: ${answer.status === 0 ? 'connection dropped by uWS' : answer.status}`);
    }
  }
  // Chunked: no declared length, the limit is enforced while reading.
  const mcp = await streamBody(port, head('/mcp', 'transfer-encoding: chunked\r\n'), 200 * 1024 * 1024, true);
  t.equal(mcp.status, 413, `/mcp chunked body: 413 after ${mcp.sentMiB} MiB sent`);
  t.ok(mcp.sentMiB < 200, 'the client is stopped before its whole body');
  const api = await streamBody(port, head('/api/v1/servers', 'transfer-encoding: chunked\r\n'), 20 * 1024 * 1024, true);
  t.equal(api.status, 413, `/api/v1 chunked body: 413 after ${api.sentMiB} MiB sent`);
  // Just under the REST limit is parsed (and refused as a config, not as a size).
  const under = await gateway.api('POST', '/servers', { name: 'x'.repeat(API_LIMIT - 100) });
  t.equal(under.status, 422, 'a body just under 1 MiB is read and validated: 422');
  t.same(await snapshot(gateway), before, 'no state changed');
  await stillServes(t, gateway, 'oversized bodies');
});

t.test('REST without the token uploads nothing: refused (401) before its body is read; a public route takes a small body only', async (t) => {
  const port = gateway.daemon.port;
  const head = (method: string, path: string, authorization: string) =>
    `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\ncontent-type: application/json\r\n${authorization}content-length: 1000000\r\n\r\n`;
  for (const [method, path] of [['POST', '/api/v1/servers'], ['PATCH', '/api/v1/servers/alpha'], ['PATCH', '/api/v1/retention/audit'], ['POST', '/api/v1/nowhere']] as const) {
    for (const [label, authorization] of [['no token', ''], ['a wrong one', 'authorization: Bearer wrong\r\n']] as const) {
      const started = Date.now();
      // The body is never sent: only an answer that needs none can come.
      const answer = await streamBody(port, head(method, path, authorization), 0, false);
      t.equal(answer.status, path === '/api/v1/nowhere' ? 404 : 401, `${method} ${path} with ${label}: answered without its body`);
      t.ok(Date.now() - started < 5_000, 'at once');
    }
  }
  // The one public route with a body (the web UI's login) takes a code, not a megabyte.
  const login = await streamBody(port, head('POST', '/api/v1/ui/login', ''), 0, false);
  t.equal(login.status, 413, 'POST /ui/login declaring 1 MB: 413 without its body');
  t.match(JSON.parse(login.body), { error: { code: 'PAYLOAD_TOO_LARGE' } });
  t.equal((await fetch(`${gateway.url}/api/v1/ui/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ code: 'guess' }) })).status, 401, 'a code still reaches it');
  await stillServes(t, gateway, 'unauthenticated uploads');
});

t.test('tool names and resource URIs with path tricks never reach the wrong server', async (t) => {
  const session = await openSession(gateway);
  let id = 1000;
  const call = (method: string, params: Record<string, unknown>) => mcpPost(gateway, { jsonrpc: '2.0', id: ++id, method, params }, session);
  // Control: the right names are routed to the right server.
  t.equal(servedBy((await call('tools/call', { name: 'alpha__whoami', arguments: {} })).messages[0].result), 'alpha', 'alpha__whoami → alpha');
  t.equal(servedBy((await call('tools/call', { name: 'beta__whoami', arguments: {} })).messages[0].result), 'beta', 'beta__whoami → beta');
  t.match(await call('tools/call', { name: 'beta__echo', arguments: {} }), { messages: [{ error: { code: -32000, data: { code: 'TOOL_DISABLED' } } }] }, 'a disabled tool stays refused');

  const toolNames = [
    '../alpha__whoami', 'alpha/../beta__whoami', 'beta__../alpha__whoami', 'alpha__../whoami', '..__whoami', '.__whoami',
    '__alpha__whoami', 'alpha___whoami', 'alpha____whoami', 'alpha_whoami', 'alpha__', '__', '', 'alpha',
    'alpha%5F%5Fwhoami', 'alpha%5f%5fwhoami', 'alpha__who%61mi', 'alpha%2F..%2Fbeta__whoami',
    'alpha\uFF3F\uFF3Fwhoami', 'alpha\u2017whoami', 'alpha\uFE4Dwhoami', '\u0430lpha__whoami', 'alph\u0430__whoami', '\u03B1lpha__whoami',
    'ALPHA__whoami', 'Alpha__whoami', 'alpha\u0000__whoami', 'alpha__whoami\u0000', ' alpha__whoami', 'alpha__whoami ', 'alpha\u200B__whoami',
    'beta__echo\u0000', 'BETA__echo', 'beta__Echo', 'constructor__whoami', '__proto____whoami', 'toString__x', 'hasOwnProperty__x',
    `alpha__${'w'.repeat(100_000)}`, `${'a'.repeat(10_000)}__whoami`,
  ];
  for (const name of toolNames) {
    const answer = await call('tools/call', { name, arguments: {} });
    t.equal(answer.status, 200, `tools/call ${JSON.stringify(name.slice(0, 40))}: answered`);
    const [message] = answer.messages;
    if (message.result) {
      // Only `<server>__…` may reach that server (the upstream then judges the rest).
      const served = servedBy(message.result);
      const prefix = ['alpha', 'beta'].find((server) => name.startsWith(`${server}__`));
      t.ok(prefix !== undefined && served === prefix, `${JSON.stringify(name.slice(0, 40))} was routed to ${served}: only a ${prefix}__ name may reach ${prefix}`);
    } else {
      t.ok(message.error && typeof message.error.code === 'number' && message.error.code !== -32603, `${JSON.stringify(name.slice(0, 40))}: error ${message.error?.code}`);
    }
  }
  // beta__echo is disabled: no spelling of it gets through the switch.
  for (const name of ['beta__echo', 'beta__echo ', 'beta__ECHO', 'beta\uFF3F\uFF3Fecho', 'beta__\u0435cho']) {
    const [message] = (await call('tools/call', { name, arguments: { x: 1 } })).messages;
    t.notOk(message.result, `${JSON.stringify(name)} does not run the disabled tool`);
  }

  t.match(await call('resources/read', { uri: 'coffer://alpha/fixture://static' }), { messages: [{ result: { contents: [{ uri: 'coffer://alpha/fixture://static' }] } }] }, 'control: coffer://alpha/fixture://static');
  const uris = [
    'coffer://a/../alpha/fixture://static', 'coffer://alpha/../beta/fixture://static', 'coffer://srv%2F../alpha/fixture://static', 'coffer://alpha%2F..%2Fbeta/fixture://static',
    'coffer://alpha%2Ffixture://static', 'coffer:///alpha/fixture://static', 'coffer:/alpha/fixture://static', 'coffer:alpha/fixture://static', 'COFFER://alpha/fixture://static',
    'coffer://alpha', 'coffer://alpha/', 'coffer://', 'coffer://./fixture://static', 'coffer://../fixture://static', 'coffer://alpha__x/fixture://static',
    'coffer://\u0430lpha/fixture://static', 'coffer://alph\uFF41/fixture://static', 'coffer://alpha\u0000/fixture://static', 'coffer://alpha:80/fixture://static',
    'coffer://user@alpha/fixture://static', 'fixture://static', 'file:///etc/passwd', 'coffer://alpha/../../etc/passwd', `coffer://alpha/${'x'.repeat(100_000)}`,
  ];
  for (const uri of uris) {
    const answer = await call('resources/read', { uri });
    t.equal(answer.status, 200, `resources/read ${JSON.stringify(uri.slice(0, 50))}: answered`);
    const [message] = answer.messages;
    if (message.result) {
      // Only a well-formed coffer://alpha/<uri> may reach alpha (the scheme in any case: RFC 3986 §3.1), and then with <uri> verbatim.
      t.ok(/^coffer:\/\/alpha\//i.test(uri), `${JSON.stringify(uri.slice(0, 50))} reached an upstream only as coffer://alpha/…`);
    } else t.ok(typeof message.error?.code === 'number', `${JSON.stringify(uri.slice(0, 50))}: error ${message.error?.code}`);
  }
  // The fixture answers any prompt name: only one its server lists gets there (beta__greet\u0000 is beta's form, but no list names it).
  for (const name of ['alpha__greet', 'beta__greet\u0000', '../alpha__greet', 'alpha\uFF3F\uFF3Fgreet', '\u0430lpha__greet', 'greet', '__greet']) {
    const [message] = (await call('prompts/get', { name, arguments: { name: 'x' } })).messages;
    const listed = name === 'alpha__greet';
    t.ok(listed ? message.result : message.error?.code === -32602, `prompts/get ${JSON.stringify(name)}: ${listed ? 'routed to its server' : 'refused, -32602'}`);
  }
  t.same(await snapshot(gateway), before, 'no state changed');
});

// "alpha_" + "__" + "whoami" would read back as server "alpha", tool "_whoami":
// a server name may not end in "_", so no call can reach the wrong server.
t.test('a server name ending in "_" is refused, so a name never routes to another server', async (t) => {
  const refused = await gateway.api('POST', '/servers', stdioFixture('alpha_'));
  t.equal(refused.status, 422);
  t.match(JSON.stringify(refused.body.error.details), /must not end with/);
  const client = await gateway.client('underscore');
  const error = await client.callTool({ name: 'alpha___whoami', arguments: {} }).then(() => null, (caught: Error) => caught);
  t.ok(error, 'alpha___whoami is not served by alpha');
});

t.test('10,000 sessions (initialize, never DELETE): the daemon stays responsive, memory stays bounded', async (t) => {
  const N = 10_000;
  const client = await gateway.client('probe');
  const timeList = async () => {
    const started = performance.now();
    await client.listTools();
    return performance.now() - started;
  };
  await timeList();
  const baseline = await timeList();
  gc();
  gc();
  const memBefore = process.memoryUsage();
  const body = JSON.stringify(INIT);
  let opened = 0;
  let failed = 0;
  const started = Date.now();
  const opener = async () => {
    while (opened + failed < N) {
      opened++;
      const response = await fetch(`${gateway.url}/mcp`, { method: 'POST', headers: { ...MCP_HEADERS, ...mcpAuthHeader(gateway) }, body, signal: AbortSignal.timeout(30_000) });
      await response.text();
      if (response.status !== 200 || !response.headers.get('mcp-session-id')) {
        opened--;
        failed++;
      }
    }
  };
  const during: number[] = [];
  const probing = (async () => {
    while (opened + failed < N) {
      during.push(await timeList());
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  })();
  await Promise.all([...Array.from({ length: 32 }, opener), probing]);
  const openMs = Date.now() - started;
  gc();
  gc();
  const memAfter = process.memoryUsage();
  const after = [await timeList(), await timeList(), await timeList()];
  during.sort((x, y) => x - y);
  const pct = (p: number) => Math.round(during[Math.min(during.length - 1, Math.floor(p * during.length))] ?? 0);
  const perSession = (bytes: number) => Math.round(bytes / N);
  t.equal(failed, 0, `${N} sessions opened in ${openMs} ms`);
  t.comment(
    `10k sessions: RSS +${Math.round((memAfter.rss - memBefore.rss) / 2 ** 20)} MiB (${perSession(memAfter.rss - memBefore.rss)} B/session incl. client side), ` +
      `heap +${Math.round((memAfter.heapUsed - memBefore.heapUsed) / 2 ** 20)} MiB (${perSession(memAfter.heapUsed - memBefore.heapUsed)} B/session)`,
  );
  t.comment(`tools/list latency: baseline ${Math.round(baseline)} ms; while opening p50 ${pct(0.5)} ms, p95 ${pct(0.95)} ms, max ${pct(1)} ms (n=${during.length}); after ${after.map(Math.round).join('/')} ms`);
  t.ok(memAfter.heapUsed - memBefore.heapUsed < 150 * 2 ** 20, 'heap grew by less than 150 MiB (≈15 KiB a session)');
  t.ok(pct(1) < 10_000, 'no normal request waited 10 s while sessions were opened');
  t.ok(Math.min(...after) < 2_000, 'a normal request is fast again afterwards');
  await stillServes(t, gateway, '10k sessions');
  t.same(await snapshot(gateway), before, 'no state changed');
});

t.test('past maxSessions the least recently active idle session is closed; all busy → 503', async (t) => {
  const log = new Logger(null, 'error');
  const parts = { router: { list: async () => [] }, calls: { forward: () => new Promise(() => undefined) }, clientMessages: {}, features: { logLevelOf: () => undefined }, views: { list: async () => [], viewOf: () => null, forget: () => undefined }, search: { modeOf: () => 'full', isMetaTool: () => false } } as unknown as DispatcherParts;
  const dispatcher = new Dispatcher(parts, { version: 'test', pageSize: 100 }, log);
  const registry = new SessionRegistry(dispatcher, { maxBodyBytes: 1 << 20, keepAliveMs: 60_000, idleTimeoutMs: 3_600_000, maxSessions: 3, sessionTags: new SessionTags() }, log);
  t.teardown(() => registry.closeAll());
  const send = async (body: unknown, headers: Record<string, string> = {}) => {
    const response = await serveFetch(registry, new Request('http://127.0.0.1/mcp', { method: 'POST', headers: { ...MCP_HEADERS, ...headers } }), Buffer.from(JSON.stringify(body)));
    if (!(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) await response.text();
    return response;
  };
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) {
    ids.push((await send(INIT)).headers.get('mcp-session-id')!);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const use = (id: string) => ({ 'mcp-session-id': id, 'mcp-protocol-version': PROTOCOL });
  t.equal((await send({ jsonrpc: '2.0', id: 1, method: 'ping' }, use(ids[0]!))).status, 200, 'the first session is used again (now the most recent)');
  const fourth = await send(INIT);
  t.equal(fourth.status, 200, 'a 4th session is opened');
  t.equal(registry.size, 3, 'the registry stays at its cap');
  t.equal((await send({ jsonrpc: '2.0', id: 2, method: 'ping' }, use(ids[1]!))).status, 404, 'the least recently active one was closed: 404, its client initializes again');
  t.equal((await send({ jsonrpc: '2.0', id: 3, method: 'ping' }, use(ids[0]!))).status, 200, 'the recently used one survived');
  // Every session busy with a call that never ends: a new one is refused, nothing is evicted.
  const all = [ids[0]!, ids[2]!, fourth.headers.get('mcp-session-id')!];
  for (const id of all) void send({ jsonrpc: '2.0', id: 'busy', method: 'tools/call', params: { name: 'x__y' } }, use(id));
  await new Promise((resolve) => setTimeout(resolve, 50));
  t.equal((await send(INIT)).status, 503, 'all sessions busy: 503');
  t.equal(registry.size, 3);
});

// Every REST route, from src/api/routes/*.ts (GET /daemon/status is the only public one).
const ROUTES: Array<[string, string, unknown?]> = [
  ['POST', '/daemon/shutdown'],
  ['POST', '/daemon/rotate-token'],
  ['GET', '/servers'],
  ['POST', '/servers', stdioFixture('intruder')],
  ['GET', '/servers/alpha'],
  ['PATCH', '/servers/alpha', { description: 'pwned' }],
  ['DELETE', '/servers/alpha'],
  ['POST', '/servers/alpha/enable'],
  ['POST', '/servers/alpha/disable'],
  ['GET', '/servers/alpha/capabilities'],
  ['PATCH', '/servers/alpha/capabilities', { changes: [{ capability_type: 'tool', capability_key: 'echo', enabled: false }] }],
  ['POST', '/servers/alpha/capabilities/tool/enable', { key: 'echo' }],
  ['POST', '/servers/alpha/capabilities/tool/disable', { key: 'echo' }],
  ['POST', '/servers/alpha/refresh'],
  ['POST', '/servers/alpha/test'],
  ['GET', '/invocations'],
  ['GET', '/audit'],
  ['GET', '/retention'],
  ['GET', '/retention/audit'],
  ['PATCH', '/retention/audit', { days: 1 }],
  ['POST', '/retention/prune'],
];

async function everyRouteRefuses(t: Test, token: string | null, label: string, headerName = 'authorization'): Promise<void> {
  for (const [method, path, body] of ROUTES) {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (token !== null) headers[headerName] = headerName === 'authorization' ? `Bearer ${token}` : token;
    const response = await fetch(`${gateway.url}/api/v1${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const answer = (await response.json()) as { error?: { code: string } };
    t.equal(response.status, 401, `${label}: ${method} ${path} → 401`);
    t.equal(answer.error?.code, 'UNAUTHENTICATED');
  }
}

t.test('REST: a missing or wrong token is refused on every route but status', async (t) => {
  t.equal((await gateway.api('GET', '/daemon/status', undefined, null)).status, 200, 'status needs no token');
  const token = gateway.daemon.token;
  await everyRouteRefuses(t, null, 'no token');
  await everyRouteRefuses(t, 'wrong', 'wrong token');
  await everyRouteRefuses(t, '', 'empty token');
  await everyRouteRefuses(t, `${token}x`, 'token + 1 char');
  await everyRouteRefuses(t, token.slice(0, -1), 'token - 1 char');
  await everyRouteRefuses(t, token.toUpperCase() === token ? token.toLowerCase() : token.toUpperCase(), 'token in another case');
  await everyRouteRefuses(t, 'wrong', 'wrong X-Coffer-Token', 'x-coffer-token');
  // Scheme spelled otherwise: not a bearer token, and no X-Coffer-Token either.
  const basic = await fetch(`${gateway.url}/api/v1/servers`, { headers: { authorization: `Basic ${token}` } });
  t.equal(basic.status, 401, 'Authorization: Basic <token> → 401');
  // A right X-Coffer-Token does not rescue a wrong bearer (the bearer is what was presented).
  t.equal((await fetch(`${gateway.url}/api/v1/servers`, { headers: { authorization: 'Bearer wrong', 'x-coffer-token': token } })).status, 401, 'wrong bearer + right X-Coffer-Token → 401');
  t.same(await snapshot(gateway), before, 'no state changed');
  t.equal((await gateway.api('GET', '/daemon/status')).body.status, 'ready', 'the daemon did not shut down');
});

t.test('REST: path tricks in names are 404 / 405 / 422, never a crash', async (t) => {
  const port = gateway.daemon.port;
  const auth = { host: `127.0.0.1:${port}`, authorization: `Bearer ${gateway.daemon.token}`, 'content-type': 'application/json' };
  const names = [
    '..%2F..', '..', '.', '%2e%2e', '%2E%2E%2Fdaemon', 'alpha%2F..%2Fbeta', '%00', 'alpha%00', '%E0%A4%A', '%', '%ZZ', '%C3%A4', '%EF%BD%81lpha',
    '%D0%B0lpha', 'constructor', '__proto__', 'toString', 'a'.repeat(5000), 'alpha%20', '%20alpha', 'ALPHA', 'alpha;beta', 'alpha%3Fx', 'alpha%23x', 'alpha%2Fcapabilities',
  ];
  for (const name of names) {
    for (const [method, suffix, body] of [
      ['GET', '', undefined],
      ['PATCH', '', '{"description":"x"}'],
      ['DELETE', '', undefined],
      ['POST', '/enable', undefined],
      ['GET', '/capabilities', undefined],
      ['POST', '/capabilities/tool/disable', '{"key":"whoami"}'],
      ['POST', '/refresh', undefined],
    ] as const) {
      const path = `/api/v1/servers/${name}${suffix}`;
      const answer = await raw(port, { method, path, headers: auth, body });
      t.ok([404, 405, 422].includes(answer.status), `${method} ${path.slice(0, 70)}: ${answer.status}`);
      t.doesNotThrow(() => JSON.parse(answer.text), 'a JSON envelope');
    }
  }
  for (const path of ['/api/v1/servers/../daemon/status', '/api/v1/../api/v1/servers', '/api/v1/servers/alpha/../../daemon/shutdown', '/api/v1/retention/..%2Faudit', '/api/v1/servers/alpha/capabilities/%2e%2e/enable', '/api/v1/servers/alpha/capabilities/tool%00/enable']) {
    for (const method of ['GET', 'POST']) {
      const answer = await raw(port, { method, path, headers: auth, body: method === 'POST' ? '{"key":"x"}' : undefined });
      t.ok([404, 405].includes(answer.status), `${method} ${path}: ${answer.status}`);
    }
  }
  // Malformed JSON and wrong JSON types.
  for (const [body, status] of [['{oops', 400], ['[1,2', 400], ['\u0000', 400], ['"a string"', 422], ['[]', 422], ['null', 422], ['123', 422]] as const) {
    const answer = await raw(port, { method: 'POST', path: '/api/v1/servers', headers: auth, body });
    t.equal(answer.status, status, `POST /servers ${JSON.stringify(body)}: ${status}`);
    const patched = await raw(port, { method: 'PATCH', path: '/api/v1/servers/alpha', headers: auth, body });
    t.equal(patched.status, status, `PATCH /servers/alpha ${JSON.stringify(body)}: ${status}`);
  }
  // Registration with tricky names is refused by validation.
  for (const name of ['../x', 'a/b', 'a__b', '__', '', '.'.repeat(65), 'a\u0000', '\u0430lpha', 'alpha\uFF3F', 'a b', '%2e%2e', '.', '..']) {
    const answer = await gateway.api('POST', '/servers', { ...stdioFixture('x'), name });
    t.equal(answer.status, 422, `register ${JSON.stringify(name)}: 422`);
  }
  t.same(await snapshot(gateway), before, 'no state changed');
});

t.test('REST: fuzzed server configs are 201 or 422, never 500; nothing persisted on 422', async (t) => {
  const valid = stdioFixture('fuzzed');
  // Near-valid configs reach deeper into the validator than arbitrary JSON does.
  const mutated = fc.record({
    field: fc.constantFrom('name', 'description', 'enabled', 'transport', 'auto_enable_new_capabilities', 'timeouts', 'extra', 'transport.type', 'transport.command', 'transport.args', 'transport.env', 'transport.cwd', 'transport.url', 'transport.headers', 'timeouts.connect_ms', 'timeouts.request_ms'),
    value: fc.oneof(fc.jsonValue(), fc.string(), fc.constantFrom('http://127.0.0.1:1/mcp', 'ftp://x', 'http://u:p@127.0.0.1/', '/tmp', 'relative', -1, 0, 1e308, '[redacted]', 'sse', 'http', 'stdio')),
  });
  const config = fc.oneof(
    fc.jsonValue(),
    mutated.map(({ field, value }) => {
      const copy = JSON.parse(JSON.stringify(valid)) as Record<string, any>;
      const [top, sub] = field.split('.') as [string, string?];
      if (sub) copy[top] = { ...copy[top], [sub]: value };
      else copy[top] = value;
      return copy;
    }),
  );
  const counts: Record<number, number> = {};
  await fc.assert(
    fc.asyncProperty(config, async (input) => {
      const answer = await gateway.api('POST', '/servers', input);
      counts[answer.status] = (counts[answer.status] ?? 0) + 1;
      if (answer.status === 201) {
        const removed = await gateway.api('DELETE', `/servers/${encodeURIComponent(answer.body.name)}`);
        if (removed.status !== 204) return false;
        return true;
      }
      if (answer.status !== 422 || answer.body?.error?.code !== 'CONFIG_INVALID') return false;
      return Array.isArray(answer.body.error.details?.errors) && answer.body.error.details.errors.length > 0;
    }),
    { numRuns: 100 },
  );
  // PATCH with arbitrary JSON: 422 (a rejected patch changes nothing). An empty
  // object is a valid no-op patch (it does bump updated_at), so it is left out.
  await fc.assert(
    fc.asyncProperty(
      fc.jsonValue().filter((patch) => !(patch !== null && typeof patch === 'object' && !Array.isArray(patch) && Object.keys(patch).length === 0)),
      async (patch) => (await gateway.api('PATCH', '/servers/beta', patch)).status === 422,
    ),
    { numRuns: 50 },
  );
  // Other bodies: capability switches and retention.
  await fc.assert(
    fc.asyncProperty(fc.jsonValue(), fc.constantFrom('/servers/beta/capabilities', '/retention/audit'), async (body, path) => {
      const answer = await gateway.api('PATCH', path, body);
      return answer.status === 422;
    }),
    { numRuns: 50 },
  );
  t.comment(`POST /servers statuses: ${JSON.stringify(counts)}`);
  t.ok(counts[422]! > 0, 'invalid configs were refused');
  t.same(await snapshot(gateway), before, 'nothing persisted: servers and preferences unchanged');
});

t.test('a foreign Host or Origin (DNS rebinding) is refused with 403 on /mcp, /api/v1 and /admin/ws', async (t) => {
  const port = gateway.daemon.port;
  const foreign: Array<Record<string, string>> = [
    { host: 'evil.example' },
    { host: `evil.example:${port}` },
    { host: `127.0.0.1.evil.example:${port}` },
    { host: `localhost.:${port}` },
    { host: `127.0.0.1:${port + 1}` },
    { host: `0.0.0.0:${port}` },
    { host: `2130706433:${port}` },
    { host: `127.0.0.1:${port}`, origin: 'http://evil.example' },
    { host: `127.0.0.1:${port}`, origin: `http://evil.example:${port}` },
    { host: `127.0.0.1:${port}`, origin: 'http://127.0.0.1.evil.example' },
    { host: `127.0.0.1:${port}`, origin: 'null' },
    { host: `127.0.0.1:${port}`, origin: 'file://' },
    { host: `127.0.0.1:${port}`, origin: 'chrome-extension://abc' },
  ];
  const token = gateway.daemon.token;
  for (const headers of foreign) {
    const label = JSON.stringify(headers);
    const mcp = await raw(port, { method: 'POST', path: '/mcp', headers: { ...MCP_HEADERS, ...headers, ...mcpAuthHeader(gateway) }, body: JSON.stringify(INIT) });
    t.equal(mcp.status, 403, `/mcp ${label}: 403 even with the right token`);
    const api = await raw(port, { method: 'GET', path: '/api/v1/servers', headers: { ...headers, authorization: `Bearer ${token}` } });
    t.equal(api.status, 403, `/api/v1 ${label}: 403 even with the right token`);
    t.match(JSON.parse(api.text), { error: { code: 'FORBIDDEN_HOST' } });
    const status = await raw(port, { method: 'GET', path: '/api/v1/daemon/status', headers });
    t.equal(status.status, 403, `/api/v1/daemon/status ${label}: 403`);
    const ws = await raw(port, {
      method: 'GET',
      path: '/admin/ws',
      headers: { ...headers, connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==', authorization: `Bearer ${token}` },
    });
    t.equal(ws.status, 403, `/admin/ws ${label}: 403`);
  }
  t.equal((await raw(port, { method: 'POST', path: '/mcp', headers: { ...MCP_HEADERS, ...mcpAuthHeader(gateway), host: `localhost:${port}`, origin: `http://localhost:${port}` }, body: JSON.stringify(INIT) })).status, 200, 'loopback Host + Origin: 200');
  t.same(await snapshot(gateway), before, 'no state changed');
});

t.test('admin WebSocket: missing / wrong token → 4401; bad frames → errors, the socket stays usable', async (t) => {
  const url = `ws://127.0.0.1:${gateway.daemon.port}/admin/ws`;
  const closeOf = (ws: WebSocket) => new Promise<{ code: number; reason: string }>((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })));
  for (const [label, options] of [
    ['no token', {}],
    ['wrong bearer', { headers: { authorization: 'Bearer wrong' } }],
    ['wrong subprotocol token', { protocols: ['coffer.v1', 'coffer.token.wrong'] }],
    ['token in the query', { query: `?token=${gateway.daemon.token}` }],
  ] as const) {
    const ws = new WebSocket(url + ((options as { query?: string }).query ?? ''), (options as { protocols?: string[] }).protocols, { headers: (options as { headers?: Record<string, string> }).headers ?? {} });
    const closed = await closeOf(ws);
    t.equal(closed.code, 4401, `${label}: closed with 4401`);
  }

  const ws = new WebSocket(url, { headers: { authorization: `Bearer ${gateway.daemon.token}` } });
  const messages: any[] = [];
  ws.on('message', (data) => messages.push(JSON.parse(data.toString())));
  const closed = closeOf(ws);
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  const frames: Array<string | Buffer> = [
    Buffer.from([0xff, 0x00, 0x01]),
    'not json',
    '{"type":',
    'null',
    '[]',
    '42',
    JSON.stringify({ type: 7, id: 'a' }),
    JSON.stringify({ type: 'refresh', id: 'b', server: { $ne: null } }),
    JSON.stringify({ type: 'refresh', id: 'c', server: '../alpha' }),
    JSON.stringify({ type: 'subscribe', id: 'd', types: 'everything' }),
    JSON.stringify({ type: 'ping', id: { evil: true } }),
    JSON.stringify({ type: 'ping', id: 'big', padding: 'x'.repeat(100 * 1024) }),
  ];
  for (const frame of frames) ws.send(frame, { binary: Buffer.isBuffer(frame) });
  // A well-formed refresh of a server that does not exist gets progress, then a failed result.
  const answers = () => messages.filter((message) => message.type !== 'progress' && message.type !== 'event');
  await waitFor('an answer to every bad frame', () => answers().length >= frames.length, 15_000);
  for (const [index, message] of answers().slice(0, frames.length).entries()) {
    t.ok(message.type === 'error' || (message.type === 'result' && message.ok === false), `bad frame ${index}: ${message.type} ${message.error?.code}`);
  }
  t.match(answers().find((message) => message.id === 'c'), { type: 'result', ok: false, error: { code: 'RESOURCE_NOT_FOUND' } }, 'refresh of "../alpha": RESOURCE_NOT_FOUND');
  ws.send(JSON.stringify({ type: 'ping', id: 'after' }));
  await waitFor('pong', () => messages.some((message) => message.type === 'result' && message.id === 'after'), 10_000);
  t.match(messages.find((message) => message.id === 'after'), { ok: true }, 'the socket is still usable');
  ws.close();
  await closed;
  t.same(await snapshot(gateway), before, 'no state changed');
});

t.test('an old token (after rotate-token) is refused at once on every route and on /admin/ws', async (t) => {
  const old = gateway.daemon.token;
  const rotated = await gateway.api('POST', '/daemon/rotate-token');
  t.equal(rotated.status, 200);
  t.not(rotated.body.token, old, 'a new token');
  t.equal(gateway.daemon.token, rotated.body.token);
  await everyRouteRefuses(t, old, 'old token');
  const ws = new WebSocket(`ws://127.0.0.1:${gateway.daemon.port}/admin/ws`, { headers: { authorization: `Bearer ${old}` } });
  const code = await new Promise<number>((resolve) => ws.on('close', (closeCode) => resolve(closeCode)));
  t.equal(code, 4401, '/admin/ws with the old token: 4401');
  t.equal((await gateway.api('GET', '/servers')).status, 200, 'the new token works');
  t.same(await snapshot(gateway), before, 'no state changed');
  await stillServes(t, gateway, 'all of the above');
});
