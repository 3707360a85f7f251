// The client the conformance suite's client scenarios test: coffer itself, as a
// gateway in front of the scenario's server (signing in to it in the auth
// scenarios). The suite runs
//
//   <node> scripts/conformance-client.mjs <serverUrl>
//
// with MCP_CONFORMANCE_SCENARIO (and MCP_CONFORMANCE_CONTEXT: pre-registered
// client values, a private key …). This starts a coffer daemon in a temporary
// home (on this script's Node, coffer's own runtime: the suite runs it with the
// absolute path of the Node that runs scripts/conformance.mjs), registers the
// URL as an HTTP upstream under the empty namespace, signs in the way a person
// would (the link coffer gives, followed through the scenario's authorization
// server back to coffer's /oauth/callback; the suite's server answers without
// a person), then lists and calls the tools through coffer's /mcp, signing in
// again when a call asks for a wider scope. Exits 1 when coffer refused or
// failed, which the scenarios that expect a refusal allow.
//
// The other scenarios (`--part client`) need no sign-in; the driver there is a
// plain MCP client of coffer: it answers elicitation (the schema's defaults),
// calls every tool coffer lists with arguments made from its input schema
// (or the ones the scenario's context names), reads every resource and gets
// every prompt, so each request crosses coffer to the scenario's server.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema, ElicitRequestSchema, ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SERVER = 'upstream';
const STATE_TIMEOUT_MS = 60_000;
/** The suite starts every scenario of a run at once, each with its own daemon: on a small machine a start takes a while. */
const START_TIMEOUT_MS = 120_000;
/** Sign-ins for a wider scope per call: the suite's retry-limit scenario counts them (at most 3 in all). */
const STEP_UPS = 1;
/** coffer's JSON-RPC code for a call that needs a sign-in or a wider scope (src/protocol/errors.ts). */
const AUTH_REQUIRED = -32014;
/** The client ID metadata document URL the suite's CIMD scenario expects (any https URL a real AS can fetch would do). */
const CLIENT_METADATA_URL = 'https://conformance-test.local/client-metadata.json';

const serverUrl = process.argv[2];
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
const context = process.env.MCP_CONFORMANCE_CONTEXT ? JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT) : {};
const log = (message) => console.error(`conformance-client[${scenario}]: ${message}`);

const compiled = (path) => import(pathToFileURL(join(ROOT, 'dist', 'src', path)).href);
const { ApiClient } = await compiled('cli/api-client.js');
const { startDaemonProcess, stopDaemonProcess } = await compiled('cli/daemon-control.js');

/** The server config's oauth block for what the scenario hands over. */
function oauthConfig() {
  const oauth = { client_metadata_url: CLIENT_METADATA_URL };
  if (context.client_id) oauth.client_id = context.client_id;
  if (context.client_secret) oauth.client_secret = context.client_secret;
  if (context.private_key_pem) {
    oauth.private_key = context.private_key_pem;
    if (context.signing_algorithm) oauth.private_key_alg = context.signing_algorithm;
  }
  if (scenario.startsWith('auth/client-credentials-')) oauth.grant_type = 'client_credentials';
  return oauth;
}

async function state(api) {
  return (await api.get(`/servers/${SERVER}`)).health;
}

/** Waits until the server settles in one of `wanted`; a failed server is an error. */
async function settle(api, wanted) {
  const until = Date.now() + STATE_TIMEOUT_MS;
  for (;;) {
    const health = await state(api);
    if (wanted.includes(health.state)) return health.state;
    if (health.state === 'failed') throw new Error(`the upstream failed: ${JSON.stringify(health)}`);
    if (Date.now() > until) throw new Error(`the upstream did not reach ${wanted.join('/')} in ${STATE_TIMEOUT_MS} ms: ${JSON.stringify(health)}`);
    await new Promise((resolveWait) => setTimeout(resolveWait, 50));
  }
}

/** What a person does: open coffer's link; the suite's authorization server redirects straight back to coffer's callback. */
async function signIn(api) {
  const path = `/servers/${SERVER}/oauth`;
  const started = await api.post(path);
  if (started.status !== 'pending') return started;
  log(`following the sign-in link ${started.url}`);
  const page = await fetch(started.url, { redirect: 'follow', signal: AbortSignal.timeout(STATE_TIMEOUT_MS) });
  await page.text();
  const outcome = await api.get(path);
  if (outcome.status !== 'signed_in') throw new Error(`the sign-in did not complete: ${JSON.stringify(outcome)}`);
  return outcome;
}

/** The tools through coffer; a server that asks for a sign-in again meanwhile (it moved to another authorization server) gets one. */
async function listTools(api, client) {
  for (let signIns = 0; ; signIns++) {
    const { tools } = await client.listTools();
    if ((await state(api)).state !== 'needs_auth' || signIns >= STEP_UPS) return tools;
    log('the upstream asks for a sign-in again: signing in');
    await signIn(api);
    await settle(api, ['ready']);
  }
}

/** A sample value for one JSON Schema: its default, const or first enum value, else one of its type. */
function sample(schema) {
  if (!schema || typeof schema !== 'object') return 'x';
  if ('default' in schema) return schema.default;
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length) return schema.enum[0];
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'number':
    case 'integer':
      return 1;
    case 'boolean':
      return true;
    case 'array':
      return [];
    case 'object':
      return fill(schema, false);
    default:
      return 'x';
  }
}

