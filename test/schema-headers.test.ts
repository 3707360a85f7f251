// What a tool's inputSchema says reaches every client unchanged, and what it
// demands of a 2026-07-28 call is enforced: a JSON Schema 2020-12 schema keeps
// every keyword through coffer (only what strict 2025 clients refuse is
// repaired), and an argument annotated x-mcp-header must arrive mirrored in its
// Mcp-Param-* header (400 -32020 otherwise), for modern calls only. Real
// upstreams (the conformance fixture and the generic fixture over stdio)
// behind a real daemon; v1, v2 and raw modern clients over HTTP.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import t from 'tap';
import { ModernMethods, type ModernParts } from '../src/mcp/modern/methods.js';
import { checkParamHeaders, declaredHeaders } from '../src/mcp/modern/param-headers.js';
import { CONFORMANCE_FIXTURE, stdioFixture } from './fixtures/fixture-servers.js';
import { SCHEMA_2020_12 } from './fixtures/schema-2020-12.js';
import { gatewayWith, type Gateway } from './helpers/gateway.js';
import { modernClient, modernPost } from './helpers/modern.js';

const HEADER_TOOL = 'c__test_custom_headers';

type Tool = { name: string; inputSchema: Record<string, unknown> };

let gateway: Gateway;
t.before(async () => {
  gateway = await gatewayWith(t, [
    { name: 'c', namespace: 'c', transport: { type: 'stdio', command: process.execPath, args: [CONFORMANCE_FIXTURE, '--transport', 'stdio'], env: {}, cwd: null } },
    stdioFixture('s', ['--tools', 'schema_2020']),
  ]);
});

const modernTools = async (): Promise<Tool[]> => (await modernPost(gateway, 'tools/list')).messages[0].result.tools as Tool[];
const textOf = (result: unknown): string => ((result as { content?: Array<{ text?: string }> }).content ?? []).map((part) => part.text).join('');

t.test('unit: the declared Mcp-Param-* headers of a call are checked against its arguments', async (t) => {
  const tools = [{ name: 'x', inputSchema: { type: 'object', properties: { region: { type: 'string', 'x-mcp-header': 'Region' }, n: { type: 'integer', 'x-mcp-header': 'N' }, q: { type: 'string' } } } }];
  const declared = declaredHeaders(tools, 'x');
  t.same(declared, [{ argument: 'region', header: 'Region' }, { argument: 'n', header: 'N' }]);
  t.equal(declaredHeaders(tools, 'x'), declared, 'remembered per merged list');
  t.same(declaredHeaders([{ name: 'bad', inputSchema: { type: 'object', properties: { o: { type: 'object', 'x-mcp-header': 'O' } } } }], 'bad'), [], 'an invalid declaration declares nothing');
  const cell = (args: unknown, headers: Record<string, string>) => checkParamHeaders(declared, args, headers)?.cell ?? 'ok';
  t.equal(cell({ region: 'eu', n: 3 }, { 'mcp-param-region': 'eu', 'mcp-param-n': '3' }), 'ok');
  t.equal(cell({ region: 'eu', n: 3 }, { 'mcp-param-region': ' eu\t', 'mcp-param-n': '3.0' }), 'ok', 'whitespace around the value is not the value; numbers compare by value');
  t.equal(cell({ region: 'Zürich' }, { 'mcp-param-region': `=?base64?${Buffer.from('Zürich').toString('base64')}?=` }), 'ok', 'the Base64 sentinel decodes');
  t.equal(cell({ region: null, q: 'x' }, {}), 'ok', 'a null or absent argument needs no header');
  t.equal(cell({}, { 'mcp-param-region': 'eu' }), 'ok', 'a header without its argument is ignored');
  t.equal(cell({ region: 'eu' }, {}), 'param-header-missing');
  t.equal(cell({ region: 'eu' }, { 'mcp-param-region': 'us' }), 'param-header-mismatch');
  t.equal(cell({ n: 3 }, { 'mcp-param-n': 'three' }), 'param-header-mismatch');
  t.equal(cell({ n: 42 }, { 'mcp-param-n': '0x2a' }), 'param-header-mismatch', 'a number is written in decimal: 0x2a is not 42');
  t.equal(cell({ n: 0 }, { 'mcp-param-n': '' }), 'param-header-mismatch', 'an empty header is no number, not 0');
  t.equal(cell({ region: 'Hello' }, { 'mcp-param-region': '=?base64?SGVsbG8?=' }), 'param-header-invalid-encoding');
  const flags = declaredHeaders([{ name: 'f', inputSchema: { type: 'object', properties: { dry: { type: 'boolean', 'x-mcp-header': 'Dry' } } } }], 'f');
  const flag = (args: unknown, headers: Record<string, string>) => checkParamHeaders(flags, args, headers)?.cell ?? 'ok';
  t.equal(flag({ dry: false }, {}), 'param-header-missing', 'a boolean argument needs its header too, false included');
  t.equal(flag({ dry: true }, { 'mcp-param-dry': 'true' }), 'ok');
  t.equal(flag({ dry: true }, { 'mcp-param-dry': 'TRUE' }), 'param-header-mismatch', 'a boolean is written as JSON writes it');
  t.match(checkParamHeaders(declared, { region: 'eu' }, {}), { status: 400, code: -32020, data: { code: 'HEADER_MISMATCH', mismatch: { header: 'Mcp-Param-Region' } } });
});

