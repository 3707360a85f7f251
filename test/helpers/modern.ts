// The MCP 2026-07-28 era against a gateway's /mcp: an SDK v2 client (pinned
// or probing), and raw modern POSTs (the envelope and the standard headers
// built here, the credential by mcp-post.ts).
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnHello, type HelloChild } from '../fixtures/fixture-servers.js';
import { startGateway, type Gateway } from './gateway.js';
import { mcpAuthHeader, mcpPost, type McpAnswer } from './mcp-post.js';

export const MODERN = '2026-07-28';
export const PROTOCOL_VERSION_KEY = 'io.modelcontextprotocol/protocolVersion';
export const CAPABILITIES_KEY = 'io.modelcontextprotocol/clientCapabilities';
export const MODERN_FIXTURE = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'modern-upstream.js');

export type ModernUpstream = HelloChild<{ url: string; control: string }>;

export interface ModernFront {
  readonly gateway: Gateway;
  readonly upstream: ModernUpstream;
}

/**
 * A gateway fronting the v2 fixture over HTTP as server `m`, which serves only
 * the 2026-07-28 era (`--legacy reject`): started before the file's tests,
 * closed after them (read its fields inside tests).
 */
export function modernFront(t: { before(fn: () => unknown): void; teardown(fn: () => unknown): void }): ModernFront {
  let started: { gateway: Gateway; upstream: ModernUpstream } | undefined;
  t.before(async () => {
    const upstream = await spawnHello<{ url: string; control: string }>(MODERN_FIXTURE, ['--legacy', 'reject']);
    const gateway = await startGateway();
    started = { gateway, upstream };
    await gateway.addServer({ name: 'm', transport: { type: 'http', url: upstream.hello.url } });
  });
  t.teardown(async () => {
    await started?.gateway.close();
    await started?.upstream.kill();
  });
  return {
    get gateway() {
      return started!.gateway;
    },
    get upstream() {
      return started!.upstream;
    },
  };
}

/** A v2 client over /mcp: `pin` insists on 2026-07-28, `auto` probes with server/discover and falls back to initialize. */
export async function modernClient(
  gateway: Pick<Gateway, 'url' | 'daemon'>,
  mode: 'pin' | 'auto' = 'pin',
  options: { capabilities?: Record<string, unknown>; token?: string; path?: string } = {},
): Promise<Client> {
  const client = new Client(
    { name: `v2-${mode}`, version: '2.4.0' },
    { capabilities: options.capabilities ?? {}, versionNegotiation: { mode: mode === 'pin' ? { pin: MODERN } : 'auto' } },
  );
  const headers = options.token === undefined ? mcpAuthHeader(gateway) : { authorization: `Bearer ${options.token}` };
  await client.connect(new StreamableHTTPClientTransport(new URL(`${gateway.url}${options.path ?? '/mcp'}`), { requestInit: { headers } }));
  return client;
}

/** The envelope of one modern request, with `extra` _meta keys. */
export function envelope(extra: Record<string, unknown> = {}, capabilities: Record<string, unknown> = {}): Record<string, unknown> {
  return { [PROTOCOL_VERSION_KEY]: MODERN, [CAPABILITIES_KEY]: capabilities, 'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' }, ...extra };
}

/**
 * One modern request as a conforming client sends it (envelope, MCP-Protocol-Version,
 * Mcp-Method, Mcp-Name for targeted methods); `headers` override or add, `null` removes one.
 */
export function modernPost(
  gateway: Pick<Gateway, 'url' | 'daemon'>,
  method: string,
  params: Record<string, unknown> = {},
  headers: Record<string, string | null> = {},
  id: string | number = 1,
  timeoutMs?: number,
  path?: string,
): Promise<McpAnswer> {
  const name = method === 'resources/read' ? params.uri : method === 'tools/call' || method === 'prompts/get' ? params.name : method.startsWith('tasks/') ? params.taskId : undefined;
  const merged: Record<string, string | null> = { 'mcp-protocol-version': MODERN, 'mcp-method': method, ...(typeof name === 'string' ? { 'mcp-name': name } : {}), ...headers };
  const sent = Object.fromEntries(Object.entries(merged).filter((entry): entry is [string, string] => entry[1] !== null));
  const meta = (params._meta as Record<string, unknown> | undefined) ?? {};
  return mcpPost(gateway, { jsonrpc: '2.0', id, method, params: { ...params, _meta: { ...envelope(), ...meta } } }, sent, timeoutMs, path);
}
