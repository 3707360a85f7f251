// The shim's client side, without a daemon: what the client writes on stdin
// reaches the relay as messages, whatever the size and however it is split.
import { PassThrough } from 'node:stream';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import t from 'tap';
import { stdioTransport } from '../src/shim/shim.js';

async function reader(): Promise<{ stdin: PassThrough; messages: JSONRPCMessage[]; errors: Error[] }> {
  const stdin = new PassThrough();
  const transport = stdioTransport(stdin, new PassThrough());
  const messages: JSONRPCMessage[] = [];
  const errors: Error[] = [];
  transport.onmessage = (message) => messages.push(message);
  transport.onerror = (error) => errors.push(error);
  await transport.start();
  return { stdin, messages, errors };
}

const settled = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

t.test('a 32 MB line read in 64 KB pipe reads takes time linear in its size', async (t) => {
  const { stdin, messages } = await reader();
  const piece = Buffer.alloc(64 * 1024, 'x');
  const started = Date.now();
  stdin.write('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"n","arguments":{"a":"');
  for (let sent = 0; sent < 32 * 1024 * 1024; sent += piece.length) stdin.write(piece);
  stdin.write('"}}}\n{"jsonrpc":"2.0","id":2,"method":"ping"}\n');
  while (messages.length < 2 && Date.now() - started < 120_000) await settled();
  // Each read copied all before it: over a minute; joined once: about a second.
  t.ok(Date.now() - started < 10_000, `read in ${Date.now() - started} ms`);
  t.match(messages, [{ id: 1, params: { name: 'n' } }, { id: 2, method: 'ping' }]);
  t.equal((messages[0] as unknown as { params: { arguments: { a: string } } }).params.arguments.a.length, 32 * 1024 * 1024);
});

t.test('lines split anywhere, several in one read, CRLF and a bad line between good ones', async (t) => {
  const { stdin, messages, errors } = await reader();
  const text = '{"jsonrpc":"2.0","id":"a","method":"ping"}\r\nnot json\n{"jsonrpc":"2.0","id":3,"method":"ping"}\n{"jsonrpc":"2.0","method":"notifications/initialized"}\n';
  for (const character of text.slice(0, 30)) stdin.write(character);
  stdin.write(text.slice(30));
  await settled();
  t.match(messages, [{ id: 'a' }, { id: 3 }, { method: 'notifications/initialized' }]);
  t.equal(messages.length, 3);
  t.equal(errors.length, 1, 'the bad line is reported, not fatal');
});
