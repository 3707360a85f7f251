// Results round-trip through the namespace, with the real server-everything:
// a resource link or embedded resource a tool or prompt returns carries the
// exposed URI, and that URI reads through coffer (even though no list has it);
// resources/read answers with the exposed URI. coffer's initialize answer
// carries the instructions of the upstreams enabled and connected now.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import t, { type Test } from 'tap';
import { exposeResultUris } from '../src/router/expose-results.js';
import { FIXTURE } from './fixtures/fixture-servers.js';
import { startGateway, type Gateway } from './helpers/gateway.js';
import { waitReady } from './helpers/rest.js';
import { directEverything, everythingStdio } from './helpers/upstreams.js';

type Block = { type: string; uri?: string; resource?: { uri: string } };

// server-everything stamps its generated resources with the clock ("created at 12:41:01 PM"): two reads may straddle a second.
// Its blobs are base64 text, so they are decoded before the times are taken out.
const unclocked = (result: unknown) =>
  JSON.parse(JSON.stringify(result, (key, value: unknown) => (key === 'blob' && typeof value === 'string' ? Buffer.from(value, 'base64').toString('utf8') : value)).replace(/\d{1,2}:\d\d:\d\d [AP]M/g, '<time>'));

async function everything(t: Test): Promise<{ gateway: Gateway; client: Client; direct: Client }> {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  await gateway.addServer(everythingStdio('every'));
  const direct = await directEverything();
  t.teardown(() => direct.close());
  return { gateway, client: await gateway.client('roundtrip'), direct };
}

t.test('a resource_link a tool returns carries the exposed URI and reads through coffer, though no list has it', async (t) => {
  const { client, direct } = await everything(t);
  const result = await client.callTool({ name: 'every__get-resource-links', arguments: { count: 2 } });
  const links = (result.content as Block[]).filter((block) => block.type === 'resource_link').map((block) => block.uri);
  t.same(links, ['coffer://every/demo://resource/dynamic/blob/1', 'coffer://every/demo://resource/dynamic/text/2'], 'links exposed');
  const listed = (await client.listResources()).resources.map((resource) => resource.uri);
  for (const uri of links) t.notOk(listed.includes(uri!), `${uri} is in no list: it routes by its prefix`);

  for (const uri of links) {
    const original = uri!.slice('coffer://every/'.length);
    const [mine, theirs] = await Promise.all([client.readResource({ uri: uri! }), direct.readResource({ uri: original })]);
    t.equal(mine.contents[0]?.uri, uri, `${uri}: read through coffer, contents[].uri as the client asked`);
    t.same(unclocked(mine), unclocked(exposeResultUris('resources', theirs, 'every')), `${uri}: the direct read, URIs exposed`);
  }
  // The upstream's own form is what a client got before: coffer does not know it.
  await t.rejects(client.readResource({ uri: 'demo://resource/dynamic/text/2' }), /unknown resource/, 'the unexposed URI does not route');
});

t.test('an embedded resource of a tool result and of a prompt carries the exposed URI, and reads back', async (t) => {
  const { client, direct } = await everything(t);
  const reference = await client.callTool({ name: 'every__get-resource-reference', arguments: { resourceType: 'Text', resourceId: 5 } });
  const embedded = (reference.content as Block[]).find((block) => block.type === 'resource')!.resource!.uri;
  t.equal(embedded, 'coffer://every/demo://resource/dynamic/text/5', 'tool result: embedded resource uri exposed');
  t.match((await client.readResource({ uri: embedded })).contents, [{ uri: embedded, text: /^Resource 5: / }], 'and readable through coffer');

  const args = { resourceType: 'Blob', resourceId: '3' };
  const [prompt, directPrompt] = await Promise.all([client.getPrompt({ name: 'every__resource-prompt', arguments: args }), direct.getPrompt({ name: 'resource-prompt', arguments: args })]);
  const content = prompt.messages.map((message) => message.content as Block).find((block) => block.type === 'resource')!;
  t.equal(content.resource!.uri, 'coffer://every/demo://resource/dynamic/blob/3', 'prompt: embedded resource uri exposed');
  t.same(unclocked(prompt), unclocked(exposeResultUris('prompts', directPrompt, 'every')), 'the rest of the prompt as the upstream sent it');
  t.equal((await client.readResource({ uri: content.resource!.uri })).contents[0]?.uri, content.resource!.uri, 'and readable through coffer');
});

t.test('resources/read of a listed resource answers with the exposed URI', async (t) => {
  const { client, direct } = await everything(t);
  const first = (await direct.listResources()).resources[0]!;
  const exposed = `coffer://every/${first.uri}`;
  const [mine, theirs] = await Promise.all([client.readResource({ uri: exposed }), direct.readResource({ uri: first.uri })]);
  t.same(mine.contents.map((item) => item.uri), [exposed]);
  t.same(mine, exposeResultUris('resources', theirs, 'every'), 'otherwise unchanged');
});

const COFFER_SENTENCE = /^coffer aggregates several MCP servers: /;
const fixture = (name: string, args: string[] = []) => ({ name, transport: { type: 'stdio', command: process.execPath, args: [FIXTURE, '--name', name, ...args] } });

t.test('initialize carries the instructions of the upstreams enabled and connected now, one bounded section each', async (t) => {
  const { gateway, direct } = await everything(t);
  await gateway.addServer(fixture('zed', ['--instructions', 'Zed\u001b[31m rules\u0007\r\n', '--instructions-pad', '10000']));
  await gateway.addServer(fixture('quiet'));
  const everythingText = direct.getInstructions()!;
  t.ok(everythingText.length > 1_000, `server-everything sends ${everythingText.length} characters of instructions`);

  const first = (await gateway.client('first')).getInstructions()!;
  t.match(first, COFFER_SENTENCE, 'coffer\'s own sentence first');
  t.ok(first.includes(`\n\n## every\n\n${everythingText.trim()}`), 'the everything section: its whole text under its namespace');
  const zed = first.slice(first.indexOf('\n\n## zed\n\n') + '\n\n## zed\n\n'.length);
  t.ok(first.indexOf('## every') < first.indexOf('## zed'), 'sections in namespace order');
  t.ok(zed.startsWith('Zed[31m rules\nzzz'), `control characters stripped: ${JSON.stringify(zed.slice(0, 20))}`);
  t.ok(zed.length <= 4_096 && zed.endsWith('[truncated by coffer]'), `a long text is cut to its bound (${zed.length} characters) and says so`);
  t.notOk(first.includes('## quiet'), 'a server without instructions has no section');

  t.equal((await gateway.api('POST', '/servers/zed/disable')).status, 200);
  const afterDisable = (await gateway.client('second')).getInstructions()!;
  t.notOk(afterDisable.includes('## zed'), 'a disabled server\'s instructions are absent from a new session');
  t.ok(afterDisable.includes('\n\n## every\n\n'), 'the others stay');

  t.equal((await gateway.api('POST', '/servers/zed/enable')).status, 200);
  await waitReady(gateway.api, 'zed');
  t.ok((await gateway.client('third')).getInstructions()!.includes('\n\n## zed\n\nZed'), 'enabled again: back in the next session');
});
