// A minimal JSON-RPC 2.0 session for an MCP client over any message transport:
// correlates requests and responses by id, routes progress notifications by
// progressToken, sends notifications/cancelled when a request is aborted,
// answers the server's pings, hands its other requests to a hook (or refuses
// them with -32601), and tells which of our pending requests a server message
// may belong to. It validates nothing: results are handed back exactly as parsed.
import { JSONRPC, messageOf } from '../../src/protocol/errors.js';
import { extended } from '../../src/protocol/extended.js';
import { isObject } from '../../src/protocol/json-object.js';
import type { CancelSignal } from '../../src/protocol/cancel.js';

export type JsonRpcId = string | number;
export type JsonRpcMessage = Record<string, unknown>;

/** What the session needs from a transport (stdio, Streamable HTTP, legacy SSE). */
export interface MessageTransport {
  /** `relatedRequestId`: the message came on the stream of our request with that id (Streamable HTTP). */
  onmessage?: (message: JsonRpcMessage, relatedRequestId?: JsonRpcId) => void;
  /** The transport ended; called at most once. */
  onclose?: () => void;
  /** A problem that does not by itself end the transport (a bad line, a failed stream). */
  onerror?: (error: Error) => void;
  start(): Promise<void>;
  send(message: JsonRpcMessage): Promise<void>;
  close(): Promise<void>;
  /** Called once initialize has negotiated the version (Streamable HTTP sends it as a header). */
  setProtocolVersion?(version: string): void;
  /** 2026-07-28 era (Streamable HTTP): headers derived from each message; its error answers then carry JSON-RPC errors. */
  setMessageHeaders?(headersOf: ((message: JsonRpcMessage) => Record<string, string | number>) | undefined): void;
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

/**
 * A message that makes no sense here but says nothing about the transport: a
 * late answer to a request we gave up on, progress for a finished one. Reported
 * through onerror for the log; no reason to doubt the connection.
 */
export class ProtocolNoise extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProtocolNoise';
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
  signal?: CancelSignal;
  onprogress?: (progress: ProgressParams) => void;
  /** An opaque tag (the forwarded call's id) reported with server messages that may belong to this request. */
  context?: string;
}

/** What a server request is answered with. */
export type ServerRequestAnswer = { result: Record<string, unknown> } | { error: { code: number; message: string; data?: unknown } };

export interface SessionHooks {
  /**
   * Every notification other than progress and cancelled. `contexts`: the tags of
   * the pending requests it may belong to (exactly one when the transport knows).
   */
  onNotification?(method: string, params: unknown, contexts: string[]): void;
  /** A server request other than ping; `signal` aborts when the server cancels it. Without this hook: -32601. */
  onRequest?(method: string, params: Record<string, unknown>, contexts: string[], signal: AbortSignal): Promise<ServerRequestAnswer>;
  /** An answer came to a request given up on (cancelled or timed out): ignored, as MCP asks of whoever cancels. */
  onLate?(method: string): void;
  onclose?(): void;
  onerror?(error: Error): void;
}

interface Pending {
  resolve(result: Record<string, unknown>): void;
  reject(error: unknown): void;
}

/** A scalar as text; anything else by its type only (String() or JSON.stringify() of a deep value overflows the stack). */
function scalarText(value: unknown): string {
  if (typeof value === 'string') return value;
  return typeof value === 'object' && value !== null ? `(${Array.isArray(value) ? 'an array' : 'an object'})` : JSON.stringify(value) ?? String(value);
}

/** Requests given up on whose late answers are recognised: a server that never answers them costs no more than this. */
const ABANDONED_KEPT = 256;

export class JsonRpcSession {
  private nextId = 0;
  private readonly pending = new Map<JsonRpcId, Pending>();
  private readonly progress = new Map<JsonRpcId, (progress: ProgressParams) => void>();
  private readonly contexts = new Map<JsonRpcId, string>();
  /** Server requests being answered, by the server's id: its notifications/cancelled aborts them. */
  private readonly serverRequests = new Map<JsonRpcId, AbortController>();
  /** The latest requests given up on, by id, with their methods: an answer to one is late, not noise. */
  private readonly abandoned = new Map<JsonRpcId, string>();
  private closed = false;
  /** When the last message of any kind came from the server (0: none yet): a session that answers nothing at all is dead. */
  lastReceivedAt = 0;

  constructor(
    private readonly transport: MessageTransport,
    private readonly hooks: SessionHooks = {},
  ) {
    transport.onmessage = (message, related) => this.receive(message, related);
    transport.onclose = () => this.handleClose();
    transport.onerror = (error) => this.hooks.onerror?.(error);
  }

  start(): Promise<void> {
    return this.transport.start();
  }

