// Network upstreams over node:http (not fetch: undici costs ~5 MB per worker):
// Streamable HTTP (POST per message, JSON or SSE answers, optional GET stream,
// DELETE on close) and legacy SSE (GET /sse for the endpoint, POST to it, all
// messages on the stream). One keep-alive agent per transport, i.e. per actor.
import type { Agent, ClientRequest, IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import type { JsonRpcId, JsonRpcMessage, MessageTransport } from './jsonrpc-session.js';
import { MAX_ERROR_TEXT_CHARS, sanitiseText } from '../../src/protocol/untrusted-text.js';
import { parseInbound, TooDeepError } from './inbound.js';
import { AnswerBudget, MAX_ANSWER_CHARS_IN_FLIGHT, MAX_MESSAGE_CHARS, MessageTooLargeError } from './limits.js';
import { RpcError } from './jsonrpc-session.js';
import { JSONRPC } from '../../src/protocol/errors.js';
import { SseParser, type SseEvent } from './sse-parser.js';
import { addTraceHeaders } from './trace-headers.js';
import { UpstreamAuthError, type HttpAuth } from './http-auth.js';
import { HttpStatusError } from './http-status-error.js';

type HttpModule = typeof import('node:http');

/** node:http, or node:https for an https URL (loaded only then). */
async function httpModule(url: URL): Promise<HttpModule> {
  return url.protocol === 'https:' ? ((await import('node:https')) as unknown as HttpModule) : await import('node:http');
}

const RECONNECT_INITIAL_MS = 1_000;
const RECONNECT_MAX_MS = 30_000;
const RECONNECT_GROWTH = 1.5;
const RECONNECT_MAX_RETRIES = 2;

function isRequest(message: JsonRpcMessage): boolean {
  return typeof message.method === 'string' && 'id' in message;
}

/** One per actor: every answer body (JSON, or the event being read on an SSE stream) counts against it. */
const answers = new AnswerBudget();

/** An answer cut off because the actor already holds as much answer text as it may. */
class AnswerBudgetError extends RpcError {
  constructor() {
    const message = `the upstream's answers in flight passed ${MAX_ANSWER_CHARS_IN_FLIGHT / (1024 * 1024)} MB: this one was cut off; retry when earlier calls have finished`;
    super(JSONRPC.UPSTREAM_BUSY, message, { code: 'UPSTREAM_BUSY' });
  }
}

/**
 * Reads a whole body; rejects when it breaks off, grows past MAX_MESSAGE_CHARS
 * or would take the actor's answers past their budget (the response is then
 * destroyed). The body's share of the budget is held until its answer has left.
 */
async function readText<T>(res: IncomingMessage, use: (text: string) => T): Promise<T> {
  let chars = 0;
  try {
    const text = await new Promise<string>((resolve, reject) => {
      const parts: string[] = [];
      const fail = (error: Error): void => {
        res.destroy();
        reject(error);
      };
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        if (!answers.take(chunk.length)) return fail(new AnswerBudgetError());
        parts.push(chunk);
        chars += chunk.length;
        if (chars > MAX_MESSAGE_CHARS) fail(new MessageTooLargeError('HTTP body'));
      });
      res.on('end', () => resolve(parts.join('')));
      res.on('error', (error) => reject(error));
      res.on('close', () => (res.complete ? resolve(parts.join('')) : reject(new Error('response ended before it was complete'))));
    });
    return use(text);
  } finally {
    // `use` delivers the answer; the chain that posts it to the main thread runs in microtasks after it. Until
    // then the parsed answer is alive, so its share is given back only on the next turn of the event loop.
    setImmediate(() => answers.give(chars));
  }
}

/**
 * The start of an error answer's body, for its message, made safe to log: the
 * rest is not read (an upstream's 3 MB error page would otherwise be carried
 * into every error, log line and event). Never fails.
 */
function errorText(res: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    const done = (): void => resolve(sanitiseText(text));
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      text += chunk;
      if (text.length <= MAX_ERROR_TEXT_CHARS) return;
      res.destroy();
      resolve(`${sanitiseText(text.slice(0, MAX_ERROR_TEXT_CHARS), MAX_ERROR_TEXT_CHARS)}… [rest of the body not read]`);
    });
    res.on('end', done);
    res.on('error', done);
    res.on('close', done);
  });
}

