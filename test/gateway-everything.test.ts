// coffer fronting two real server-everything upstreams (stdio and Streamable
// HTTP), compared with a direct client: namespacing, routing, unchanged payloads.
import t from 'tap';
import { nativeBindingLoaded } from '../src/http/uws.js';
import { exposeResultUris } from '../src/router/expose-results.js';
import { startGateway } from './helpers/gateway.js';
import { directEverything, everythingHttp, everythingStdio } from './helpers/upstreams.js';

t.test('native uWebSockets.js binding is the one loaded', async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  t.ok(nativeBindingLoaded(), 'the .node binary is in the require cache');
  const status = await gateway.api('GET', '/daemon/status', undefined, null);
  t.equal(status.status, 200);
  t.equal(status.body.status, 'ready');
  t.equal(status.body.native_http, true);
});

t.test('server-everything over stdio and Streamable HTTP through /mcp', async (t) => {
  const http = await everythingHttp();
  const gateway = await startGateway();
  const direct = await directEverything();
  t.teardown(async () => {
    await direct.close();
    await gateway.close();
    await http.stop();
  });
  await gateway.addServer(everythingStdio('ev'));
  await gateway.addServer({ name: 'evh', transport: { type: 'http', url: http.url } });
  const client = await gateway.client();

  const directTools = (await direct.listTools()).tools;
  const { tools } = await client.listTools();
  const names = tools.map((tool) => tool.name);
  for (const tool of directTools) {
    t.ok(names.includes(`ev__${tool.name}`), `ev__${tool.name} listed`);
    t.ok(names.includes(`evh__${tool.name}`), `evh__${tool.name} listed`);
  }
  const echo = tools.find((tool) => tool.name === 'ev__echo')!;
  t.same(echo, { ...directTools.find((tool) => tool.name === 'echo')!, name: 'ev__echo' }, 'tool fields unchanged but the name');

  const viaStdio = await client.callTool({ name: 'ev__echo', arguments: { message: 'hi' } });
  const viaHttp = await client.callTool({ name: 'evh__echo', arguments: { message: 'hi' } });
  const reference = await direct.callTool({ name: 'echo', arguments: { message: 'hi' } });
  t.same(viaStdio, reference, 'stdio upstream result unchanged');
  t.same(viaHttp, reference, 'http upstream result unchanged');

  const directResources = (await direct.listResources()).resources;
  const { resources } = await client.listResources();
  const first = directResources[0]!;
  t.ok(resources.some((resource) => resource.uri === `coffer://ev/${first.uri}`), 'resource namespaced');
  t.same(await client.readResource({ uri: `coffer://ev/${first.uri}` }), exposeResultUris('resources', await direct.readResource({ uri: first.uri }), 'ev'), 'resource read unchanged but for its exposed URI');

  const directTemplates = (await direct.listResourceTemplates()).resourceTemplates;
  const { resourceTemplates } = await client.listResourceTemplates();
  for (const template of directTemplates) t.ok(resourceTemplates.some((item) => item.uriTemplate === `coffer://evh/${template.uriTemplate}`), `template ${template.uriTemplate}`);

  const directPrompts = (await direct.listPrompts()).prompts;
  const { prompts } = await client.listPrompts();
  const simple = directPrompts.find((prompt) => !prompt.arguments || prompt.arguments.every((argument) => !argument.required))!;
  t.ok(prompts.some((prompt) => prompt.name === `ev__${simple.name}`), 'prompt namespaced');
  t.same(await client.getPrompt({ name: `ev__${simple.name}` }), await direct.getPrompt({ name: simple.name }), 'prompt payload unchanged');

  await t.rejects(client.callTool({ name: 'nope__echo', arguments: {} }), /unknown tool/, 'unknown server is a clear error');
  await t.rejects(client.callTool({ name: 'echo', arguments: {} }), /unknown tool/, 'un-namespaced name is a clear error');
});
