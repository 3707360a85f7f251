// `coffer toolset ...`, `coffer client bind` and `coffer shim --toolset` with
// the real binary against a real daemon: the CLI round trip, its exit codes,
// and a real SDK client over stdio that sees only the toolset.
import t from 'tap';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { EXIT } from '../src/cli/exit-codes.js';
import { CLI_ENTRY } from '../src/paths.js';
import { fixtureLine, startCliDaemon } from './helpers/cli.js';

t.test('toolset add, list, show, update, rm; client bind; shim --toolset over stdio', async (t) => {
  const { home, cli, json, waitReady } = await startCliDaemon(t, 'coffer-toolsets-cli-');
  for (const name of ['a', 'b']) {
    t.equal((await cli('mcp', 'add', name, '--stdio', fixtureLine('--name', name, '--prompts'))).code, EXIT.OK);
    await waitReady(name);
  }

  const added = await json('toolset', 'add', 'dev', '--description', 'echo only', '--include', 'a/tool:echo', '--include', 'a/prompt:*', '--server', 'b', '--exclude', 'b/tool:c*');
  t.same(added.toolset.servers, [{ server: 'b', exclude: ['tool:c*'] }, { server: 'a', include: ['tool:echo', 'prompt:*'] }], '--server ones first, then those named by patterns');
  t.equal(added.toolset.endpoint, '/mcp/dev');
  t.equal((await cli('toolset', 'add', 'dev', '--server', 'a')).code, EXIT.CONFLICT, 'a taken name exits 5');
  const unknownServer = await cli('toolset', 'add', 'x', '--server', 'ghost');
  t.equal(unknownServer.code, EXIT.INVALID_INPUT, 'an unknown server exits 6');
  t.match(unknownServer.stderr, /servers\[0\]\.server: no server named "ghost"/);
  t.equal((await cli('toolset', 'add', 'x', '--include', 'tool:echo')).code, EXIT.USAGE, 'a pattern without its server is a usage error');
  t.equal((await cli('toolset', 'add', 'x')).code, EXIT.USAGE, 'a toolset needs rules');

  const listed = await json('toolset', 'list');
  t.same(listed.toolsets.map((toolset: { name: string }) => toolset.name), ['dev']);
  const table = await cli('toolset', 'show', 'dev');
  t.match(table.stdout, /dev\s+\/mcp\/dev\s+echo only/);
  t.match(table.stdout, /a\s+tool:echo prompt:\*/);
  t.notMatch(table.stdout, /HOLDS NOW/, 'what it holds only when asked (it lists every server of the set)');
  const holding = await cli('toolset', 'show', 'dev', '--holds');
  t.match(holding.stdout, /HOLDS NOW\s+NAME OR URI\n/);
  t.match(holding.stdout, /\ntool\s+a__echo\n/);
  t.notMatch(holding.stdout, /a__whoami|b__crash/, 'what the rules leave out is not held');
  const held = (await json('toolset', 'show', 'dev', '--holds')).holds;
  t.ok(held.tools.includes('a__echo') && held.tools.includes('b__echo') && held.prompts.includes('a__greet'), 'as JSON too');
  t.same(held.left_out, []);

  const updated = await json('toolset', 'update', 'dev', '--include', 'a/tool:echo', '--include', 'a/tool:whoami');
  t.same(updated.toolset.servers, [{ server: 'a', include: ['tool:echo', 'tool:whoami'] }], 'rules given replace the old ones');
  t.equal(updated.toolset.description, 'echo only', 'the description is kept');
  t.equal((await cli('toolset', 'update', 'ghost', '--description', 'x')).code, EXIT.NOT_FOUND);

  const client = await json('client', 'add', 'ide', '--toolset', 'dev');
  t.equal(client.client.toolset, 'dev');
  t.match((await cli('client', 'list')).stdout, /ide\s+\S+\s+dev/);
  t.equal((await cli('toolset', 'rm', 'dev')).code, EXIT.CONFLICT, 'a bound toolset is not removed');
  t.equal((await cli('client', 'bind', 'ide')).code, EXIT.USAGE);
  t.equal((await cli('client', 'bind', 'ide', '--toolset', 'nope')).code, EXIT.NOT_FOUND);

  // A real client over stdio, through the shim, sees the toolset only.
  const transport = new StdioClientTransport({ command: process.execPath, args: [CLI_ENTRY, 'shim', '--toolset', 'dev'], env: { ...(process.env as Record<string, string>), COFFER_HOME: home }, stderr: 'pipe' });
  const mcp = new Client({ name: 'shim-toolset', version: '1.0.0' });
  await mcp.connect(transport);
  t.teardown(() => mcp.close());
  t.same((await mcp.listTools()).tools.map((tool) => tool.name).sort(), ['a__echo', 'a__whoami'], 'the shim relays to /mcp/dev');
  const refused = await mcp.callTool({ name: 'b__echo', arguments: {} }).catch((error: unknown) => error);
  t.ok(refused instanceof McpError && (refused.data as { code?: string }).code === 'NOT_IN_TOOLSET', 'outside the toolset is refused through the shim');
  t.equal((await cli('shim', '--toolset', 'a/b')).code, EXIT.USAGE, 'the shim refuses a name that is not a toolset name');

  t.match((await cli('client', 'bind', 'ide', '--none')).stdout, /sees the whole surface/);
  t.equal((await cli('toolset', 'rm', 'dev')).code, EXIT.OK);
  t.equal((await cli('toolset', 'show', 'dev')).code, EXIT.NOT_FOUND);
  const audit = await json('audit', 'list', '--limit', '50');
  const events = audit.entries.map((entry: { event_type: string }) => entry.event_type);
  for (const type of ['toolset_added', 'toolset_updated', 'client_bound', 'toolset_removed']) t.ok(events.includes(type), `audited: ${type}`);
});
