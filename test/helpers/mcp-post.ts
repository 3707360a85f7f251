// One raw POST to a gateway's /mcp (below the SDK client): for tests of the
// HTTP answer itself — status, content type, session header, JSON vs SSE.
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { readDaemonFile } from '../../src/daemon/daemon-file.js';
import type { Gateway } from './gateway.js';

export const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** The credential /mcp wants: the daemon's token (read at each call: a rotation changes it). */
export function mcpAuthHeader(gateway: Pick<Gateway, 'daemon'>): { authorization: string } {
  return { authorization: `Bearer ${gateway.daemon.token}` };
}

export interface McpAnswer {
  status: number;
  contentType: string;
  sessionId: string | null;
  text: string;
  /** The JSON-RPC messages of the body: the JSON body, or every SSE `data:` line. */
  messages: any[];
}

function messagesOf(contentType: string, text: string): any[] {
  if (text === '') return [];
  if (contentType.startsWith('text/event-stream')) {
    return text
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => JSON.parse(line.slice('data: '.length)));
  }
  const parsed = JSON.parse(text);
  return Array.isArray(parsed) ? parsed : [parsed];
}

/** An SDK client transport to `baseUrl`/mcp (or another endpoint, e.g. /mcp/<toolset>) presenting `token` (and `headers` on every request). */
export function mcpTransport(baseUrl: string, token: string, headers: Record<string, string> = {}, path = '/mcp'): StreamableHTTPClientTransport {
  return new StreamableHTTPClientTransport(new URL(`${baseUrl}${path}`), { requestInit: { headers: { ...headers, authorization: `Bearer ${token}` } } });
}

/** To the daemon that runs for `home`, with the token of its daemon.json (as `coffer shim` does). */
export function homeMcpTransport(home: string): StreamableHTTPClientTransport {
  const daemon = readDaemonFile(home);
  if (!daemon) throw new Error(`no daemon.json in ${home}`);
  return mcpTransport(`http://127.0.0.1:${daemon.port}`, daemon.token);
}

/** `body` as is when a string (malformed JSON on purpose), else JSON. `headers` may replace the credential; `path` is the endpoint. */
export async function mcpPost(gateway: Pick<Gateway, 'url' | 'daemon'>, body: unknown, headers: Record<string, string> = {}, timeoutMs = 20_000, path = '/mcp'): Promise<McpAnswer> {
  const response = await fetch(`${gateway.url}${path}`, {
    method: 'POST',
    headers: { ...MCP_HEADERS, ...mcpAuthHeader(gateway), ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await response.text();
  const contentType = response.headers.get('content-type') ?? '';
  return { status: response.status, contentType, sessionId: response.headers.get('mcp-session-id'), text, messages: messagesOf(contentType, text) };
}
