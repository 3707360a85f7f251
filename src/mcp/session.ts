// One downstream MCP session: its SDK transport and what the client declared.
import type { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';

export interface McpSession {
  /** Empty until the transport accepted `initialize`. */
  id: string;
  transport: WebStandardStreamableHTTPServerTransport;
  protocolVersion: string | null;
  clientInfo: { name?: string; version?: string } | null;
  clientCapabilities: Record<string, unknown>;
  /** Downstream request id → abort controller of its forwarded call. */
  inflight: Map<string | number, AbortController>;
  lastActiveAt: number;
}
