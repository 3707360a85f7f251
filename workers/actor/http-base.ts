// The HTTP plumbing both network transports share: one keep-alive pool per
// transport (http1.ts, not fetch: undici costs ~5 MB per worker), one exchange
// with the OAuth hook, delivery of parsed messages.
import type { Http1Headers, Http1Request, Http1Response } from './http1.js';
import { http1Pool, PoolFullError, type Http1Pool } from './http1-pool.js';
import type { JsonRpcId, JsonRpcMessage, MessageTransport } from './jsonrpc-session.js';
import { UpstreamAuthError, type HttpAuth } from './http-auth.js';
import { asError, parseMessages } from './http-bodies.js';
import { TooDeepError } from './inbound.js';
import type { SseEvent } from '../../src/protocol/sse-parser.js';

export interface ExchangeOptions {
  /** Made per attempt, never kept for a retry. */
  body?: () => string;
  onRequest?: (req: Http1Request) => void;
  /** The upstream acknowledges it at once (a reply, a notification, a DELETE, a legacy SSE POST): it may use the sockets kept for such. */
  brief?: boolean;
}

/** How long an exchange nothing waits on any more (a notification's acknowledgement, a stream past its answer) may take to end. */
const LINGER_MS = 10_000;

export abstract class HttpTransportBase implements MessageTransport {
  onmessage?: (message: JsonRpcMessage, related?: JsonRpcId) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  protected closed = false;
  protected protocolVersion: string | undefined;
  /** LINGER_MS (tests shorten it). */
  lingerMs = LINGER_MS;
  /** Requests cut off on purpose (abandoned, or let go): their failure is not reported (weak: nothing to clean up however they end). */
  protected readonly cutOff = new WeakSet<Http1Request>();

  constructor(
    protected readonly url: URL,
    private readonly pool: Http1Pool,
    private readonly headers: Record<string, string>,
    private readonly auth: HttpAuth | null = null,
  ) {}

  abstract start(): Promise<void>;
  abstract send(message: JsonRpcMessage): Promise<void>;

  setProtocolVersion(version: string): void {
    this.protocolVersion = version;
  }

  protected commonHeaders(): Http1Headers {
    const headers: Http1Headers = { ...this.headers };
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
  protected async exchange(method: string, url: URL, headers: Http1Headers, options: ExchangeOptions = {}, retried = false): Promise<Http1Response> {
    if (!this.auth) return this.exchangeOnce(method, url, headers, options);
    Object.assign(headers, await this.auth.headers());
    const res = await this.exchangeOnce(method, url, headers, options);
    const status = res.statusCode;
    if (status !== 401 && status !== 403) return res;
    const sent = typeof headers.authorization === 'string' ? headers.authorization : undefined;
    const refusal = await this.auth.refused(status, res.headers['www-authenticate'], sent, retried);
    if (refusal === null) return res;
    // Its body is of no use: not read to its end (which an upstream may put off forever), its socket is closed.
    res.destroy();
    if (refusal !== 'retry') throw new UpstreamAuthError(refusal.signIn);
    delete headers.authorization;
    return this.exchange(method, url, headers, options, true);
  }

  private async exchangeOnce(method: string, url: URL, headers: Http1Headers, { body, onRequest, brief }: ExchangeOptions): Promise<Http1Response> {
    // A closed transport's pool is closed too, and refuses with "Not connected".
    const req = this.pool.request(method, url, headers, body?.(), brief);
    onRequest?.(req);
    return req.response;
  }

  /** A POST that failed: a sign-in or a full pool reaches the caller as it is (each has its own code); anything else as this transport's error. */
  protected postFailure(error: unknown, transport: string): Error {
    return error instanceof UpstreamAuthError || error instanceof PoolFullError ? error : new Error(`${transport} error: ${asError(error).message}`);
  }

  /** Nothing waits on `req` any more: the upstream gets lingerMs to end it, then its socket is closed. */
  protected letGo(req: Http1Request): void {
    const timer = setTimeout(() => {
      this.cutOff.add(req);
      req.destroy();
    }, this.lingerMs);
    timer.unref();
    req.once('close', () => clearTimeout(timer));
  }

  protected deliver(message: JsonRpcMessage, related?: JsonRpcId): void {
    if (!this.closed) this.onmessage?.(message, related);
  }

  /** An SSE `message` event's messages; one without data (a priming event, a keep-alive) carries none. */
  protected sseMessage(event: SseEvent, related?: JsonRpcId, keep?: (message: JsonRpcMessage) => boolean): void {
    if (event.event === 'message' && event.data !== '') this.deliverText(event.data, related, keep);
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
    this.pool.close();
    this.onclose?.();
  }
}


export async function parts(url: string): Promise<[URL, Http1Pool]> {
  const parsed = new URL(url);
  return [parsed, await http1Pool(parsed)];
}

