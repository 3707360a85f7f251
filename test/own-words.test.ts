// The user's own words for a tool or prompt, through a running daemon, real
// fixture upstreams and real clients of both eras: listed under the own name
// with the own description, called through to the upstream's name, announced
// with list_changed, kept across a daemon restart and an upstream upgrade that
// drops the tool and brings it back, found by search, refused when the name is
// taken or one model hosts would refuse; and the CLI's `coffer mcp cap set`.
import t from 'tap';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { stdioFixture } from './fixtures/fixture-servers.js';
import { runCli } from './helpers/cli.js';
import { startGateway, tempHome, waitFor, type Gateway } from './helpers/gateway.js';
import { modernClient, modernPost } from './helpers/modern.js';

const find = (view: any, key: string) => view.tools.items.find((item: any) => item.key === key);
const words = (gateway: Gateway, server: string, type: string, body: Record<string, unknown>) => gateway.api('POST', `/servers/${server}/capabilities/${type}/words`, body);
const listed = async (client: { listTools(): Promise<{ tools: Array<{ name: string; description?: string }> }> }) =>
  new Map((await client.listTools()).tools.map((tool) => [tool.name, tool.description]));
const echoed = (result: any) => result.structuredContent;

/** The fixture's tools as the upstream's `--tools` gives them (an "upgrade" changes the list). */
const withTools = (tools: string) => ({ transport: { args: [...(stdioFixture('fx').transport as { args: string[] }).args, '--tools', tools] } });

async function ready(gateway: Gateway, server: string): Promise<void> {
  await waitFor(`${server} ready`, async () => (await gateway.api('GET', `/servers/${server}`)).body.health?.state === 'ready', 60_000);
}

t.test('an own name and description: listed in both eras, called through to the upstream name, announced, audited, kept across an upgrade, cleared', async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  await gateway.addServer(stdioFixture('fx', ['--prompts']));
  const client = await gateway.client();
  let notified = 0;
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => void notified++);
  t.ok((await listed(client)).has('fx__echo'));

  const set = await words(gateway, 'fx', 'tool', { key: 'echo', name: 'repeat_back', description: 'Says your words again, verbatim.' });
  t.equal(set.status, 200, JSON.stringify(set.body));
  t.match(set.body.preference, { capability_key: 'echo', own_name: 'repeat_back', own_description: 'Says your words again, verbatim.', enabled: true });
  await waitFor('tools/list_changed after the words changed', async () => notified > 0);

  const tools = await listed(client);
  t.equal(tools.get('fx__repeat_back'), 'Says your words again, verbatim.', 'listed under the own name with the own description');
  t.notOk(tools.has('fx__echo'), 'not under the upstream name as well');
  t.same(echoed(await client.callTool({ name: 'fx__repeat_back', arguments: { said: 'hi' } })), { said: 'hi' }, 'routed to the upstream echo');

  const modern = await modernClient(gateway);
  t.teardown(() => modern.close());
  const modernTools = new Map((await modern.listTools()).tools.map((tool) => [tool.name, tool.description]));
  t.equal(modernTools.get('fx__repeat_back'), 'Says your words again, verbatim.', '2026-07-28 era: the same list');
  t.notOk(modernTools.has('fx__echo'));
  t.same(echoed(await modern.callTool({ name: 'fx__repeat_back', arguments: { era: 'modern' } })), { era: 'modern' });

  const prompt = await words(gateway, 'fx', 'prompt', { key: 'greet', name: 'hello' });
  t.equal(prompt.status, 200);
  t.same((await client.listPrompts()).prompts.map((p) => p.name), ['fx__hello'], 'prompts too');
  t.ok((await client.getPrompt({ name: 'fx__hello', arguments: { name: 'Ada' } })).messages.length > 0, 'prompts/get reaches greet');

  const view = (await gateway.api('GET', '/servers/fx/capabilities')).body;
  t.match(find(view, 'echo'), { own_name: 'repeat_back', own_description: 'Says your words again, verbatim.', description: 'Returns its arguments.', exposed_name: 'fx__repeat_back' }, "the view has both the user's and the upstream's words");
  const audit = await gateway.api('GET', '/audit?server=fx&event_type=capability_words_set&limit=10');
  t.ok(audit.body.entries.some((entry: any) => entry.payload.key === 'echo' && entry.payload.name === 'repeat_back'), 'audited');
  const invocations = await gateway.api('GET', '/invocations?server=fx&limit=10');
  t.ok(invocations.body.invocations.some((row: any) => row.key === 'echo'), "recorded under the upstream's name");

  // An upgrade drops echo: its words stay with the known key, and come back with it (R4, R5).
  t.equal((await gateway.api('PATCH', '/servers/fx', withTools('whoami'))).status, 200);
  await ready(gateway, 'fx');
  await waitFor('echo gone from the list', async () => !(await listed(client)).has('fx__repeat_back'));
  t.match(find((await gateway.api('GET', '/servers/fx/capabilities')).body, 'echo'), { live: false, own_name: 'repeat_back' }, 'kept while the tool is gone');
  t.equal((await gateway.api('PATCH', '/servers/fx', withTools('all'))).status, 200);
  await ready(gateway, 'fx');
  await waitFor('echo back under its own name', async () => (await listed(client)).get('fx__repeat_back') === 'Says your words again, verbatim.');
  t.same(echoed(await client.callTool({ name: 'fx__repeat_back', arguments: { back: true } })), { back: true });

  // Clearing gives the upstream's words back.
  notified = 0;
  t.equal((await words(gateway, 'fx', 'tool', { key: 'echo', name: null, description: '' })).status, 200);
  await waitFor('list_changed after clearing', async () => notified > 0);
  const cleared = await listed(client);
  t.equal(cleared.get('fx__echo'), 'Returns its arguments.');
  t.notOk(cleared.has('fx__repeat_back'));
});