/**
 * Reads an SSE body to its end: resolves when it ends cleanly, rejects when it
 * breaks off or when the event being read would take the actor's answers past
 * their budget (AnswerBudgetError; the response is destroyed). An event's
 * share is held until it has been delivered.
 */
function readSse(res: IncomingMessage, onEvent: (event: SseEvent) => void, onDropped: (error: Error) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const parser = new SseParser();
    // Taken from the budget since the last event ended: the parser never holds more.
    let held = 0;
    const release = (keep: number): void => {
      const chars = held - keep;
      held = keep;
      if (chars > 0) setImmediate(() => answers.give(chars));
    };
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      if (!answers.take(chunk.length)) {
        release(0);
        res.destroy();
        reject(new AnswerBudgetError());
        return;
      }
      held += chunk.length;
      const dropped = parser.dropped;
      const events = parser.push(chunk);
      for (const event of events) onEvent(event);
      if (parser.dropped !== dropped) onDropped(new MessageTooLargeError('SSE event'));
      // Past an event's end the parser holds at most the rest of this chunk; while it skips a dropped event, nothing.
      if (parser.skipping) release(0);
      else if (events.length > 0) release(chunk.length);
    });
    res.on('end', () => {
      release(0);
      resolve();
    });
    res.on('error', (error) => {
      release(0);
      reject(error);
    });
    res.on('close', () => {
      release(0);
      if (res.complete) resolve();
      else reject(new Error('stream ended before it was complete'));
    });
  });
}

/** The JSON-RPC error a 2026-07-28-era server answers with a 4xx (e.g. -32022, -32020), if the body is one for `id`. */
function rpcErrorFor(text: string, id: JsonRpcId | undefined): JsonRpcMessage | undefined {
  try {
    const message = JSON.parse(text) as JsonRpcMessage;
    const matches = id !== undefined && (message.id === id || message.id === null);
    return matches && typeof message.error === 'object' && message.error !== null ? { ...message, id } : undefined;
  } catch {
    return undefined;
  }
}

function parseMessages(text: string): JsonRpcMessage[] {
  const data = parseInbound(text);
  return (Array.isArray(data) ? data : [data]) as JsonRpcMessage[];
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

/** The HTTP plumbing both network transports share. */
abstract class HttpTransportBase implements MessageTransport {
  onmessage?: (message: JsonRpcMessage, related?: JsonRpcId) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  protected closed = false;
  protected protocolVersion: string | undefined;
  private readonly requests = new Set<ClientRequest>();

  constructor(
    protected readonly url: URL,
    private readonly http: HttpModule,
    private readonly agent: Agent,
    private readonly headers: Record<string, string>,
    private readonly auth: HttpAuth | null = null,
  ) {}

  abstract start(): Promise<void>;
  abstract send(message: JsonRpcMessage): Promise<void>;

  setProtocolVersion(version: string): void {
    this.protocolVersion = version;
  }

  protected commonHeaders(): OutgoingHttpHeaders {
    const headers: OutgoingHttpHeaders = { ...this.headers };
    if (this.protocolVersion) headers['mcp-protocol-version'] = this.protocolVersion;
    return headers;
  }

  /**
   * One HTTP exchange; resolves with the response once its headers are in. With
   * an auth hook, a 401/403 is shown to it first: retried once if it says so,
   * an UpstreamAuthError if a person must sign in. The body is made per attempt
   * (`body()`), never kept for a retry: a 60 MB request would otherwise be
   * held twice over, as the message and as its text, until the answer began.
   */
  protected async exchange(method: string, url: URL, headers: OutgoingHttpHeaders, body?: () => string, onRequest?: (req: ClientRequest) => void, retried = false): Promise<IncomingMessage> {
    if (!this.auth) return this.exchangeOnce(method, url, headers, body?.(), onRequest);
    Object.assign(headers, await this.auth.headers());
    const res = await this.exchangeOnce(method, url, headers, body?.(), onRequest);
    const status = res.statusCode ?? 0;
    if (status !== 401 && status !== 403) return res;
    const sent = typeof headers.authorization === 'string' ? headers.authorization : undefined;
    const refusal = await this.auth.refused(status, res.headers['www-authenticate'], sent, retried);
    if (refusal === null) return res;
    res.resume();
    if (refusal !== 'retry') throw new UpstreamAuthError(refusal.signIn);
    delete headers.authorization;
    return this.exchange(method, url, headers, body, onRequest, true);
  }

  private exchangeOnce(method: string, url: URL, headers: OutgoingHttpHeaders, body?: string, onRequest?: (req: ClientRequest) => void): Promise<IncomingMessage> {
    if (this.closed) return Promise.reject(new Error('Not connected'));
    return new Promise((resolve, reject) => {
      if (body !== undefined) headers['content-length'] = Buffer.byteLength(body);
      const req = this.http.request(url, { method, headers, agent: this.agent });
      onRequest?.(req);
      let answered = false;
      this.requests.add(req);
      req.on('socket', (socket) => socket.setNoDelay(true));
      req.on('response', (res) => {
        answered = true;
        res.on('close', () => this.requests.delete(req));
        resolve(res);
      });
      req.on('error', (error) => {
        this.requests.delete(req);
        reject(error);
      });
      req.on('close', () => {
        if (!answered) this.requests.delete(req);
      });
      req.end(body);
    });
  }

  protected deliver(message: JsonRpcMessage, related?: JsonRpcId): void {
    if (!this.closed) this.onmessage?.(message, related);
  }

  /** `related`: the request whose POST stream carried the text; `keep`: which of its messages go on. */
  protected deliverText(text: string, related?: JsonRpcId, keep: (message: JsonRpcMessage) => boolean = () => true): void {
    let messages: JsonRpcMessage[];
    try {
      messages = parseMessages(text);
    } catch (error) {
      this.report(error instanceof TooDeepError ? error : new Error(`an upstream message is not JSON: ${asError(error).message}`));
      return;
    }
    for (const message of messages) if (keep(message)) this.deliver(message, related);
  }

  protected report(error: Error): void {
    if (!this.closed) this.onerror?.(error);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const req of this.requests) req.destroy();
    this.requests.clear();
    this.agent.destroy();
    this.onclose?.();
  }
}

