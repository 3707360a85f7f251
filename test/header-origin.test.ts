// Headers are credentials for the origin they were given for: a PATCH that moves
// an http upstream to another origin without giving its headers again is refused
// (422, field transport.headers), and the new host never sees the old values.
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import t, { type Test } from 'tap';
import { EXIT } from '../src/cli/exit-codes.js';
import { REDACTED } from '../src/registry/server-config.js';
import { networkConfig, startNetworkFixture } from './fixtures/fixture-servers.js';
import { runCli } from './helpers/cli.js';
import { startGateway, waitFor } from './helpers/gateway.js';

const SECRET = 'Bearer old-origin-secret-5e1f';

/** The other host: records every request's headers and answers 503. */
async function capturingHost(t: Test): Promise<{ url: string; seen: IncomingHttpHeaders[] }> {
  const seen: IncomingHttpHeaders[] = [];
  const server = createServer((req, res) => {
    seen.push(req.headers);
    req.resume();
    res.writeHead(503).end();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}/mcp`, seen };
}

t.test('a URL moved to another origin does not carry the stored headers there', async (t) => {
  const upstream = await startNetworkFixture('http');
  t.teardown(() => upstream.kill());
  const other = await capturingHost(t);
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  await gateway.addServer(networkConfig('remote', 'http', upstream.url, {}, { Authorization: SECRET }));

  const moved = await gateway.api('PATCH', '/servers/remote', { transport: { url: other.url } });
  t.equal(moved.status, 422, 'only the URL: refused');
  t.equal(moved.body.error.code, 'CONFIG_INVALID');
  t.same(moved.body.error.details.errors.map((error: { field: string }) => error.field), ['transport.headers']);
  t.match(moved.body.error.message, `the stored headers (Authorization) were given for ${new URL(upstream.url).origin} and are not sent to ${new URL(other.url).origin}`);

  const redacted = await gateway.api('PATCH', '/servers/remote', { transport: { url: other.url, headers: { Authorization: REDACTED } } });
  t.equal(redacted.status, 422, 'the headers sent back redacted: refused');
  t.same(redacted.body.error.details.errors.map((error: { field: string }) => error.field), ['transport.headers.Authorization']);

  const cli = await runCli(gateway.home, 'mcp', 'update', 'remote', '--http', other.url);
  t.equal(cli.code, EXIT.INVALID_INPUT, 'the CLI: exit 6');
  t.match(cli.stderr, 'give them again');
  t.equal((await gateway.api('GET', '/servers/remote')).body.transport.url, upstream.url, 'nothing changed');

  t.equal((await gateway.api('PATCH', '/servers/remote', { transport: { url: other.url, headers: {} } })).status, 200, 'moved with headers {}');
  await waitFor('a request at the new host', () => other.seen.length > 0);
  t.equal(other.seen[0]!.authorization, undefined, 'sent no Authorization');

  const fresh = await gateway.api('PATCH', '/servers/remote', { transport: { url: upstream.url, headers: { Authorization: 'Bearer given-again' } } });
  t.equal(fresh.status, 200, 'moved back with headers given again');
  t.same(fresh.body.transport.headers, { Authorization: REDACTED });
  t.notOk(other.seen.some((headers) => JSON.stringify(headers).includes(SECRET)), 'the old value never reached the other host');
});
