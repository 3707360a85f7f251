// The HTTP plumbing both network transports share: one keep-alive agent per
// transport (node:http, not fetch: undici costs ~5 MB per worker), one exchange
// with the OAuth hook, delivery of parsed messages.
import type { Agent, ClientRequest, IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import type { JsonRpcId, JsonRpcMessage, MessageTransport } from './jsonrpc-session.js';
import { UpstreamAuthError, type HttpAuth } from './http-auth.js';
import { asError, parseMessages } from './http-bodies.js';
import { TooDeepError } from './inbound.js';


export type HttpModule = typeof import('node:http');

/** node:http, or node:https for an https URL (loaded only then). */
async function httpModule(url: URL): Promise<HttpModule> {
  return url.protocol === 'https:' ? ((await import('node:https')) as unknown as HttpModule) : await import('node:http');
}

export abstract class HttpTransportBase implements MessageTransport {
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


export async function parts(url: string): Promise<[URL, HttpModule, Agent]> {
  const parsed = new URL(url);
  const http = await httpModule(parsed);
  return [parsed, http, new http.Agent({ keepAlive: true })];
}

