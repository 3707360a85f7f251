// Downstream sessions of /mcp: one SDK Streamable HTTP transport per session,
// keyed by Mcp-Session-Id. The transport owns the HTTP semantics (SSE streams,
// JSON responses, DELETE, protocol-version header); the dispatcher owns meaning.
import { randomUUID } from 'node:crypto';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { JSONRPCNotification } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from '../log.js';
import type { Dispatcher } from './dispatcher.js';
import type { McpSession } from './session.js';

export interface SessionOptions {
  maxBodyBytes: number;
  /** SSE keep-alive comments; must be shorter than the HTTP server's idle timeout. */
  keepAliveMs: number;
  /** Sessions with no request for this long are closed. */
  idleTimeoutMs: number;
}

function jsonRpcError(status: number, code: number, message: string): Response {
  return new Response(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }), {
    status,
    headers: { 'content-type': 'application/json' },
  });
}

export class SessionRegistry {
  private sessions = new Map<string, McpSession>();
  private sweeper: NodeJS.Timeout;
  private closing = false;

  constructor(
    private readonly dispatcher: Dispatcher,
    private readonly options: SessionOptions,
    private readonly log: Logger,
  ) {
    this.sweeper = setInterval(() => this.closeIdle(), Math.min(options.idleTimeoutMs, 60_000));
    this.sweeper.unref();
  }

  get size(): number {
    return this.sessions.size;
  }

  async handle(request: Request): Promise<Response> {
    const sessionId = request.headers.get('mcp-session-id');
    if (sessionId !== null) {
      const session = this.sessions.get(sessionId);
      if (!session) return jsonRpcError(404, -32001, 'Session not found: initialize a new session');
      session.lastActiveAt = Date.now();
      return session.transport.handleRequest(request);
    }
    if (request.method !== 'POST') return jsonRpcError(400, -32000, 'Bad Request: Mcp-Session-Id header is required');
    if (this.closing) return jsonRpcError(503, -32000, 'coffer is shutting down');
    return this.open().transport.handleRequest(request);
  }

  /** A transport for a POST without session id; it only becomes a session if that POST is `initialize`. */
  private open(): McpSession {
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      maxRequestBodySize: this.options.maxBodyBytes,
      keepAliveMs: this.options.keepAliveMs,
      onsessioninitialized: (id) => {
        session.id = id;
        this.sessions.set(id, session);
      },
      onsessionclosed: (id) => void this.close(id),
    });
    const session: McpSession = {
      id: '',
      transport,
      protocolVersion: null,
      clientInfo: null,
      clientCapabilities: {},
      inflight: new Map(),
      lastActiveAt: Date.now(),
    };
    transport.onmessage = (message) => this.dispatcher.onMessage(session, message);
    transport.onerror = (error) => this.log.debug('mcp transport', { session: session.id, error: error.message });
    void transport.start();
    return session;
  }

  /** Sends a notification to every initialized session (on its standalone GET stream). */
  broadcast(notification: JSONRPCNotification): void {
    for (const session of this.sessions.values()) {
      session.transport.send(notification).catch((error: unknown) => this.log.debug('notification not delivered', { session: session.id, error: String(error) }));
    }
  }

  async close(id: string): Promise<void> {
    const session = this.sessions.get(id);
    if (!session) return;
    this.sessions.delete(id);
    for (const controller of session.inflight.values()) controller.abort('session closed');
    await session.transport.close();
  }

  private closeIdle(): void {
    const cutoff = Date.now() - this.options.idleTimeoutMs;
    for (const session of this.sessions.values()) {
      if (session.lastActiveAt < cutoff && session.inflight.size === 0) void this.close(session.id);
    }
  }

  /** Refuses new sessions and waits (at most `ms`) for open calls to finish. */
  async drain(ms: number): Promise<void> {
    this.closing = true;
    const until = Date.now() + ms;
    while (Date.now() < until && [...this.sessions.values()].some((session) => session.inflight.size > 0)) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** Refuses new sessions; closes every open one (their open calls are cancelled upstream). */
  async closeAll(): Promise<void> {
    this.closing = true;
    clearInterval(this.sweeper);
    await Promise.all([...this.sessions.keys()].map((id) => this.close(id)));
  }
}