export class StreamableHttpTransport extends HttpTransportBase {
  private sessionId: string | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private reconnectAttempts = 0;
  private retryMs: number | undefined;
  /** Requests whose answer is still coming (or not yet begun), by JSON-RPC id. */
  private readonly answering = new Map<JsonRpcId, ClientRequest>();
  /** Requests abandon() destroyed: their failure is not reported (weak: nothing to clean up however they end). */
  private readonly cutOff = new WeakSet<ClientRequest>();
  private headersOf: ((message: JsonRpcMessage) => Record<string, string | number>) | undefined;

  async start(): Promise<void> {}

  setMessageHeaders(headersOf: ((message: JsonRpcMessage) => Record<string, string | number>) | undefined): void {
    this.headersOf = headersOf;
  }

  protected override commonHeaders(): OutgoingHttpHeaders {
    const headers = super.commonHeaders();
    if (this.sessionId) headers['mcp-session-id'] = this.sessionId;
    return headers;
  }

  async send(message: JsonRpcMessage): Promise<void> {
    if (message.method === 'notifications/cancelled') this.abandon((message.params as { requestId?: JsonRpcId } | undefined)?.requestId);
    const headers = this.postHeaders(message);
    const id = isRequest(message) ? (message.id as JsonRpcId) : undefined;
    let res: IncomingMessage;
    let request: ClientRequest | undefined;
    const cutOff = (): boolean => request !== undefined && this.cutOff.has(request);
    try {
      res = await this.exchange('POST', this.url, headers, () => JSON.stringify(message), (req) => {
        request = req;
        if (id === undefined) return;
        this.answering.set(id, req);
        req.once('close', () => this.answering.get(id) === req && this.answering.delete(id));
      });
    } catch (error) {
      // A request we cut off ourselves (abandon) is not a transport problem.
      if (cutOff()) throw error;
      const failure = error instanceof UpstreamAuthError ? error : new Error(`Streamable HTTP error: ${asError(error).message}`);
      this.report(failure);
      throw failure;
    }
    const session = res.headers['mcp-session-id'];
    if (typeof session === 'string') this.sessionId = session;
    const status = res.statusCode ?? 0;
    if (status < 200 || status >= 300) {
      const text = await errorText(res);
      const rpcError = this.headersOf ? rpcErrorFor(text, id) : undefined;
      if (rpcError) return this.deliver(rpcError, id);
      const failure = new HttpStatusError(status, `Streamable HTTP error: Error POSTing to endpoint (HTTP ${status}): ${text}`);
      this.report(failure);
      throw failure;
    }
    if (status === 202 || id === undefined) {
      res.resume();
      if (status === 202 && message.method === 'notifications/initialized') this.openStream();
      return;
    }
    const type = String(res.headers['content-type'] ?? '');
    if (type.includes('text/event-stream')) {
      // The answer (and any notifications before it) arrives on this stream; it is read in the background.
      readSse(res, (event) => this.sseEvent(event, id), (error) => this.report(error)).catch((error: unknown) => {
        // An answer we gave up on (cancelled, timed out) was cut off on purpose.
        if (cutOff()) return;
        // Over the answer budget: this call fails, the connection is fine.
        if (error instanceof AnswerBudgetError) {
          this.deliver({ jsonrpc: '2.0', id, error: { code: error.code, message: error.rpcMessage, data: error.data } });
          return;
        }
        this.report(new Error(`SSE stream disconnected: ${asError(error).message}`));
      });
      return;
    }
    if (type.includes('application/json')) {
      try {
        await readText(res, (text) => this.deliverText(text, id));
      } catch (error) {
        // Over the answer budget: this call fails, the connection is fine.
        if (!cutOff() && !(error instanceof AnswerBudgetError)) this.report(new Error(`Streamable HTTP error: ${asError(error).message}`));
        throw error;
      }
      return;
    }
    res.resume();
    const failure = new Error(`Streamable HTTP error: Unexpected content type: ${type}`);
    this.report(failure);
    throw failure;
  }

