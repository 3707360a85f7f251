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
  /**
   * Open sessions at most (default 10,000). A client that initializes over and
   * over without DELETE would otherwise grow memory for idleTimeoutMs; past the
   * cap the least recently active session without open calls is closed (its
   * client gets 404 and initializes again), or, if all are busy, 503.
   */
  maxSessions?: number;
}

export const DEFAULT_MAX_SESSIONS = 10_000;

/** The ids of the JSON-RPC requests in a parsed body (messages that look like requests; the transport validates the rest). */
function requestIds(body: unknown): Array<string | number> {
  const ids: Array<string | number> = [];
  for (const message of Array.isArray(body) ? body : [body]) {
    if (typeof message !== 'object' || message === null || typeof (message as { method?: unknown }).method !== 'string') continue;
    const id = (message as { id?: unknown }).id;
    if (typeof id === 'string' || typeof id === 'number') ids.push(id);
  }
  return ids;
}

function parseBody(body: Buffer): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(body.toString('utf8')) };
  } catch {
    return { ok: false };
  }
}

/** The transport owns the answer to a malformed body (and the Accept / Content-Type checks before it): give it the bytes. */
function withBody(request: Request, body: Buffer): Request {
  return new Request(request.url, { method: request.method, headers: request.headers, body });
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

  /**
   * `request` carries method, URL and headers; a POST's bytes come separately
   * in `body`, already read by the HTTP server, and are parsed exactly once
   * here (the transport gets them as `parsedBody`).
   */
  async handle(request: Request, body: Buffer | null): Promise<Response> {
    const sessionId = request.headers.get('mcp-session-id');
    if (sessionId !== null) {
      const session = this.sessions.get(sessionId);
      if (!session) return jsonRpcError(404, -32001, 'Session not found: initialize a new session');
      session.lastActiveAt = Date.now();
      return body === null ? session.transport.handleRequest(request) : this.post(session, request, body);
    }
    if (request.method !== 'POST' || body === null) return jsonRpcError(400, -32000, 'Bad Request: Mcp-Session-Id header is required');
    if (this.closing) return jsonRpcError(503, -32000, 'coffer is shutting down');
    if (this.sessions.size >= (this.options.maxSessions ?? DEFAULT_MAX_SESSIONS) && !this.evictOne()) {
      return jsonRpcError(503, -32000, 'too many open MCP sessions, all of them busy: try again later');
    }
    const transport = this.open().transport;
    const parsed = parseBody(body);
    return parsed.ok ? transport.handleRequest(request, { parsedBody: parsed.value }) : transport.handleRequest(withBody(request, body));
  }

  /**
   * A POST on an open session. The transport answers each request on the HTTP
   * stream that carried it, found by request id: an id reused while the first
   * request is pending would strand the first stream (never answered, kept
   * open by keep-alives). Such a POST, and an empty batch, is refused with
   * -32600 before the transport sees it.
   */
  private async post(session: McpSession, request: Request, body: Buffer): Promise<Response> {
    const result = parseBody(body);
    if (!result.ok) return session.transport.handleRequest(withBody(request, body));
    const parsed = result.value;
    if (Array.isArray(parsed) && parsed.length === 0) return jsonRpcError(400, -32600, 'Invalid Request: an empty batch');
    const ids = requestIds(parsed);
    const clash = ids.find((id, index) => session.pending.has(id) || ids.indexOf(id) !== index);
    if (clash !== undefined) {
      return jsonRpcError(400, -32600, `Invalid Request: id ${JSON.stringify(clash)} is already used by a pending request of this session`);
    }
    // Reserved now (no await in between), released by the dispatcher once answered.
    for (const id of ids) session.pending.add(id);
    let response: Response;
    try {
      response = await session.transport.handleRequest(request, { parsedBody: parsed });
    } catch (error) {
      for (const id of ids) session.pending.delete(id);
      throw error;
    }
    // Only a 200 hands the requests to the dispatcher; any refusal leaves them unanswered here.
    if (response.status !== 200) for (const id of ids) session.pending.delete(id);
    return response;
  }

  /** Closes the least recently active session with no open call; false if every session is busy. */
  private evictOne(): boolean {
    let oldest: McpSession | undefined;
    for (const session of this.sessions.values()) {
      if (session.inflight.size === 0 && session.pending.size === 0 && (!oldest || session.lastActiveAt < oldest.lastActiveAt)) oldest = session;
    }
    if (!oldest) return false;
    this.log.debug('mcp session evicted: too many sessions', { session: oldest.id });
    void this.close(oldest.id);
    return true;
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
      pending: new Set(),
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
