// One raw POST to a gateway's /mcp (below the SDK client): for tests of the
// HTTP answer itself — status, content type, session header, JSON vs SSE.
import type { Gateway } from './gateway.js';

export const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

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

/** `body` as is when a string (malformed JSON on purpose), else JSON. */
export async function mcpPost(gateway: Pick<Gateway, 'url'>, body: unknown, headers: Record<string, string> = {}, timeoutMs = 20_000): Promise<McpAnswer> {
  const response = await fetch(`${gateway.url}/mcp`, {
    method: 'POST',
    headers: { ...MCP_HEADERS, ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await response.text();
  const contentType = response.headers.get('content-type') ?? '';
  return { status: response.status, contentType, sessionId: response.headers.get('mcp-session-id'), text, messages: messagesOf(contentType, text) };
}