  /** Sends a request; resolves with its result object as received, rejects with RpcError, SessionClosedError, the abort reason or a send error. */
  request(method: string, params: Record<string, unknown> | undefined, options: SessionRequestOptions = {}): Promise<Record<string, unknown>> {
    if (this.closed) return Promise.reject(new SessionClosedError());
    const { signal, onprogress, context } = options;
    if (signal?.aborted) return Promise.reject(signal.reason);
    const id = this.nextId++;
    let sent = params;
    if (onprogress) {
      const meta = isObject(params?._meta) ? params._meta : {};
      sent = extended(params ?? {}, { _meta: extended(meta, { progressToken: id }) });
      this.progress.set(id, onprogress);
    }
    if (context !== undefined) this.contexts.set(id, context);
    const message: JsonRpcMessage = sent === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params: sent };
    return new Promise<Record<string, unknown>>((resolve, reject) => {
      const cleanup = (): void => {
        this.pending.delete(id);
        this.progress.delete(id);
        this.contexts.delete(id);
        signal?.removeEventListener('abort', onAbort);
      };
      const onAbort = (): void => {
        if (!this.pending.has(id)) return;
        cleanup();
        this.abandon(id, method);
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
  receive(message: JsonRpcMessage, related?: JsonRpcId): void {
    if (!isObject(message)) return;
    this.lastReceivedAt = Date.now();
    const method = message.method;
    if (typeof method === 'string') {
      if ('id' in message && message.id !== undefined && message.id !== null) this.answerServerRequest(message.id as JsonRpcId, method, message.params, related);
      else this.notification(method, message.params, related);
      return;
    }
    if (!('id' in message)) return;
    const id = message.id as JsonRpcId;
    const waiting = this.pending.get(id);
    if (!waiting) {
      const late = this.abandoned.get(id);
      if (late === undefined) this.hooks.onerror?.(new ProtocolNoise(`Received a response for an unknown message ID: ${scalarText(id)}`));
      else {
        this.abandoned.delete(id);
        this.hooks.onLate?.(late);
      }
      return;
    }
    if ('error' in message && isObject(message.error)) {
      const { code, message: text, data } = message.error;
      waiting.reject(new RpcError(typeof code === 'number' ? code : -32603, scalarText(text), data));
      return;
    }
    waiting.resolve((message.result ?? {}) as Record<string, unknown>);
  }

  /** The tags a server message may belong to: its request's when the transport knows it, else every pending one. */
  private contextsFor(related: JsonRpcId | undefined): string[] {
    if (related === undefined) return [...this.contexts.values()];
    const context = this.contexts.get(related);
    return context === undefined ? [] : [context];
  }

  private notification(method: string, params: unknown, related: JsonRpcId | undefined): void {
    if (method === 'notifications/progress') {
      if (!isObject(params)) return;
      const { progressToken, ...progress } = params;
      const handler = this.progress.get(progressToken as JsonRpcId);
      if (handler) handler(progress as unknown as ProgressParams);
      else this.hooks.onerror?.(new ProtocolNoise(`Received a progress notification for an unknown token: ${scalarText(progressToken)}`));
      return;
    }
    if (method === 'notifications/cancelled') {
      const requestId = isObject(params) ? (params.requestId as JsonRpcId) : undefined;
      if (requestId !== undefined) this.serverRequests.get(requestId)?.abort(isObject(params) && typeof params.reason === 'string' ? params.reason : 'cancelled by the server');
      return;
    }
    this.hooks.onNotification?.(method, params, this.contextsFor(related));
  }

  private abandon(id: JsonRpcId, method: string): void {
    this.abandoned.set(id, method);
    if (this.abandoned.size > ABANDONED_KEPT) this.abandoned.delete(this.abandoned.keys().next().value!);
  }

  private answerServerRequest(id: JsonRpcId, method: string, params: unknown, related: JsonRpcId | undefined): void {
    if (method === 'ping' || !this.hooks.onRequest) {
      this.reply(method === 'ping' ? { jsonrpc: '2.0', id, result: {} } : { jsonrpc: '2.0', id, error: { code: JSONRPC.METHOD_NOT_FOUND, message: 'Method not found' } });
      return;
    }
    const abort = new AbortController();
    this.serverRequests.set(id, abort);
    this.hooks
      .onRequest(method, isObject(params) ? params : {}, this.contextsFor(related), abort.signal)
      .catch((error: unknown) => ({ error: { code: JSONRPC.INTERNAL_ERROR, message: messageOf(error) } }))
      .then((answer) => {
        this.serverRequests.delete(id);
        // A cancelled request gets no answer (MCP cancellation).
        if (!abort.signal.aborted && !this.closed) this.reply({ jsonrpc: '2.0', id, ...answer });
      });
  }

  private reply(message: JsonRpcMessage): void {
    this.transport.send(message).catch((error: unknown) => this.hooks.onerror?.(error instanceof Error ? error : new Error(String(error))));
  }

  private handleClose(): void {
    if (this.closed) return;
    this.closed = true;
    this.hooks.onclose?.();
    const waiting = [...this.pending.values()];
    this.pending.clear();
    this.progress.clear();
    this.contexts.clear();
    for (const abort of this.serverRequests.values()) abort.abort('connection closed');
    this.serverRequests.clear();
    const error = new SessionClosedError();
    for (const entry of waiting) entry.reject(error);
  }
}
