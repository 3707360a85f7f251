// Downstream sessions of /mcp: one transport per session, keyed by
// Mcp-Session-Id. The common POST (plain requests and notifications on an
// initialized session) is checked here and answered by the transport's fast
// path, straight into an HttpReply; everything else goes to the SDK's
// Streamable HTTP transport as a Fetch Request, so the SDK stays the reference
// for the HTTP semantics (initialize, SSE GET streams, DELETE, every refusal).
// The dispatcher owns meaning.
import { randomUUID } from 'node:crypto';
import { isJsonContentType } from '@modelcontextprotocol/sdk/shared/mediaType.js';
import { SUPPORTED_PROTOCOL_VERSIONS, type JSONRPCNotification } from '@modelcontextprotocol/sdk/types.js';
import type { McpCredential } from '../http/mcp-auth.js';
import type { HttpReply } from '../http/reply.js';
import type { Logger } from '../log.js';
import type { Dispatcher } from './dispatcher.js';
import { classifyEra, SHAPE_ONLY_CELLS } from './era.js';
import { echoableId, sendRejection, type ModernEndpoint } from './modern/endpoint.js';
import { plainMessages } from './plain-messages.js';
import type { McpSession } from './session.js';
import type { SessionTags } from './session-tag.js';
import type { ViewSession } from '../toolsets/view-lists.js';
import { SessionTransport } from './session-transport.js';

/** One /mcp request as the registry needs it; `toRequest` builds a Fetch Request only for the SDK transport's paths. */
export interface McpRequestHead {
  method: string;
  /** Lower-case names. */
  headers: Record<string, string>;
  /** Who presented the request (already authenticated by the HTTP server). */
  credential: McpCredential;
  /** The toolset this request sees (its endpoint's or its client's); null: the whole surface. */
  toolset: string | null;
  toRequest(): Request;
}

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
  /** Told once a session is gone (DELETE, idle, evicted, shutdown), after its open calls were aborted. */
  onSessionClosed?: (session: McpSession) => void;
  /** Serves the requests of the 2026-07-28 era (per-request envelope, no session); without it every request is legacy. */
  modern?: ModernEndpoint;
  /** The daemon's tagging of session ids: what its logs name a session by, as its invocation rows and spans do. */
  sessionTags: SessionTags;
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

