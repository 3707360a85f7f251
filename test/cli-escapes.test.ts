// The real CLI against a daemon with a hostile upstream and a client calling a
// tool named with escapes: every human-readable output shows control
// characters as `\xNN` text (no title set, no screen cleared, no clipboard
// written), and --json gives the exact strings.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import t, { type Test } from 'tap';
import { EXIT } from '../src/cli/exit-codes.js';
import { joinCommandLine } from '../src/cli/split.js';
import { escapeControls } from '../src/protocol/untrusted-text.js';
import { HOSTILE_UPSTREAM } from './fixtures/fixture-servers.js';
import { HOSTILE } from './fixtures/hostile-names.js';
import { startCliDaemon, type CliResult } from './helpers/cli.js';
import { homeMcpTransport } from './helpers/mcp-post.js';
import { waitFor } from './helpers/wait.js';

const RAW_CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/;

/** As the CLI shows it: each control as \xNN. */
const shown = (text: string): string => escapeControls(text, { lines: true });

function assertInert(t: Test, result: CliResult, what: string): void {
  t.equal(result.code, EXIT.OK, `${what}: ${result.stderr}`);
  t.notOk(RAW_CONTROL.test(result.stdout), `${what}: no raw control character on stdout`);
  t.notOk(RAW_CONTROL.test(result.stderr), `${what}: none on stderr`);
}

t.test('cap list, test, show and invocations print upstream- and client-supplied text escaped; --json exact', async (t) => {
  const daemon = await startCliDaemon(t, 'coffer-cli-escapes-');
  t.equal((await daemon.cli('mcp', 'add', 'hostile', '--stdio', joinCommandLine([process.execPath, HOSTILE_UPSTREAM]))).code, EXIT.OK);
  await daemon.waitReady('hostile');
  const description = 'imported from a project file \x1b]0;desc-title\x07\x1b[2J';
  t.equal((await daemon.api('PATCH', '/servers/hostile', { description })).status, 200);

  const caps = await daemon.cli('mcp', 'cap', 'list', 'hostile');
  assertInert(t, caps, 'mcp cap list');
  t.ok(caps.stdout.includes(shown(HOSTILE.tool)), 'the tool name, escaped');
  t.ok(caps.stdout.includes(shown(HOSTILE.prompt)), 'the prompt name, escaped');
  const capsJson = JSON.stringify(await daemon.json('mcp', 'cap', 'list', 'hostile'));
  t.ok(capsJson.includes(JSON.stringify(HOSTILE.tool)), '--json: the exact tool name');

  const tested = await daemon.cli('mcp', 'test', 'hostile');
  assertInert(t, tested, 'mcp test');
  t.ok(tested.stdout.includes(shown(HOSTILE.serverName)), 'the server name, escaped');
  t.ok(tested.stdout.includes(shown(HOSTILE.serverVersion)), 'the server version, escaped');
  t.match(await daemon.json('mcp', 'test', 'hostile'), { server_info: { name: HOSTILE.serverName, version: HOSTILE.serverVersion } }, '--json: exact');

  const show = await daemon.cli('mcp', 'show', 'hostile');
  assertInert(t, show, 'mcp show');
  t.ok(show.stdout.includes(shown(description)), 'the description, escaped');
  t.equal((await daemon.json('mcp', 'show', 'hostile')).server.description, description, '--json: exact');

  // No hostile upstream needed: a client names a tool with escapes, and the row replays in the user's terminal.
  const client = new Client({ name: 'escapes-test', version: '1.0.0' });
  await client.connect(homeMcpTransport(daemon.home));
  t.teardown(() => client.close().catch(() => undefined));
  const clientTool = 'x\x1b]52;c;cHduZWQ=\x07\x1b[2J\ny';
  // Refused (no list names it), and recorded all the same.
  t.match(await client.callTool({ name: `hostile__${clientTool}` }).catch((error: unknown) => error), { data: { code: 'RESOURCE_NOT_FOUND' } });
  await waitFor('the call in the invocation log', async () => (await daemon.json('mcp', 'invocations')).invocations.some((row: { key: string }) => row.key === clientTool));
  const invocations = await daemon.cli('mcp', 'invocations');
  assertInert(t, invocations, 'mcp invocations');
  t.ok(invocations.stdout.includes(shown(clientTool)), 'the key, escaped, on its own row');
  t.notMatch(invocations.stdout, /^y/m, 'a line feed in a name cannot start a row of its own');
});
