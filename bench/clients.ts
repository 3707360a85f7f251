// The measuring clients: the real SDK Client over Streamable HTTP (coffer,
// direct, floor), legacy SSE (the peer only offers that), or stdio (direct to
// a stdio upstream), and the v2 SDK Client pinned to the 2026-07-28 era.
// listAll follows nextCursor, as a real client must.
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

export type Transport = 'http' | 'sse';

/** A URL, or a URL and the Bearer token its server wants (coffer's /mcp). */
export type McpEndpoint = string | { url: string; token: string };

/** A client with a bounded connect: a gateway that never answers initialize fails the run, not hangs it. */
export async function connect(endpoint: McpEndpoint, transport: Transport = 'http', name = 'bench'): Promise<Client> {
  const client = new Client({ name, version: '1.0.0' });
  const url = new URL(typeof endpoint === 'string' ? endpoint : endpoint.url);
  const requestInit = typeof endpoint === 'string' ? undefined : { headers: { authorization: `Bearer ${endpoint.token}` } };
  const t = transport === 'http' ? new StreamableHTTPClientTransport(url, { requestInit }) : new SSEClientTransport(url, { requestInit });
  await client.connect(t, { timeout: 30_000 });
  return client;
}

/** A v2 client that speaks only the 2026-07-28 era (no initialize, the envelope on every request). */
export async function connectModern(endpoint: McpEndpoint): Promise<ModernClient> {
  const client = new ModernClient({ name: 'bench', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  const url = new URL(typeof endpoint === 'string' ? endpoint : endpoint.url);
  const requestInit = typeof endpoint === 'string' ? undefined : { headers: { authorization: `Bearer ${endpoint.token}` } };
  await client.connect(new ModernTransport(url, { requestInit }), { timeout: 30_000 });
  return client;
}

export async function connectStdio(command: string, args: string[]): Promise<Client> {
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command, args, stderr: 'ignore' }), { timeout: 30_000 });
  return client;
}

export async function closeAll(clients: Iterable<Client | ModernClient | undefined>): Promise<void> {
  await Promise.all([...clients].map((client) => client?.close().catch(() => undefined)));
}

const MAX_PAGES = 200;

/** Every tool of every page; `pages` counts the round trips. */
export async function listAll(client: Client, timeoutMs = 30_000): Promise<{ tools: number; pages: number; names: string[] }> {
  const names: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await client.listTools(cursor === undefined ? {} : { cursor }, { timeout: timeoutMs });
    for (const tool of page.tools) names.push(tool.name);
    cursor = page.nextCursor;
    pages += 1;
  } while (cursor !== undefined && pages < MAX_PAGES);
  return { tools: names.length, pages, names };
}

export async function echo(client: Client, tool: string, timeoutMs = 30_000): Promise<void> {
  const result = await client.callTool({ name: tool, arguments: { text: 'ping' } }, undefined, { timeout: timeoutMs });
  if (result.isError) throw new Error(`${tool} answered isError`);
}

export async function modernEcho(client: ModernClient, tool: string, timeoutMs = 30_000): Promise<void> {
  const result = await client.callTool({ name: tool, arguments: { text: 'ping' } }, { timeout: timeoutMs });
  if (result.isError) throw new Error(`${tool} answered isError`);
}

/** One tools/list from the server itself: the v2 client would otherwise answer from its own cache while the list's ttlMs lasts. */
export async function modernListAll(client: ModernClient, timeoutMs = 30_000): Promise<number> {
  return (await client.listTools(undefined, { timeout: timeoutMs, cacheMode: 'bypass' })).tools.length;
}

/** Every tool object of every page (to install the same merged list in the floor). */
export async function listObjects(client: Client): Promise<Record<string, unknown>[]> {
  const tools: Record<string, unknown>[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await client.listTools(cursor === undefined ? {} : { cursor }, { timeout: 30_000 });
    tools.push(...(page.tools as Record<string, unknown>[]));
    cursor = page.nextCursor;
    pages += 1;
  } while (cursor !== undefined && pages < MAX_PAGES);
  return tools;
}

/** Milliseconds one async step takes. */
export async function timed(step: () => Promise<unknown>): Promise<number> {
  const started = process.hrtime.bigint();
  await step();
  return Number(process.hrtime.bigint() - started) / 1e6;
}
