// A minimal JSON-RPC 2.0 session for an MCP client over any message transport:
// correlates requests and responses by id, routes progress notifications by
// progressToken, sends notifications/cancelled when a request is aborted,
// answers the server's pings and refuses its other requests with -32601.
// It validates nothing: results are handed back exactly as parsed.

export type JsonRpcId = string | number;
export type JsonRpcMessage = Record<string, unknown>;

/** What the session needs from a transport (stdio, Streamable HTTP, legacy SSE). */
export interface MessageTransport {
  onmessage?: (message: JsonRpcMessage) => void;
  /** The transport ended; called at most once. */
  onclose?: () => void;
  /** A problem that does not by itself end the transport (a bad line, a failed stream). */
  onerror?: (error: Error) => void;
  start(): Promise<void>;
  send(message: JsonRpcMessage): Promise<void>;
  close(): Promise<void>;
  /** Called once initialize has negotiated the version (Streamable HTTP sends it as a header). */
  setProtocolVersion?(version: string): void;
}

export interface ProgressParams {
  progress: number;
  total?: number;
  message?: string;
}

/** The upstream answered a request with a JSON-RPC error. */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    readonly rpcMessage: string,
    readonly data?: unknown,
  ) {
    super(`MCP error ${code}: ${rpcMessage}`);
    this.name = 'RpcError';
  }
}

/** The session (transport) closed while a request was waiting. */
export class SessionClosedError extends Error {
  constructor() {
    super('Connection closed');
    this.name = 'SessionClosedError';
  }
}

export interface SessionRequestOptions {
  signal?: AbortSignal;
  onprogress?: (progress: ProgressParams) => void;
}

export interface SessionHooks {
  /** Every notification other than progress and cancelled. */
  onNotification?(method: string, params: unknown): void;
  onclose?(): void;
  onerror?(error: Error): void;
}

const METHOD_NOT_FOUND = -32601;

interface Pending {
  resolve(result: Record<string, unknown>): void;
  reject(error: unknown): void;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export class JsonRpcSession {
  private nextId = 0;
  private readonly pending = new Map<JsonRpcId, Pending>();
  private readonly progress = new Map<JsonRpcId, (progress: ProgressParams) => void>();
  private closed = false;

  constructor(
    private readonly transport: MessageTransport,
    private readonly hooks: SessionHooks = {},
  ) {
    transport.onmessage = (message) => this.receive(message);
    transport.onclose = () => this.handleClose();
    transport.onerror = (error) => this.hooks.onerror?.(error);
  }

  get isClosed(): boolean {
    return this.closed;
  }

  start(): Promise<void> {
    return this.transport.start();
  }

  /** Sends a request; resolves with its result object as received, rejects with RpcError, SessionClosedError, the abort reason or a send error. */
  request(method: string, params: Record<string, unknown> | undefined, options: SessionRequestOptions = {}): Promise<Record<string, unknown>> {
    if (this.closed) return Promise.reject(new SessionClosedError());
    const { signal, onprogress } = options;
    if (signal?.aborted) return Promise.reject(signal.reason);
    const id = this.nextId++;
    let sent = params;
    if (onprogress) {
      const meta = isObject(params?._meta) ? params._meta : {};
      sent = { ...params, _meta: { ...meta, progressToken: id } };
      this.progress.set(id, onprogress);
    }
    const message: JsonRpcMessage = sent === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params: sent };
    return new Promise<Record<string, unknown>>((resolve, reject) => {
      const cleanup = (): void => {
        this.pending.delete(id);
        this.progress.delete(id);
        signal?.removeEventListener('abort', onAbort);
      };
      const onAbort = (): void => {
        if (!this.pending.has(id)) return;
        cleanup();
        const reason = signal!.reason;
        this.transport
          .send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: String(reason instanceof Error ? reason.message : reason) } })
          .catch((error: unknown) => this.hooks.onerror?.(error instanceof Error ? error : new Error(String(error))));
        reject(reason);
      };
      this.pending.set(id, {
        resolve: (result) => {
          cleanup();
          resolve(result);
        },
        reject: (error) => {
          cleanup();
          reject(error);
        },
      });
      signal?.addEventListener('abort', onAbort, { once: true });
      this.transport.send(message).catch((error: unknown) => {
        if (!this.pending.has(id)) return;
        cleanup();
        reject(error);
      });
    });
  }

  notify(method: string, params?: Record<string, unknown>): Promise<void> {
    if (this.closed) return Promise.reject(new SessionClosedError());
    return this.transport.send(params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params });
  }

  ping(options: SessionRequestOptions = {}): Promise<Record<string, unknown>> {
    return this.request('ping', undefined, options);
  }

  close(): Promise<void> {
    return this.transport.close();
  }

  /** Handles one message from the transport. Public for tests. */
  receive(message: JsonRpcMessage): void {
    if (!isObject(message)) return;
    const method = message.method;
    if (typeof method === 'string') {
      if ('id' in message && message.id !== undefined && message.id !== null) this.answerServerRequest(message.id as JsonRpcId, method);
      else this.notification(method, message.params);
      return;
    }
    if (!('id' in message)) return;
    const id = message.id as JsonRpcId;
    const waiting = this.pending.get(id);
    if (!waiting) {
      this.hooks.onerror?.(new Error(`Received a response for an unknown message ID: ${JSON.stringify(message)}`));
      return;
    }
    if ('error' in message && isObject(message.error)) {
      const { code, message: text, data } = message.error;
      waiting.reject(new RpcError(typeof code === 'number' ? code : -32603, typeof text === 'string' ? text : String(text), data));
      return;
    }
    waiting.resolve((message.result ?? {}) as Record<string, unknown>);
  }

  private notification(method: string, params: unknown): void {
    if (method === 'notifications/progress') {
      if (!isObject(params)) return;
      const { progressToken, ...progress } = params;
      const handler = this.progress.get(progressToken as JsonRpcId);
      if (handler) handler(progress as unknown as ProgressParams);
      else this.hooks.onerror?.(new Error(`Received a progress notification for an unknown token: ${JSON.stringify(progressToken)}`));
      return;
    }
    if (method === 'notifications/cancelled') return; // we never run server requests long enough to cancel
    this.hooks.onNotification?.(method, params);
  }

  private answerServerRequest(id: JsonRpcId, method: string): void {
    const answer: JsonRpcMessage =
      method === 'ping'
        ? { jsonrpc: '2.0', id, result: {} }
        : { jsonrpc: '2.0', id, error: { code: METHOD_NOT_FOUND, message: 'Method not found' } };
    this.transport.send(answer).catch((error: unknown) => this.hooks.onerror?.(error instanceof Error ? error : new Error(String(error))));
  }

  private handleClose(): void {
    if (this.closed) return;
    this.closed = true;
    this.hooks.onclose?.();
    const waiting = [...this.pending.values()];
    this.pending.clear();
    this.progress.clear();
    const error = new SessionClosedError();
    for (const entry of waiting) entry.reject(error);
  }
}