t.test('refused: a name another tool of the server has, a name model hosts refuse, a resource, an unknown key', async (t) => {
  const gateway = await startGateway({ nameBudget: 30 });
  t.teardown(() => gateway.close());
  await gateway.addServer(stdioFixture('fx', ['--resources']));
  await (await gateway.client()).listTools();

  const upstreamName = await words(gateway, 'fx', 'tool', { key: 'echo', name: 'whoami' });
  t.equal(upstreamName.status, 409);
  t.match(upstreamName.body.error, { code: 'RESOURCE_ALREADY_EXISTS', details: { name: 'whoami', taken_by: 'whoami' } }, "another tool's upstream name");
  t.equal((await words(gateway, 'fx', 'tool', { key: 'whoami', name: 'who' })).status, 200);
  const ownName = await words(gateway, 'fx', 'tool', { key: 'echo', name: 'who' });
  t.match(ownName, { status: 409, body: { error: { code: 'RESOURCE_ALREADY_EXISTS', details: { taken_by: 'whoami' } } } }, "another tool's own name");

  for (const name of ['two words', 'fx__echo', 'a'.repeat(27), 'é']) {
    const refused = await words(gateway, 'fx', 'tool', { key: 'echo', name });
    t.match(refused, { status: 422, body: { error: { code: 'CONFIG_INVALID' } } }, `"${name}" is refused`);
  }
  t.equal((await words(gateway, 'fx', 'tool', { key: 'echo', name: 'a'.repeat(26) })).status, 200, 'fx__ + 26 characters fit a budget of 30');
  t.match(await words(gateway, 'fx', 'resource', { key: 'fixture://static', name: 'static' }), { status: 422, body: { error: { code: 'CONFIG_INVALID' } } });
  t.match(await words(gateway, 'fx', 'tool', { key: 'nope', name: 'fine' }), { status: 404, body: { error: { code: 'RESOURCE_NOT_FOUND' } } });
  t.match(await words(gateway, 'fx', 'tool', { key: 'echo' }), { status: 422 }, 'nothing to set');

  // The CLI: exit 5 for a taken name, 6 for an invalid one, 0 and the new name otherwise.
  t.equal((await runCli(gateway.home, 'mcp', 'cap', 'set', 'fx', 'tool:echo', '--name', 'who')).code, 5);
  t.equal((await runCli(gateway.home, 'mcp', 'cap', 'set', 'fx', 'tool:echo', '--name', 'no way')).code, 6);
  const ok = await runCli(gateway.home, 'mcp', 'cap', 'set', 'fx', 'tool:echo', '--name', 'say', '--description', 'Mine.');
  t.equal(ok.code, 0, ok.stderr);
  t.match(ok.stdout, "name say, description your own");
  const list = await runCli(gateway.home, 'mcp', 'cap', 'list', 'fx');
  t.match(list.stdout, /tool:echo\s.*fx__say \*/, 'cap list shows the exposed own name, marked');
});