t.test("unit: a toolset caller's Mcp-Param-* headers are checked by the routes of the list whose declarations are read, though another merge came since", async (t) => {
  const tool = { name: 'a__x', inputSchema: { type: 'object', properties: { region: { type: 'string', 'x-mcp-header': 'Region' } } } };
  const gathered = [tool];
  // The list being gathered routes a__x to server a (in the set); a merge that came meanwhile routes it to b (outside it).
  const routesOf = new Map([[gathered, new Map([['a__x', { server: 'a', original: 'x' }]])]]);
  const latest = new Map([['a__x', { server: 'b', original: 'x' }]]);
  const router = { lastList: async () => gathered, routesOf: (items: unknown) => routesOf.get(items as typeof gathered), routes: () => latest };
  const calls = { admits: (_kind: string, server: string) => server === 'a' };
  const views = { viewOf: () => null, listFor: async () => [], viewOfList: () => null };
  const methods = new ModernMethods({ router, calls, views, features: {}, search: {}, version: '0' } as unknown as ModernParts);
  const rejection = await methods.checkParamHeaders({ name: 'a__x', arguments: { region: 'eu' } }, { 'mcp-param-region': 'us' }, 'set');
  t.match(rejection, { status: 400, code: -32020, data: { code: 'HEADER_MISMATCH' } }, "a tool of the set whose header contradicts its argument is refused (judged by the list's routes, not the latest merge's)");
});

t.test('unit: a name the merged list does not hold is not remembered with the declarations: callers choose names, the list bounds what is kept', async (t) => {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const tools = [{ name: 'x', inputSchema: { type: 'object', properties: { region: { type: 'string', 'x-mcp-header': 'Region' } } } }];
  t.same(declaredHeaders(tools, 'x'), [{ argument: 'region', header: 'Region' }]);
  gc();
  const before = process.memoryUsage().heapUsed;
  // Names as long as a header allows come in numbers a client chooses; fewer, longer ones show the same here.
  let declared = 0;
  for (let i = 0; i < 64; i++) declared += declaredHeaders(tools, String(i).padEnd(1 << 20, '-')).length;
  t.equal(declared, 0, 'an unknown name declares nothing');
  gc();
  const grownMb = (process.memoryUsage().heapUsed - before) / (1 << 20);
  t.ok(grownMb < 16, `64 unknown names of 1 MB each left ${grownMb.toFixed(1)} MB behind`);
  t.same(declaredHeaders(tools, 'x'), [{ argument: 'region', header: 'Region' }], 'the known tool still declares its headers');
});