function sendRpcError(reply: HttpReply, status: number, code: number, message: string): void {
  reply.send(status, { 'content-type': 'application/json' }, JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

/** Headers the SDK transport would accept as they are; any other POST goes to it for its verdict. */
function fastPathHeaders(headers: Record<string, string>): boolean {
  const accept = headers['accept'];
  const version = headers['mcp-protocol-version'];
  return (
    accept !== undefined &&
    accept.includes('application/json') &&
    accept.includes('text/event-stream') &&
    isJsonContentType(headers['content-type'] ?? null) &&
    (version === undefined || SUPPORTED_PROTOCOL_VERSIONS.includes(version))
  );
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

  /** An initialized session by its id. */
  session(id: string): McpSession | undefined {
    return this.sessions.get(id);
  }

  get size(): number {
    return this.sessions.size;
  }

  /** The negotiated protocol version of each open session (for the metrics). */
  *protocolVersions(): Iterable<string | null> {
    for (const session of this.sessions.values()) yield session.protocolVersion;
  }

  /**
   * Answers one /mcp request into `reply`. A POST's bytes come in `body`,
   * already read by the HTTP server, and are parsed exactly once here.
   */
  async serve(head: McpRequestHead, body: Buffer | null, reply: HttpReply): Promise<void> {
    // Parsed once; a body that is not JSON (or not declared so) stays with the SDK transport, which answers it as before.
    const parsed = body !== null && isJsonContentType(head.headers['content-type'] ?? null) ? parseBody(body) : { ok: false as const };
    // The era comes first: a modern request has no session, whatever Mcp-Session-Id it carries.
    if (parsed.ok && this.options.modern) {
      const headers = head.headers;
      const verdict = classifyEra({ httpMethod: head.method, versionHeader: headers['mcp-protocol-version'], methodHeader: headers['mcp-method'], body: parsed.value });
      if (verdict.kind === 'modern') {
        if (this.closing) return sendRpcError(reply, 503, -32000, 'coffer is shutting down');
        return this.options.modern.serve(verdict.message, verdict.revision, headers, head.toolset, head.credential.id, reply);
      }
      if (verdict.kind === 'reject' && !SHAPE_ONLY_CELLS.has(verdict.cell)) return sendRejection(reply, verdict, echoableId(parsed.value));
    }
    const sessionId = head.headers['mcp-session-id'];
    if (sessionId !== undefined) {
      const session = this.sessions.get(sessionId);
      // Another credential's session is answered as an unknown one: a 403 would confirm that a leaked or guessed id is live.
      if (!session || session.credential !== head.credential.id || session.toolset !== head.toolset) return sendRpcError(reply, 404, -32001, 'Session not found: initialize a new session');
      session.lastActiveAt = Date.now();
      return body === null ? reply.fetch(await session.transport.handleRequest(head.toRequest())) : this.post(session, head, body, parsed, reply);
    }
    if (head.method !== 'POST' || body === null) return sendRpcError(reply, 400, -32000, 'Bad Request: Mcp-Session-Id header is required');
    if (this.closing) return sendRpcError(reply, 503, -32000, 'coffer is shutting down');
    if (this.sessions.size >= (this.options.maxSessions ?? DEFAULT_MAX_SESSIONS) && !this.evictOne()) {
      return sendRpcError(reply, 503, -32000, 'too many open MCP sessions, all of them busy: try again later');
    }
    const transport = this.open(head.credential, head.toolset).transport;
    const request = head.toRequest();
    return reply.fetch(await (parsed.ok ? transport.handleRequest(request, { parsedBody: parsed.value }) : transport.handleRequest(withBody(request, body))));
  }

  /**
   * A POST on an open session. Answers are routed to their HTTP stream by
   * request id: an id reused while the first request is pending would strand
   * the first stream (never answered, kept open by keep-alives). Such a POST,
   * and an empty batch, is refused with -32600 before the transport sees it.
   */
  private async post(session: McpSession, head: McpRequestHead, body: Buffer, result: ReturnType<typeof parseBody>, reply: HttpReply): Promise<void> {
    if (!result.ok) return reply.fetch(await session.transport.handleRequest(withBody(head.toRequest(), body)));
    const parsed = result.value;
    if (Array.isArray(parsed) && parsed.length === 0) return sendRpcError(reply, 400, -32600, 'Invalid Request: an empty batch');
    // The fast path's check collects the request ids as it goes; only other POSTs are walked again for them.
    const plain = fastPathHeaders(head.headers) ? plainMessages(parsed) : null;
    const ids = plain?.requestIds ?? requestIds(parsed);
    const clash = ids.find((id, index) => session.pending.has(id) || ids.indexOf(id) !== index);
    if (clash !== undefined) {
      return sendRpcError(reply, 400, -32600, `Invalid Request: id ${JSON.stringify(clash)} is already used by a pending request of this session`);
    }
    // Reserved now (no await in between), released by the dispatcher once answered.
    for (const id of ids) session.pending.add(id);
    if (plain) return session.transport.accept(plain, reply, head.headers);
    let response: Response;
    try {
      response = await session.transport.handleRequest(head.toRequest(), { parsedBody: parsed });
    } catch (error) {
      for (const id of ids) session.pending.delete(id);
      throw error;
    }
    // Only a 200 hands the requests to the dispatcher; any refusal leaves them unanswered here.
    if (response.status !== 200) for (const id of ids) session.pending.delete(id);
    return reply.fetch(response);
  }

  /** Closes the least recently active session with no open call; false if every session is busy. */
  private evictOne(): boolean {
    let oldest: McpSession | undefined;
    for (const session of this.sessions.values()) {
      if (session.inflight.size === 0 && session.pending.size === 0 && (!oldest || session.lastActiveAt < oldest.lastActiveAt)) oldest = session;
    }
    if (!oldest) return false;
    this.log.debug('mcp session evicted: too many sessions', { session: oldest.tag });
    void this.close(oldest.id);
    return true;
  }

  /** A transport for a POST without session id; it only becomes a session if that POST is `initialize`. */
  private open(credential: McpCredential, toolset: string | null): McpSession {
    const transport = new SessionTransport({
      sessionIdGenerator: randomUUID,
      maxRequestBodySize: this.options.maxBodyBytes,
      keepAliveMs: this.options.keepAliveMs,
      onsessioninitialized: (id) => {
        session.id = id;
        session.tag = this.options.sessionTags.tag(id);
        this.sessions.set(id, session);
      },
      onsessionclosed: (id) => void this.close(id),
    });
    const session: McpSession = {
      id: '',
      tag: '',
      credential: credential.id,
      toolset,
      transport,
      protocolVersion: null,
      clientInfo: null,
      clientCapabilities: {},
      inflight: new Map(),
      pending: new Set(),
      lastActiveAt: Date.now(),
    };
    transport.onmessage = (message, extra) => this.dispatcher.onMessage(session, message, extra?.requestInfo?.headers);
    transport.onerror = (error) => this.log.debug('mcp transport', { session: session.tag, error: error.message });
    void transport.start();
    return session;
  }

  /** Sends a notification to every initialized session and modern listen (or those whose view `to` picks); a session's goes on its standalone GET stream. */
  broadcast(notification: JSONRPCNotification, to?: (session: ViewSession) => boolean): void {
    this.options.modern?.broadcast(notification as { method: string; params?: Record<string, unknown> }, to);
    for (const session of this.sessions.values()) {
      if (to && !to(session)) continue;
      session.transport.send(notification).catch((error: unknown) => this.log.debug('notification not delivered', { session: session.tag, error: String(error) }));
    }
  }

  async close(id: string): Promise<void> {
    const session = this.sessions.get(id);
    if (!session) return;
    this.sessions.delete(id);
    for (const controller of session.inflight.values()) controller.abort('session closed');
    await session.transport.close();
    this.options.onSessionClosed?.(session);
  }

  /** Closes every session and modern listen opened with this credential (it was revoked, or bound to another view). */
  closeCredential(credentialId: string): void {
    this.options.modern?.closeCredential(credentialId);
    for (const session of this.sessions.values()) if (session.credential === credentialId) void this.close(session.id);
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
    this.options.modern?.closeAll();
    clearInterval(this.sweeper);
    await Promise.all([...this.sessions.keys()].map((id) => this.close(id)));
  }
}