t.test('an own name moved to another tool: a call by it reaches that tool before any client lists again', async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  await gateway.addServer(stdioFixture('fx'));
  const client = await gateway.client();
  t.equal((await words(gateway, 'fx', 'tool', { key: 'echo', name: 'mine' })).status, 200);
  t.ok((await listed(client)).has('fx__mine'));
  t.same(echoed(await client.callTool({ name: 'fx__mine', arguments: { said: 'hi' } })), { said: 'hi' }, 'mine is echo');

  t.equal((await words(gateway, 'fx', 'tool', { key: 'echo', name: null })).status, 200);
  t.equal((await words(gateway, 'fx', 'tool', { key: 'whoami', name: 'mine' })).status, 200);
  // No list in between: the last merged list still names echo "mine".
  const moved = await client.callTool({ name: 'fx__mine', arguments: { said: 'hi' } });
  t.match(JSON.parse((moved.content as Array<{ text: string }>)[0]!.text), { name: 'fx', pid: Number }, `mine is whoami now: ${JSON.stringify(moved)}`);
  const invocations = await gateway.api('GET', '/invocations?server=fx&limit=1');
  t.equal(invocations.body.invocations[0]?.key, 'whoami', "recorded under the tool the name leads to");
});

t.test('kept across a daemon restart: a stateless call by the own name before any list reaches the upstream name', async (t) => {
  const home = tempHome();
  const first = await startGateway({}, home);
  await first.addServer(stdioFixture('fx'));
  await (await first.client()).listTools();
  t.equal((await words(first, 'fx', 'tool', { key: 'echo', name: 'parrot' })).status, 200);
  await first.daemon.stop();

  const gateway = await startGateway({}, home);
  t.teardown(() => gateway.close());
  await ready(gateway, 'fx');
  const called = await modernPost(gateway, 'tools/call', { name: 'fx__parrot', arguments: { after: 'restart' } });
  const answer = called.messages.find((message) => message.id === 1);
  t.same(answer?.result?.structuredContent, { after: 'restart' }, called.text);
  const client = await gateway.client();
  t.ok((await listed(client)).has('fx__parrot'), 'listed under the own name after the restart');
  t.same(echoed(await client.callTool({ name: 'fx__echo', arguments: { old: 'name' } })), { old: 'name' }, 'a client holding the old list still reaches the tool');
});

t.test('an own name an upgrade brings as an upstream name: the upstream tool keeps it, after a restart before any list too', async (t) => {
  const home = tempHome();
  const first = await startGateway({}, home);
  await first.addServer(stdioFixture('fx', ['--tools', 'echo']));
  await (await first.client()).listTools();
  t.equal((await words(first, 'fx', 'tool', { key: 'echo', name: 'whoami' })).status, 200, 'whoami is no upstream name yet');
  t.equal((await first.api('PATCH', '/servers/fx', withTools('echo,whoami'))).status, 200);
  await ready(first, 'fx');
  t.same([...(await listed(await first.client('upgraded'))).keys()].sort(), ['fx__echo', 'fx__whoami'], 'listed: fx__whoami is the upstream whoami, echo under its own name again');
  await first.daemon.stop();

  const gateway = await startGateway({}, home);
  t.teardown(() => gateway.close());
  await ready(gateway, 'fx');
  const called = (await (await gateway.client('holder')).callTool({ name: 'fx__whoami', arguments: { probe: 1 } })) as { content: Array<{ text: string }> };
  t.match(called.content[0]?.text, /"name":"fx"/, 'a call before any list reaches the upstream whoami, as the list routes it');
});

t.test('search finds a tool by the words the user gave it', async (t) => {
  const gateway = await startGateway({ toolsMode: 'search' });
  t.teardown(() => gateway.close());
  await gateway.addServer(stdioFixture('fx'));
  const client = await gateway.client();
  const search = async (query: string): Promise<string[]> => {
    const answer = (await client.callTool({ name: 'coffer__search_tools', arguments: { query } })) as { content: Array<{ text: string }> };
    const text = answer.content[0]!.text;
    return text.startsWith('{') ? (JSON.parse(text) as { tools: Array<{ name: string }> }).tools.map((tool) => tool.name) : [];
  };
  t.notOk((await search('mynah songbird')).includes('fx__echo'), 'the upstream words do not say it');
  t.equal((await words(gateway, 'fx', 'tool', { key: 'echo', name: 'mimic', description: 'Repeats what it hears, like a mynah bird.' })).status, 200);
  await waitFor('found by the own description', async () => (await search('mynah')).includes('fx__mimic'));
  t.equal((await search('mimic'))[0], 'fx__mimic', 'and first by the own name');
  const called = await client.callTool({ name: 'coffer__call_tool', arguments: { name: 'fx__mimic', arguments: { via: 'search' } } });
  t.same(echoed(called), { via: 'search' }, 'called through the meta-tool by the own name');
});
