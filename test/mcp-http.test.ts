// The /mcp answer format (the plain-JSON fast path): a POST whose answer is the
// only message gets plain JSON; progress, logging or relayed requests — or a
// call outlasting the keep-alive interval — switch it to an SSE stream; a
// batch is one JSON array in request order; notifications get 202; DELETE
// mid-call ends the pending POST. The SDK client must not notice any of it.
import t from 'tap';
import { startGateway } from './helpers/gateway.js';
import { mcpAuthHeader, mcpPost } from './helpers/mcp-post.js';
import { stdioFixture } from './fixtures/fixture-servers.js';

t.test('answers are JSON unless something must stream', async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  await gateway.addServer(stdioFixture('alpha'));
  const post = async (body: unknown, headers: Record<string, string> = {}) => {
    const answer = await mcpPost(gateway, body, headers);
    return { status: answer.status, type: answer.contentType, session: answer.sessionId, text: answer.text };
  };
  const init = await post({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
  t.equal(init.status, 200);
  const session = { 'mcp-session-id': init.session!, 'mcp-protocol-version': '2025-06-18' };
  t.equal((await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, session)).status, 202, 'a notification: 202');

  // An id or progressToken the SDK's schema refuses (not a safe integer) must not slip past the fast path unanswered.
  const unsafe = await post({ jsonrpc: '2.0', id: 9, method: 'ping', params: { _meta: { progressToken: 1e300 } } }, session);
  t.equal(unsafe.status, 400, 'an unsafe-integer progressToken is refused, not left unanswered');
  t.equal((await post({ jsonrpc: '2.0', id: 2 ** 60, method: 'ping' }, session)).status, 400, 'so is an unsafe-integer id');

  const call = await post({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'alpha__echo', arguments: { a: 1 } } }, session);
  t.equal(call.type, 'application/json', 'a plain call is answered as JSON');
  t.equal(call.session, init.session, 'with the session header');
  t.equal(JSON.parse(call.text).id, 2);

  const progress = await post({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'alpha__slow', arguments: { ms: 300, steps: 3 }, _meta: { progressToken: 'p' } } }, session);
  t.equal(progress.type, 'text/event-stream', 'a call reporting progress streams');
  t.ok((progress.text.match(/notifications\/progress/g) ?? []).length >= 1 && /"id":3/.test(progress.text), 'progress events, then the answer, on that stream');

  const batch = await post([{ jsonrpc: '2.0', id: 4, method: 'ping' }, { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'alpha__slow', arguments: { ms: 200, steps: 1 } } }], session);
  t.equal(batch.type, 'application/json');
  t.same((JSON.parse(batch.text) as Array<{ id: number }>).map((message) => message.id), [4, 5], 'a batch: one JSON array in request order');

  const long = await post({ jsonrpc: '2.0', id: 6, method: 'tools/call', params: { name: 'alpha__slow', arguments: { ms: 6_500, steps: 1 } } }, session);
  t.equal(long.type, 'text/event-stream', 'a call outlasting the keep-alive interval streams');
  t.ok(/: keepalive/.test(long.text) && /"id":6/.test(long.text), 'keep-alive comments, then the answer');

  const pending = post({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'alpha__slow', arguments: { ms: 3_000, steps: 1 } } }, session);
  await new Promise((resolve) => setTimeout(resolve, 300));
  const deleted = await fetch(`${gateway.url}/mcp`, { method: 'DELETE', headers: { ...session, ...mcpAuthHeader(gateway) } });
  t.equal(deleted.status, 200);
  const ended = await pending;
  t.same([ended.status, ended.text], [200, ''], 'DELETE mid-call ends the pending POST without an answer');

  const client = await gateway.client('sdk');
  t.notOk((await client.callTool({ name: 'alpha__echo', arguments: { x: 'y' } })).isError, 'the SDK client reads JSON answers');
  const seen: unknown[] = [];
  await client.callTool({ name: 'alpha__slow', arguments: { ms: 300, steps: 2 } }, undefined, { onprogress: (event) => void seen.push(event) });
  t.ok(seen.length >= 1, 'and streamed progress');
});
