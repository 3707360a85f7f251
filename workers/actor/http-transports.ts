// Network upstreams over node:http (not fetch: undici costs ~5 MB per worker):
// Streamable HTTP (POST per message, JSON or SSE answers, optional GET stream,
// DELETE on close) and legacy SSE (GET /sse for the endpoint, POST to it, all
// messages on the stream). One keep-alive agent per transport, i.e. per actor.
import type { Agent, ClientRequest, IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import type { JsonRpcMessage, MessageTransport } from './jsonrpc-session.js';
import { SseParser, type SseEvent } from './sse-parser.js';

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

function readText(res: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => (text += chunk));
    res.on('end', () => resolve(text));
    res.on('error', () => resolve(text));
    res.on('close', () => resolve(text));
  });
}

/** Reads an SSE body to its end: resolves when it ends cleanly, rejects when it breaks off. */
function readSse(res: IncomingMessage, onEvent: (event: SseEvent) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const parser = new SseParser();
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      for (const event of parser.push(chunk)) onEvent(event);
    });
    res.on('end', () => resolve());
    res.on('error', (error) => reject(error));
    res.on('close', () => (res.complete ? resolve() : reject(new Error('stream ended before it was complete'))));
  });
}

function parseMessages(text: string): JsonRpcMessage[] {
  const data = JSON.parse(text) as unknown;
  return (Array.isArray(data) ? data : [data]) as JsonRpcMessage[];
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

/** The HTTP plumbing both network transports share. */
abstract class HttpTransportBase implements MessageTransport {
  onmessage?: (message: JsonRpcMessage) => void;
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

  /** One HTTP exchange; resolves with the response once its headers are in. */
  protected exchange(method: string, url: URL, headers: OutgoingHttpHeaders, body?: string): Promise<IncomingMessage> {
    if (this.closed) return Promise.reject(new Error('Not connected'));
    return new Promise((resolve, reject) => {
      if (body !== undefined) headers['content-length'] = Buffer.byteLength(body);
      const req = this.http.request(url, { method, headers, agent: this.agent });
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

  protected deliver(message: JsonRpcMessage): void {
    if (!this.closed) this.onmessage?.(message);
  }

  protected deliverText(text: string): void {
    let messages: JsonRpcMessage[];
    try {
      messages = parseMessages(text);
    } catch (error) {
      this.report(new Error(`an upstream message is not JSON: ${asError(error).message}`));
      return;
    }
    for (const message of messages) this.deliver(message);
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

  async start(): Promise<void> {}

  protected override commonHeaders(): OutgoingHttpHeaders {
    const headers = super.commonHeaders();
    if (this.sessionId) headers['mcp-session-id'] = this.sessionId;
    return headers;
  }

  async send(message: JsonRpcMessage): Promise<void> {
    const headers = this.commonHeaders();
    headers['content-type'] = 'application/json';
    headers.accept = 'application/json, text/event-stream';
    let res: IncomingMessage;
    try {
      res = await this.exchange('POST', this.url, headers, JSON.stringify(message));
    } catch (error) {
      const failure = new Error(`Streamable HTTP error: ${asError(error).message}`);
      this.report(failure);
      throw failure;
    }
    const session = res.headers['mcp-session-id'];
    if (typeof session === 'string') this.sessionId = session;
    const status = res.statusCode ?? 0;
    if (status < 200 || status >= 300) {
      const text = await readText(res);
      const failure = new Error(`Streamable HTTP error: Error POSTing to endpoint (HTTP ${status}): ${text}`);
      this.report(failure);
      throw failure;
    }
    if (status === 202 || !isRequest(message)) {
      res.resume();
      if (status === 202 && message.method === 'notifications/initialized') this.openStream();
      return;
    }
    const type = String(res.headers['content-type'] ?? '');
    if (type.includes('text/event-stream')) {
      // The answer (and any notifications before it) arrives on this stream; it is read in the background.
      readSse(res, (event) => this.sseEvent(event)).catch((error: unknown) => this.report(new Error(`SSE stream disconnected: ${asError(error).message}`)));
      return;
    }
    if (type.includes('application/json')) {
      this.deliverText(await readText(res));
      return;
    }
    res.resume();
    const failure = new Error(`Streamable HTTP error: Unexpected content type: ${type}`);
    this.report(failure);
    throw failure;
  }

  private sseEvent(event: SseEvent): void {
    if (event.retry !== undefined) this.retryMs = event.retry;
    if (event.event === 'message') this.deliverText(event.data);
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
        await readSse(res, (event) => this.sseEvent(event));
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
          });
          throw new Error('SSE stream disconnected');
        })
        .catch((error: unknown) => fail(asError(error)));
    });
  }

  async send(message: JsonRpcMessage): Promise<void> {
    if (!this.endpoint) throw new Error('Not connected');
    const headers = this.commonHeaders();
    headers['content-type'] = 'application/json';
    let res: IncomingMessage;
    try {
      res = await this.exchange('POST', this.endpoint, headers, JSON.stringify(message));
    } catch (error) {
      const failure = new Error(`SSE error: ${asError(error).message}`);
      this.report(failure);
      throw failure;
    }
    const status = res.statusCode ?? 0;
    if (status < 200 || status >= 300) {
      const text = await readText(res);
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

export async function createStreamableHttp(url: string, headers: Record<string, string>): Promise<StreamableHttpTransport> {
  return new StreamableHttpTransport(...(await parts(url)), headers);
}

export async function createLegacySse(url: string, headers: Record<string, string>): Promise<LegacySseTransport> {
  return new LegacySseTransport(...(await parts(url)), headers);
}
