// The page size of the merged lists: by default one page holds a surface of
// thousands of tools (clients that read only the first page miss nothing);
// COFFER_PAGE_SIZE sets it, and a bad value is refused before a daemon starts.
import { join } from 'node:path';
import t from 'tap';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { EXIT } from '../src/cli/exit-codes.js';
import { DIST_ROOT } from '../src/paths.js';
import { spawnHello, stdioFixture } from './fixtures/fixture-servers.js';
import { fixtureLine, runCli, startCliDaemon, tempDir } from './helpers/cli.js';
import { startGateway } from './helpers/gateway.js';
import { homeMcpTransport } from './helpers/mcp-post.js';

const TOOLS = 2_500;

t.test(`by default ${TOOLS} tools come in one page`, async (t) => {
  const host = await spawnHello<{ port: number }>(join(DIST_ROOT, 'bench', 'synthetic', 'http-host.js'), ['--tools', String(TOOLS)]);
  t.teardown(host.kill);
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  await gateway.addServer({ name: 'big', transport: { type: 'http', url: `http://127.0.0.1:${host.hello.port}/s/0/mcp` }, timeouts: { request_ms: 60_000 } });
  const page = await (await gateway.client()).listTools();
  t.equal(page.tools.length, TOOLS, 'every tool in the first page');
  t.equal(page.nextCursor, undefined, 'no second page to miss');
  t.comment(`one tools/list page of ${TOOLS} synthetic tools: ${Math.round(Buffer.byteLength(JSON.stringify(page)) / 1024)} KB`);
});

t.test('COFFER_PAGE_SIZE sets the page size; a bad value exits 2 before anything starts', async (t) => {
  process.env.COFFER_PAGE_SIZE = '0';
  const refused = await runCli(tempDir('coffer-page-size-bad-'), 'serve').finally(() => delete process.env.COFFER_PAGE_SIZE);
  t.equal(refused.code, EXIT.USAGE);
  t.match(refused.stderr, /COFFER_PAGE_SIZE expects a positive integer, got '0'/);

  process.env.COFFER_PAGE_SIZE = '2';
  const daemon = await startCliDaemon(t, 'coffer-page-size-').finally(() => delete process.env.COFFER_PAGE_SIZE);
  t.equal((await daemon.cli('mcp', 'add', 'fx', '--stdio', fixtureLine('--name', 'fx'))).code, EXIT.OK);
  await daemon.waitReady('fx');
  const client = new Client({ name: 'pages', version: '1.0.0' });
  await client.connect(homeMcpTransport(daemon.home));
  t.teardown(() => client.close());
  const first = await client.listTools();
  t.equal(first.tools.length, 2);
  t.ok(first.nextCursor, 'a second page follows');
});

t.test('a list that changes between two pages: the next page goes on after the last item given, skipping none, and from where it stood if it is gone', async (t) => {
  const gateway = await startGateway({ pageSize: 2 });
  t.teardown(() => gateway.close());
  await gateway.addServer(stdioFixture('a'));
  const client = await gateway.client('pager');
  const all = async (): Promise<string[]> => {
    const names: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor === undefined ? {} : { cursor });
      names.push(...page.tools.map((tool) => tool.name));
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    return names;
  };
  const before = await all();
  t.ok(before.length > 4, `several pages: ${before.join(', ')}`);
  const toggle = (key: string, on: boolean) => gateway.api('POST', `/servers/a/capabilities/tool/${on ? 'enable' : 'disable'}`, { key });

  const first = await client.listTools();
  t.same(first.tools.map((tool) => tool.name), before.slice(0, 2));
  t.equal((await toggle(before[0]!.slice('a__'.length), false)).status, 200);
  const second = await client.listTools({ cursor: first.nextCursor! });
  t.same(second.tools.map((tool) => tool.name), before.slice(2, 4), 'a tool of the first page switched off: the second page is still what follows it');
  await toggle(before[0]!.slice('a__'.length), true);

  const again = await client.listTools();
  t.equal((await toggle(before[1]!.slice('a__'.length), false)).status, 200);
  const gone = await client.listTools({ cursor: again.nextCursor! });
  t.same(gone.tools.map((tool) => tool.name), before.slice(2, 4), 'the last item given is gone: the next page starts where it stood, and skips nothing');
});