  private postHeaders(message: JsonRpcMessage): OutgoingHttpHeaders {
    const headers = { ...this.commonHeaders(), ...this.headersOf?.(message) };
    headers['content-type'] = 'application/json';
    headers.accept = 'application/json, text/event-stream';
    addTraceHeaders(headers, message);
    return headers;
  }

  /**
   * A 2026-07-28 `subscriptions/listen` request: its SSE answer stays open and
   * carries the server's notifications (delivered like the GET stream's).
   * Resolves when the stream ends, rejects when it cannot be opened or breaks;
   * `signal` closes it (the spec's way to end a listen over HTTP).
   */
  async listen(message: JsonRpcMessage, signal: AbortSignal): Promise<void> {
    let request: ClientRequest | undefined;
    const close = (): void => void request?.destroy();
    signal.addEventListener('abort', close, { once: true });
    try {
      const res = await this.exchange('POST', this.url, this.postHeaders(message), () => JSON.stringify(message), (req) => (request = req));
      const status = res.statusCode ?? 0;
      if (status < 200 || status >= 300 || !String(res.headers['content-type'] ?? '').includes('text/event-stream')) {
        throw new HttpStatusError(status, `subscriptions/listen was refused (HTTP ${status}): ${await errorText(res)}`);
      }
      await readSse(res, (event) => {
        // The graceful end's result answers a request the session never sent: only notifications go on.
        if (event.event === 'message') this.deliverText(event.data, undefined, (item) => typeof item.method === 'string');
      }, (error) => this.report(error));
    } finally {
      signal.removeEventListener('abort', close);
    }
  }

  /**
   * The request was cancelled (or timed out): stop reading its answer. An
   * upstream that hangs or drips would otherwise hold the socket, and the
   * growing body, for as long as it likes.
   */
  private abandon(id: JsonRpcId | undefined): void {
    const req = id === undefined ? undefined : this.answering.get(id);
    if (!req) return;
    this.answering.delete(id!);
    this.cutOff.add(req);
    req.destroy();
  }

  private sseEvent(event: SseEvent, related?: JsonRpcId): void {
    if (event.retry !== undefined) this.retryMs = event.retry;
    if (event.event === 'message') this.deliverText(event.data, related);
  }

  /** The optional GET stream for server-initiated messages; 405 means the server offers none. */
  private openStream(): void {
    if (this.closed) return;
    const headers = this.commonHeaders();
    headers.accept = 'text/event-stream';
    this.exchange('GET', this.url, headers)
      .then(async (res) => {
        const status = res.statusCode ?? 0;
        if (status === 405) {
          res.resume();
          return;
        }
        if (status < 200 || status >= 300) {
          res.resume();
          throw new Error(`Failed to open SSE stream: HTTP ${status}`);
        }
        this.reconnectAttempts = 0;
        await readSse(res, (event) => this.sseEvent(event), (error) => this.report(error));
        throw new Error('SSE stream disconnected');
      })
      .catch((error: unknown) => {
        if (this.closed) return;
        this.report(asError(error));
        this.scheduleReconnect();
      });
  }

