// coffer reports one version everywhere, the one in package.json: `coffer
// --version`, the daemon's serverInfo to MCP clients, and the clientInfo the
// actor presents to every upstream it initialises.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import t from 'tap';
import { PROJECT_ROOT } from '../src/paths.js';
import { streamableHttpHandler } from './fixtures/http-serving.js';
import { runCli, tempDir } from './helpers/cli.js';
import { startGateway } from './helpers/gateway.js';

const PACKAGE_VERSION = (JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as { version: string }).version;

t.test('coffer --version prints the package version', async (t) => {
  const result = await runCli(tempDir('coffer-version-'), '--version');
  t.equal(result.code, 0);
  t.equal(result.stdout.trim(), PACKAGE_VERSION);
});

t.test('the daemon and the actor present the package version', async (t) => {
  const seen: Array<{ name: string; version: string } | undefined> = [];
  const handler = streamableHttpHandler(() => {
    const server = new McpServer({ name: 'recorder', version: '1.0.0' });
    server.registerTool('noop', { description: 'does nothing' }, () => ({ content: [] }));
    server.server.oninitialized = () => seen.push(server.server.getClientVersion());
    return server;
  });
  const upstream = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      void handler(req, res, text ? JSON.parse(text) : undefined);
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  t.teardown(() => upstream.close());
  const { port } = upstream.address() as { port: number };

  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  await gateway.addServer({ name: 'recorder', transport: { type: 'http', url: `http://127.0.0.1:${port}/mcp` } });
  t.ok(seen.length > 0, 'the upstream was initialised');
  t.same(seen[0], { name: 'coffer', version: PACKAGE_VERSION }, "the actor's clientInfo");

  const client = await gateway.client();
  t.same(client.getServerVersion(), { name: 'coffer', version: PACKAGE_VERSION }, "the daemon's serverInfo");
});
