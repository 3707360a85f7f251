// The shim's relay against a fake daemon that answers as a buggy or hostile
// one could: what reaches the client's stdout, how often a request is sent,
// and whether the link to the daemon survives.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, JSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';
import t, { type Test } from 'tap';
import { Relay } from '../src/shim/relay.js';
import { waitFor } from './helpers/wait.js';

const MODERN_META = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };

type Answer = (request: JSONRPCRequest, response: ServerResponse) => void;

/** A daemon's /mcp: 2025 sessions answered plainly (or by `legacy`, but for initialize), 2026-07-28 requests by `modern`. */
async function fakeDaemon(t: Test, modern: Answer, legacy?: Answer): Promise<{ url: URL; modernPosts: () => number; sessions: () => number }> {
  let modernPosts = 0;
  let sessions = 0;
  const server = createServer(async (request: IncomingMessage, response: ServerResponse) => {
    let text = '';
    for await (const chunk of request) text += String(chunk);
    if (request.method !== 'POST') return void response.writeHead(request.method === 'DELETE' ? 200 : 405).end();
    const message = JSON.parse(text) as JSONRPCRequest;
    if (message.params?._meta?.['io.modelcontextprotocol/protocolVersion']) {
      modernPosts += 1;
      return modern(message, response);
    }
    if (message.id === undefined) return void response.writeHead(202).end();
    if (legacy && message.method !== 'initialize') return legacy(message, response);
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (message.method === 'initialize') headers['mcp-session-id'] = `s${++sessions}`;
    response.writeHead(200, headers).end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result: { protocolVersion: '2025-06-18', capabilities: {}, serverInfo: { name: 'fake', version: '1' } } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  return { url: new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`), modernPosts: () => modernPosts, sessions: () => sessions };
}

/** A relay whose client is an array of what it wrote to stdout; `say` is the client writing a line. */
async function relayTo(t: Test, url: URL, identity = () => 'fake'): Promise<{ said: JSONRPCMessage[]; logs: string[]; say(message: JSONRPCMessage): void }> {
  const said: JSONRPCMessage[] = [];
  const logs: string[] = [];
  const client: Transport = {
    start: async () => undefined,
    close: async () => undefined,
    send: async (message) => void said.push(message),
  };
  const relay = new Relay({ client, locate: async () => ({ mcpUrl: url, token: 't', identity: identity() }), startDaemon: async () => undefined, reconnectBoundMs: 2_000, log: (line) => logs.push(line) });
  await relay.start();
  t.teardown(() => relay.close());
  await waitFor('the link', async () => logs.some((line) => line.startsWith('link 1 ')));
  return { said, logs, say: (message) => client.onmessage!(message) };
}

t.test('a 2026-07-28 answer that is no JSON-RPC message fails its request once, never reaches stdout, and the link stays', async (t) => {
  const daemon = await fakeDaemon(t, (request, response) => {
    if (request.method === 'tools/list') return void response.writeHead(200, { 'content-type': 'text/event-stream' }).end('data: not json\n\n');
    response.writeHead(200, { 'content-type': 'application/json' }).end('{"hello":1}');
  });
  const { said, logs, say } = await relayTo(t, daemon.url);
  say({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: MODERN_META } });
  say({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'x', _meta: MODERN_META } });
  await waitFor('both answered', async () => said.length >= 2);
  await new Promise((resolve) => setTimeout(resolve, 500));
  t.same(
    said.map((message) => ('error' in message ? [message.id, message.error.code, message.error.message] : message)),
    [
      [1, -32603, "the coffer daemon's answer is not JSON; see the daemon log"],
      [2, -32603, "the coffer daemon's answer is not a JSON-RPC message; see the daemon log"],
    ],
    'each request gets one error, and nothing else is written',
  );
  t.equal(daemon.modernPosts(), 2, 'neither is asked again');
  t.notOk(logs.some((line) => line.includes(' lost')), 'the link is kept');
});

t.test('a request whose answer keeps ending without it is sent three times, then fails', async (t) => {
  const daemon = await fakeDaemon(t, (_request, response) => void response.writeHead(200, { 'content-type': 'text/event-stream' }).end());
  const { said, say } = await relayTo(t, daemon.url);
  say({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: MODERN_META } });
  await waitFor('an answer', async () => said.length >= 1, 10_000);
  t.match(said, [{ id: 1, error: { code: -32010, message: /lost 3 times/, data: { reason: 'DAEMON_CONNECTION_LOST' } } }]);
  t.equal(daemon.modernPosts(), 3);
});

t.test('a request the shim cannot send (nested past what JSON.stringify takes) fails after three tries instead of tearing links down for ever', async (t) => {
  const daemon = await fakeDaemon(t, () => t.fail('no 2026-07-28 request here'));
  const { said, logs, say } = await relayTo(t, daemon.url);
  let deep: unknown = [];
  for (let depth = 0; depth < 20_000; depth++) deep = [deep];
  say({ jsonrpc: '2.0', id: 7, method: 'resources/list', params: { deep } });
  await waitFor('an answer', async () => said.length >= 1, 10_000);
  t.match(said, [{ id: 7, error: { code: -32010, data: { reason: 'DAEMON_CONNECTION_LOST' } } }]);
  t.equal(logs.filter((line) => / lost: /.test(line)).length, 3, 'three links, not one per retry for ever');
});

t.test('losses on a daemon that was then restarted do not count: a request survives any number of restarts', async (t) => {
  const daemon = await fakeDaemon(t, (request, response) => {
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    response.end(daemon.modernPosts() > 5 ? `data: ${JSON.stringify({ jsonrpc: '2.0', id: request.id, result: { tools: [] } })}\n\n` : '');
  });
  // Every link finds a daemon of its own, as after a restart.
  const { said, say } = await relayTo(t, daemon.url, () => `daemon ${daemon.modernPosts()}`);
  say({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: MODERN_META } });
  await waitFor('an answer', async () => said.length >= 1, 10_000);
  t.same(said, [{ jsonrpc: '2.0', id: 1, result: { tools: [] } }]);
  t.equal(daemon.modernPosts(), 6);
});

t.test('a request reusing the id of one still pending is refused by the shim (-32600), and the first still gets its own answer', async (t) => {
  const daemon = await fakeDaemon(
    t,
    () => t.fail('no 2026-07-28 request here'),
    (request, response) => {
      const answer = (): void => void response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: request.id, result: { method: request.method } }));
      if (request.method === 'tools/call') setTimeout(answer, 500);
      else answer();
    },
  );
  const { said, say } = await relayTo(t, daemon.url);
  say({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'slow' } });
  await new Promise((resolve) => setTimeout(resolve, 100));
  say({ jsonrpc: '2.0', id: 7, method: 'ping' });
  // Not thrown on a timeout: the comparison below shows what did arrive.
  await waitFor('two answers', async () => said.length >= 2, 5_000).catch(() => undefined);
  await new Promise((resolve) => setTimeout(resolve, 300));
  t.match(
    said,
    [
      { id: 7, error: { code: -32600, message: 'Invalid Request: this id is already used by a pending request; give each request an id of its own' } },
      { id: 7, result: { method: 'tools/call' } },
    ],
    'the reuse is refused, the first request is answered',
  );
  t.equal(said.length, 2, 'and nothing else is written');
});

t.test("a daemon request the daemon cancelled is forgotten: the client's late answer to it is dropped, not carried to the daemon", async (t) => {
  const answered: unknown[] = [];
  const daemon = await fakeDaemon(
    t,
    () => t.fail('no 2026-07-28 request here'),
    (request, response) => {
      if (request.method === undefined) {
        answered.push(request.id);
        return void response.writeHead(202).end();
      }
      // The call's stream asks the client for its roots, gives up on the question, then answers the call.
      const events = [
        { jsonrpc: '2.0', id: 'ask-1', method: 'roots/list' },
        { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'ask-1', reason: 'the upstream gave up' } },
        { jsonrpc: '2.0', id: request.id, result: { content: [] } },
      ];
      response.writeHead(200, { 'content-type': 'text/event-stream' }).end(events.map((event) => `event: message\ndata: ${JSON.stringify(event)}\n\n`).join(''));
    },
  );
  const { said, logs, say } = await relayTo(t, daemon.url);
  say({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'asks' } });
  await waitFor('the call answered', async () => said.some((message) => 'id' in message && message.id === 1 && 'result' in message));
  t.match(said.slice(0, 2), [{ id: 'ask-1', method: 'roots/list' }, { method: 'notifications/cancelled', params: { requestId: 'ask-1' } }], 'the client hears the question and its cancellation');
  say({ jsonrpc: '2.0', id: 'ask-1', result: { roots: [] } });
  await waitFor('the late answer dropped', async () => logs.some((line) => line.includes("dropped the client's answer ask-1")), 2_000).catch(() => undefined);
  await new Promise((resolve) => setTimeout(resolve, 200));
  t.same(answered, [], 'the daemon never gets an answer to the request it cancelled');
  t.ok(logs.some((line) => line.includes("dropped the client's answer ask-1")), 'the shim says it dropped it');
});