  private scheduleReconnect(): void {
    if (this.closed || this.reconnectAttempts >= RECONNECT_MAX_RETRIES) return;
    const delay = this.retryMs ?? Math.min(RECONNECT_INITIAL_MS * RECONNECT_GROWTH ** this.reconnectAttempts, RECONNECT_MAX_MS);
    this.reconnectAttempts += 1;
    this.reconnectTimer = setTimeout(() => this.openStream(), delay);
    this.reconnectTimer.unref();
  }

  /** Tells the upstream to drop the session (DELETE); 405 means it does not support that. */
  async endSession(): Promise<void> {
    if (!this.sessionId || this.closed) return;
    const res = await this.exchange('DELETE', this.url, this.commonHeaders());
    res.resume();
    const status = res.statusCode ?? 0;
    if (status !== 405 && (status < 200 || status >= 300)) throw new Error(`Failed to terminate session: HTTP ${status}`);
    this.sessionId = undefined;
  }

  override async close(): Promise<void> {
    clearTimeout(this.reconnectTimer);
    await super.close();
  }
}

export class LegacySseTransport extends HttpTransportBase {
  private endpoint: URL | undefined;

  start(): Promise<void> {
    return new Promise((resolve, reject) => {
      let started = false;
      const fail = (error: Error): void => {
        if (!started) {
          started = true;
          reject(error);
          return;
        }
        if (this.closed) return;
        // Every answer comes on this stream: without it the session is over.
        this.report(error);
        void this.close();
      };
      const headers = this.commonHeaders();
      headers.accept = 'text/event-stream';
      this.exchange('GET', this.url, headers)
        .then(async (res) => {
          const status = res.statusCode ?? 0;
          if (status < 200 || status >= 300) {
            res.resume();
            throw new Error(`SSE error: Non-200 status code (${status})`);
          }
          await readSse(res, (event) => {
            if (event.event === 'endpoint') {
              if (started) return;
              let endpoint: URL;
              try {
                endpoint = new URL(event.data, this.url);
              } catch {
                fail(new Error(`SSE error: invalid endpoint ${JSON.stringify(event.data)}`));
                return;
              }
              if (endpoint.origin !== this.url.origin) {
                fail(new Error(`Endpoint origin does not match connection origin: ${endpoint.origin}`));
                return;
              }
              this.endpoint = endpoint;
              started = true;
              resolve();
            } else if (event.event === 'message') this.deliverText(event.data);
          }, (error) => this.report(error));
          throw new Error('SSE stream disconnected');
        })
        .catch((error: unknown) => fail(asError(error)));
    });
  }

  async send(message: JsonRpcMessage): Promise<void> {
    if (!this.endpoint) throw new Error('Not connected');
    const headers = this.commonHeaders();
    headers['content-type'] = 'application/json';
    addTraceHeaders(headers, message);
    let res: IncomingMessage;
    try {
      res = await this.exchange('POST', this.endpoint, headers, () => JSON.stringify(message));
    } catch (error) {
      const failure = error instanceof UpstreamAuthError ? error : new Error(`SSE error: ${asError(error).message}`);
      this.report(failure);
      throw failure;
    }
    const status = res.statusCode ?? 0;
    if (status < 200 || status >= 300) {
      const text = await errorText(res);
      const failure = new Error(`Error POSTing to endpoint (HTTP ${status}): ${text}`);
      this.report(failure);
      throw failure;
    }
    res.resume();
  }
}

async function parts(url: string): Promise<[URL, HttpModule, Agent]> {
  const parsed = new URL(url);
  const http = await httpModule(parsed);
  return [parsed, http, new http.Agent({ keepAlive: true })];
}

export async function createStreamableHttp(url: string, headers: Record<string, string>, auth: HttpAuth | null = null): Promise<StreamableHttpTransport> {
  return new StreamableHttpTransport(...(await parts(url)), headers, auth);
}

export async function createLegacySse(url: string, headers: Record<string, string>, auth: HttpAuth | null = null): Promise<LegacySseTransport> {
  return new LegacySseTransport(...(await parts(url)), headers, auth);
}
