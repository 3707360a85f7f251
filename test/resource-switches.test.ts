// The URI rule end to end with server-everything: a resource is governed by
// its own switch under every spelling the upstream reads as the same URI, a
// template-generated URI by its template's switch, anything else by the
// server's policy; the command each refusal suggests is run as printed and works.
import t, { type Test } from 'tap';
import { McpError, CompleteResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { JSONRPC } from '../src/protocol/errors.js';
import { splitCommandLine } from '../src/cli/split.js';
import { exposeResultUris } from '../src/router/expose-results.js';
import { startGateway, type Gateway } from './helpers/gateway.js';
import { runCli } from './helpers/cli.js';
import { directEverything, everythingStdio } from './helpers/upstreams.js';

type Client = Awaited<ReturnType<Gateway['client']>>;

const DOC = 'demo://resource/static/document/architecture.md';
const TEXT_TEMPLATE = 'demo://resource/dynamic/text/{resourceId}';

/** The refusal of `attempt`: TOOL_DISABLED with its message. */
async function refusal(t: Test, attempt: Promise<unknown>, what: string): Promise<string> {
  const error = await attempt.then(
    () => null,
    (caught: unknown) => caught,
  );
  t.ok(error instanceof McpError, `${what}: refused`);
  const rpc = error as McpError | null;
  t.equal(rpc?.code, JSONRPC.TOOL_DISABLED, `${what}: -32000`);
  t.match(rpc?.data, { code: 'TOOL_DISABLED' }, `${what}: data.code TOOL_DISABLED`);
  return rpc?.message ?? '';
}

/** Runs the command a refusal suggests, exactly as printed. */
async function runSuggested(t: Test, gateway: Gateway, message: string, pattern: RegExp): Promise<void> {
  const suggested = pattern.exec(message)?.[2];
  if (!t.ok(suggested, `the message suggests a command: ${message}`)) return;
  const [coffer, ...args] = splitCommandLine(suggested!);
  t.equal(coffer, 'coffer');
  const result = await runCli(gateway.home, ...args);
  t.equal(result.code, 0, `'${suggested}' works: ${result.stderr}`);
}

const complete = (client: Client, ref: Record<string, unknown>, argument: string) =>
  client.request({ method: 'completion/complete', params: { ref, argument: { name: argument, value: '' } } }, CompleteResultSchema);

async function disable(gateway: Gateway, server: string, type: string, key: string): Promise<void> {
  const answer = await gateway.api('POST', `/servers/${server}/capabilities/${type}/disable`, { key });
  if (answer.status !== 200) throw new Error(`disable failed: ${JSON.stringify(answer.body)}`);
}

t.test('a disabled resource is refused under every spelling of its URI, for read and subscribe', async (t) => {
  const gateway = await startGateway();
  const direct = await directEverything();
  t.teardown(async () => {
    await direct.close();
    await gateway.close();
  });
  await gateway.addServer(everythingStdio('ev'));
  const client = await gateway.client();
  t.ok((await client.listResources()).resources.some((resource) => resource.uri === `coffer://ev/${DOC}`), 'listed');
  await disable(gateway, 'ev', 'resource', DOC);

  const spellings = [
    DOC,
    'DEMO://resource/static/document/architecture.md',
    'demo://RESOURCE/static/document/architecture.md',
    'demo://resource/static/document/./architecture.md',
    'demo://resource/static/document/a/../architecture.md',
    'demo://resource/static/document/%61rchitecture.md',
    'demo://resource/static/x/%2E%2E/document/architecture.md',
  ];
  let message = '';
  for (const spelling of spellings) {
    message = await refusal(t, client.readResource({ uri: `coffer://ev/${spelling}` }), `read ${spelling}`);
    t.match(message, `resource 'demo://resource/static/document/architecture.md' of server 'ev' is disabled`, 'names the resource as the switch knows it');
    await refusal(t, client.subscribeResource({ uri: `coffer://ev/${spelling}` }), `subscribe ${spelling}`);
  }

  await runSuggested(t, gateway, message, /enable it with (['"])(.+?)\1/);
  const reference = exposeResultUris('resources', await direct.readResource({ uri: DOC }), 'ev');
  for (const spelling of spellings) t.same(await client.readResource({ uri: `coffer://ev/${spelling}` }), reference, `enabled: ${spelling} reads the resource`);
  t.same(await client.subscribeResource({ uri: `coffer://ev/DEMO://resource/static/document/./architecture.md` }), {}, 'enabled: subscribe works');
  t.same(await client.unsubscribeResource({ uri: `coffer://ev/${DOC}` }), {}, 'and unsubscribe under another spelling');
});

t.test("a template's switch governs every URI it generates; completion of a disabled template or prompt is refused", async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  await gateway.addServer(everythingStdio('ev'));
  const client = await gateway.client();
  t.ok((await client.listResourceTemplates()).resourceTemplates.some((item) => item.uriTemplate === `coffer://ev/${TEXT_TEMPLATE}`), 'template listed');
  t.ok((await client.readResource({ uri: 'coffer://ev/demo://resource/dynamic/text/1' })).contents.length > 0, 'readable while the template is enabled');
  t.ok((await complete(client, { type: 'ref/resource', uri: `coffer://ev/${TEXT_TEMPLATE}` }, 'resourceId')).completion, 'template completion works while enabled');
  t.ok((await complete(client, { type: 'ref/prompt', name: 'ev__completable-prompt' }, 'department')).completion, 'prompt completion works while enabled');

  await disable(gateway, 'ev', 'resource', TEXT_TEMPLATE);
  let message = '';
  for (const uri of ['demo://resource/dynamic/text/1', 'DEMO://resource/dynamic/text/2', 'demo://resource/dynamic/x/../text/3']) {
    message = await refusal(t, client.readResource({ uri: `coffer://ev/${uri}` }), `read ${uri}`);
    t.match(message, `by its resource template '${TEXT_TEMPLATE}'`, 'names the template');
    await refusal(t, client.subscribeResource({ uri: `coffer://ev/${uri}` }), `subscribe ${uri}`);
  }
  t.ok((await client.readResource({ uri: 'coffer://ev/demo://resource/dynamic/blob/1' })).contents.length > 0, "the other template's URIs stay readable");
  await refusal(t, complete(client, { type: 'ref/resource', uri: `coffer://ev/${TEXT_TEMPLATE}` }, 'resourceId'), 'completion of the disabled template');

  await disable(gateway, 'ev', 'prompt', 'completable-prompt');
  const promptMessage = await refusal(t, complete(client, { type: 'ref/prompt', name: 'ev__completable-prompt' }, 'department'), 'completion of the disabled prompt');
  t.match(promptMessage, "prompt 'completable-prompt' of server 'ev' is disabled");

  await runSuggested(t, gateway, message, /enable the template with (['"])(.+?)\1/);
  t.ok((await client.readResource({ uri: 'coffer://ev/DEMO://resource/dynamic/text/2' })).contents.length > 0, 'the suggested command enabled the template: its URIs read again');
});

t.test('--no-auto-enable: an enabled template makes its URIs readable; an unknown URI names a command that works', async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  await gateway.addServer({ ...everythingStdio('evq'), auto_enable_new_capabilities: false });
  const client = await gateway.client();
  const view = await gateway.api('GET', '/servers/evq/capabilities');
  t.equal(view.status, 200, 'capabilities listed (the template is known, disabled by policy)');

  const templateMessage = await refusal(t, client.readResource({ uri: 'coffer://evq/demo://resource/dynamic/text/1' }), 'a URI of a template new and disabled');
  t.match(templateMessage, `by its resource template '${TEXT_TEMPLATE}'`);
  await runSuggested(t, gateway, templateMessage, /enable the template with (['"])(.+?)\1/);
  t.ok((await client.readResource({ uri: 'coffer://evq/demo://resource/dynamic/text/1' })).contents.length > 0, 'enabled template: its URI reads');
  t.ok((await client.readResource({ uri: 'coffer://evq/demo://resource/dynamic/text/./9' })).contents.length > 0, 'and any other of its URIs');

  const unknown = await refusal(t, client.readResource({ uri: 'coffer://evq/demo://resource/elsewhere/1' }), 'a URI with no switch at all');
  t.match(unknown, /has no switch in coffer .* does not enable new capabilities/);
  await runSuggested(t, gateway, unknown, /allow them with (['"])(.+?)\1/);
  const after = await client.readResource({ uri: 'coffer://evq/demo://resource/elsewhere/1' }).catch((error: McpError) => error);
  t.notMatch(after, { data: { code: 'TOOL_DISABLED' } }, 'with auto-enable on, coffer lets it through (the upstream answers for itself)');
});