/** An object for a schema: every required property (all of them with `all`) gets a sample value. */
function fill(schema, all) {
  const properties = schema?.properties ?? {};
  const wanted = all ? Object.keys(properties) : (schema?.required ?? []);
  return Object.fromEntries(wanted.map((name) => [name, sample(properties[name])]));
}

/** The calls to make: the scenario's own (its context's toolCalls), else every tool with arguments from its schema. */
function plannedCalls(tools) {
  if (Array.isArray(context.toolCalls)) return context.toolCalls.map((call) => ({ name: call.name, arguments: call.arguments ?? {} }));
  return tools.map((tool) => {
    // json-schema-2020-12-preservation: the echo tool gets the other tool's input schema, exactly as coffer listed it.
    if (scenario === 'json-schema-2020-12-preservation' && tool.name === 'json_schema_echo') {
      const focal = tools.find((other) => other.name !== tool.name);
      return { name: tool.name, arguments: { schema: focal?.inputSchema ?? {} } };
    }
    return { name: tool.name, arguments: fill(tool.inputSchema, false) };
  });
}

/** The client of coffer's /mcp: it answers elicitation with the schema's defaults, sampling with a fixed text, roots with none. */
function newClient() {
  const client = new Client({ name: 'coffer-conformance-client', version: '1.0.0' }, { capabilities: { elicitation: { form: {} }, sampling: {}, roots: {} } });
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    log(`elicitation: ${request.params.message}`);
    return { action: 'accept', content: fill(request.params.requestedSchema, true) };
  });
  client.setRequestHandler(CreateMessageRequestSchema, async () => ({ role: 'assistant', content: { type: 'text', text: 'ok' }, model: 'conformance' }));
  client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [] }));
  return client;
}

/** The non-auth scenarios: every tool, resource and prompt through coffer; a failed request is logged and counted, not fatal. */
async function exercise(client) {
  let failed = 0;
  const attempt = async (what, request) => {
    try {
      const result = await request();
      log(`${what}: ${JSON.stringify(result).slice(0, 300)}`);
      return result;
    } catch (error) {
      failed++;
      log(`${what} failed: ${error.message}`);
      return undefined;
    }
  };
  const capabilities = client.getServerCapabilities() ?? {};
  const { tools = [] } = (await attempt('tools/list', () => client.listTools())) ?? {};
  for (const call of plannedCalls(tools)) await attempt(`tools/call ${call.name}`, () => client.callTool(call));
  if (capabilities.resources) {
    const { resources = [] } = (await attempt('resources/list', () => client.listResources())) ?? {};
    for (const resource of resources) await attempt(`resources/read ${resource.uri}`, () => client.readResource({ uri: resource.uri }));
  }
  if (capabilities.prompts) {
    const { prompts = [] } = (await attempt('prompts/list', () => client.listPrompts())) ?? {};
    for (const prompt of prompts) {
      const args = Object.fromEntries((prompt.arguments ?? []).filter((arg) => arg.required).map((arg) => [arg.name, 'x']));
      await attempt(`prompts/get ${prompt.name}`, () => client.getPrompt({ name: prompt.name, arguments: args }));
    }
  }
  if (failed) throw new Error(`${failed} request(s) through coffer failed`);
}

async function callTools(api, port) {
  const client = newClient();
  await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)));
  try {
    if (!scenario.startsWith('auth/')) return await exercise(client);
    const tools = await listTools(api, client);
    log(`tools through coffer: ${tools.map((tool) => tool.name).join(', ') || '(none)'}`);
    for (const tool of tools) {
      for (let stepUps = 0; ; stepUps++) {
        try {
          const result = await client.callTool({ name: tool.name, arguments: {} });
          log(`called ${tool.name}: ${JSON.stringify(result.content)}`);
          break;
        } catch (error) {
          if (error?.code !== AUTH_REQUIRED || stepUps >= STEP_UPS) throw error;
          log(`${tool.name} needs a wider sign-in (${error.message}): signing in again`);
          await signIn(api);
          await settle(api, ['ready']);
        }
      }
    }
  } finally {
    await client.close();
  }
}

async function main() {
  if (!serverUrl) throw new Error('usage: conformance-client.mjs <serverUrl>');
  const home = mkdtempSync(join(tmpdir(), 'coffer-conformance-client-'));
  // A private daemon in a temporary home: the documented opt-out of /mcp authentication.
  process.env.COFFER_MCP_AUTH = 'none';
  try {
    const { file } = await startDaemonProcess(home, { port: 0, timeoutMs: START_TIMEOUT_MS });
    const api = ApiClient.forHome(home);
    await api.post('/servers', { name: SERVER, namespace: '', transport: { type: 'http', url: serverUrl, headers: {}, oauth: oauthConfig() } });
    if ((await settle(api, ['ready', 'needs_auth'])) === 'needs_auth') {
      await signIn(api);
      await settle(api, ['ready']);
    }
    await callTools(api, file.port);
  } finally {
    await stopDaemonProcess(home).catch((error) => log(`stopping the daemon: ${error.message}`));
    // COFFER_CONFORMANCE_KEEP=1 keeps the home (its logs/) for a look at what coffer did.
    if (process.env.COFFER_CONFORMANCE_KEEP) log(`kept ${home}`);
    else rmSync(home, { recursive: true, force: true });
  }
}

try {
  await main();
  process.exit(0);
} catch (error) {
  log(`${error instanceof Error ? error.message : String(error)}${error?.details ? ` ${JSON.stringify(error.details)}` : ''}`);
  process.exit(1);
}