t.test('a JSON Schema 2020-12 inputSchema reaches clients of both eras with every keyword', async (t) => {
  const direct = new Client({ name: 'direct', version: '1' });
  await direct.connect(new StdioClientTransport({ command: process.execPath, args: [CONFORMANCE_FIXTURE, '--transport', 'stdio'] }));
  t.teardown(() => direct.close());
  const own = (await direct.listTools()).tools.find((tool) => tool.name === 'json_schema_2020_12_tool')!.inputSchema;
  t.match(own, { allOf: [{ anyOf: [] }], if: {}, then: {}, else: {}, $defs: { address: { $anchor: 'addressDef' } } }, 'the fixture declares the suite’s schema');

  const legacy = (await (await gateway.client('v1')).listTools()).tools as Tool[];
  const modern = await modernTools();
  for (const [era, tools] of [['2025-11-25', legacy], ['2026-07-28', modern]] as const) {
    t.same(tools.find((tool) => tool.name === 'c__json_schema_2020_12_tool')?.inputSchema, own, `${era}: the fixture's schema, unchanged`);
    // A boolean property schema is valid 2020-12 that a 2025 SDK client refuses: it becomes its object equivalent, nothing else changes.
    t.same(tools.find((tool) => tool.name === 's__schema_2020')?.inputSchema, { ...SCHEMA_2020_12, properties: { ...SCHEMA_2020_12.properties, extra: {} } }, `${era}: repaired where strict clients refuse it, every other keyword kept`);
  }
});

t.test('x-mcp-header: the exposed tool keeps its annotation, and a modern call must mirror it', async (t) => {
  const tool = (await modernTools()).find((item) => item.name === HEADER_TOOL)!;
  t.match(tool.inputSchema.properties, { region: { 'x-mcp-header': 'Region' }, priority: { 'x-mcp-header': 'Priority' } }, 'clients learn what to mirror');

  const call = (args: Record<string, unknown>, headers: Record<string, string>) => modernPost(gateway, 'tools/call', { name: HEADER_TOOL, arguments: args }, headers);
  const matched = await call({ region: 'eu-west', priority: 2 }, { 'mcp-param-region': 'eu-west', 'mcp-param-priority': '2' });
  t.equal(matched.status, 200);
  t.equal(textOf(matched.messages[0].result), 'custom headers tool called with: {"region":"eu-west","priority":2}', 'headers that mirror the arguments: the call runs');

  const mismatched = await call({ region: 'eu-west' }, { 'mcp-param-region': 'us-east' });
  t.equal(mismatched.status, 400, 'a disagreeing header is refused');
  t.match(mismatched.messages[0], { id: 1, error: { code: -32020, message: /Mcp-Param-Region header says "us-east" but the body carries arguments.region="eu-west"/, data: { code: 'HEADER_MISMATCH' } } });
  const missing = await call({ region: 'eu-west' }, {});
  t.equal(missing.status, 400, 'a missing header is refused');
  t.match(missing.messages[0], { error: { code: -32020, message: /Mcp-Param-Region header is absent/, data: { code: 'HEADER_MISMATCH', mismatch: { header: 'Mcp-Param-Region' } } } });

  const v2 = await modernClient(gateway, 'pin');
  t.teardown(() => v2.close());
  await v2.listTools();
  t.equal(textOf(await v2.callTool({ name: HEADER_TOOL, arguments: { region: ' padded ', priority: 1 } })), 'custom headers tool called with: {"region":" padded ","priority":1}', 'the SDK v2 client mirrors what coffer checks');

  const legacy = await gateway.client('v1-headers');
  t.equal(textOf(await legacy.callTool({ name: HEADER_TOOL, arguments: { region: 'eu-west' } })), 'custom headers tool called with: {"region":"eu-west"}', 'a 2025 session sends no Mcp-Param-* and is not asked to');
});

t.test("x-mcp-header: a caller whose toolset leaves the tool out learns nothing of its headers: the call is refused as outside the set, not checked against them", async (t) => {
  t.equal((await gateway.api('POST', '/toolsets', { name: 'only-s', servers: [{ server: 's' }] })).status, 201);
  t.teardown(() => gateway.api('DELETE', '/toolsets/only-s'));
  const outside = await modernPost(gateway, 'tools/call', { name: HEADER_TOOL, arguments: { region: 'eu-west' } }, {}, 1, undefined, '/mcp/only-s');
  t.notMatch(JSON.stringify(outside.messages[0]), /Mcp-Param|region/i, 'no header of the tool is named');
  t.match(outside.messages[0], { error: { data: { code: 'NOT_IN_TOOLSET' } } }, 'the call is outside the set, as for any tool');
  const whole = await modernPost(gateway, 'tools/call', { name: HEADER_TOOL, arguments: { region: 'eu-west' } }, {});
  t.match(whole.messages[0], { error: { data: { code: 'HEADER_MISMATCH' } } }, 'the whole surface still checks them');
});
