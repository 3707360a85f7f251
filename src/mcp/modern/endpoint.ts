// The modern era (2026-07-28) on /mcp: one request per POST, no session. The
// era classifier hands over each request that claimed the per-request
// envelope; this checks the revision and the standard headers, then answers
// it: a notification with 202, subscriptions/listen with its stream, a method
// the revision does not have with 404 -32601, and everything else through
// ModernMethods on a PostExchange (one JSON body, or SSE once progress or a
// log message comes first). Closing the HTTP request cancels the call.
import type { HttpReply } from '../../http/reply.js';
import type { Logger } from '../../log.js';
import type { Tracing } from '../../ops/tracing.js';
import { JSONRPC } from '../../protocol/errors.js';
import { admitsLevel, isLogLevel } from '../../router/log-levels.js';
import type { SessionFeatures } from '../../router/session-features.js';
import type { EraRejection, ModernMessage } from '../era.js';
import { PostExchange } from '../post-exchange.js';
import { RpcError } from '../rpc-error.js';
import { KIND_BY_CALL_METHOD } from '../../protocol/capabilities.js';
import type { ForwardContext } from '../../router/calls.js';
import { extended } from '../../protocol/extended.js';
import { InputBridge, type ParkListener } from './input-bridge.js';
import { MODERN_CALLER_PREFIX, type ModernTarget } from './link.js';
import { callerKey } from './request-state.js';
import { ListenRegistry } from './listen.js';
import type { ModernMethods } from './methods.js';
import type { ViewLists, ViewSession } from '../../toolsets/view-lists.js';
import { checkRevision, checkStandardHeaders } from './validate.js';
import { CLIENT_CAPABILITIES_META_KEY, isPlainObject, LOG_LEVEL_META_KEY, metaOf } from './wire.js';
import { Cancel, type CancelSignal } from '../../protocol/cancel.js';

export interface ModernOptions {
  /** SSE keep-alive comments; shorter than the HTTP server's idle timeout. */
  keepAliveMs: number;
  version: string;
  /** Each request once answered, with its error (null when it succeeded): the metrics count both eras. */
  onAnswered?(method: string, error: unknown): void;
  /** Spans per request, as for the 2025 era (absent: tracing is off). */
  tracing?: Tracing;
}

function sendError(reply: HttpReply, status: number, id: string | number | null, error: { code: number; message: string; data?: unknown }): void {
  reply.send(status, { 'content-type': 'application/json' }, JSON.stringify({ jsonrpc: '2.0', id, error }));
}

export function sendRejection(reply: HttpReply, rejection: EraRejection, id: string | number | null): void {
  const { code, message, data } = rejection;
  sendError(reply, rejection.status, id, data === undefined ? { code, message } : { code, message, data });
}

/** The id of a body an error can echo, else null. */
export function echoableId(body: unknown): string | number | null {
  const id = isPlainObject(body) ? body.id : undefined;
  return typeof id === 'string' || (typeof id === 'number' && Number.isSafeInteger(id)) ? id : null;
}

/** A signal that aborts when the client closes the request. */
function aborted(reply: HttpReply): CancelSignal {
  const cancel = new Cancel();
  reply.onAbort(() => cancel.abort('the client closed the request'));
  return cancel;
}

export class ModernEndpoint {
  /** The exchanges in flight, by caller id: where the router's messages for them go. */
  private readonly exchanges = new Map<string, ModernTarget>();
  private readonly listens: ListenRegistry;
  private readonly bridge: InputBridge;
  private next = 0;

  constructor(
    private readonly methods: ModernMethods,
    private readonly features: SessionFeatures,
    views: Pick<ViewLists, 'list' | 'forget' | 'viewOf'>,
    private readonly options: ModernOptions,
    private readonly log: Logger,
  ) {
    this.listens = new ListenRegistry(features, views, options.keepAliveMs, { name: 'coffer', version: options.version }, log);
    this.bridge = new InputBridge({
      callerId: () => this.callerId(),
      route: (caller, listener) => (listener ? this.exchanges.set(caller, listener) : this.exchanges.delete(caller)),
      ended: (caller) => this.features.closeSessionConnections(caller),
      stamp: (result) => methods.stamp(result),
    });
  }

  /** Where the router's messages for a modern caller id go, while it is open. */
  target(id: string): ModernTarget | undefined {
    return this.exchanges.get(id) ?? this.listens.target(id);
  }

  /** `toolset` and `credential` (its id) are the caller's: what it sees, and what its listens end with. */
  async serve(message: ModernMessage, revision: string | undefined, headers: Record<string, string>, toolset: string | null, credential: string, reply: HttpReply): Promise<void> {
    const isRequest = message.id !== undefined;
    const rejection =
      checkRevision(revision) ??
      checkStandardHeaders(message.method, message.params, isRequest, { versionHeader: headers['mcp-protocol-version'], methodHeader: headers['mcp-method'], nameHeader: headers['mcp-name'] });
    if (rejection) return sendRejection(reply, rejection, message.id ?? null);
    const paramCheck = message.method === 'tools/call' && isRequest ? this.methods.checkParamHeaders(message.params ?? {}, headers, toolset) : undefined;
    const paramRejection = paramCheck instanceof Promise ? await paramCheck : paramCheck;
    if (paramRejection) return sendRejection(reply, paramRejection, message.id!);
    // No client notification means anything over HTTP in this era (cancelling is closing the stream).
    if (!isRequest) return reply.send(202, {}, '');
    const id = message.id!;
    const params = message.params ?? {};
    const capabilities = (metaOf(params)?.[CLIENT_CAPABILITIES_META_KEY] as Record<string, unknown> | undefined) ?? {};
    if (message.method === 'subscriptions/listen') return this.listens.serve(id, params, capabilities, { credential, toolset }, reply);
    if (!this.methods.serves(message.method)) {
      return sendError(reply, 404, id, { code: JSONRPC.METHOD_NOT_FOUND, message: `Method not found: ${message.method} is not a method of MCP ${revision} (coffer serves it to 2025-11-25 sessions only, if at all)` });
    }
    return this.exchange(id, message.method, params, capabilities, headers, { credential, toolset }, reply);
  }

  private async exchange(
    requestId: string | number,
    method: string,
    params: Record<string, unknown>,
    capabilities: Record<string, unknown>,
    headers: Record<string, string>,
    { credential, toolset }: { credential: string; toolset: string | null },
    reply: HttpReply,
  ): Promise<void> {
    const exchange = new PostExchange([requestId], reply, undefined, this.options.keepAliveMs, () => undefined);
    const deliver = (message: Parameters<PostExchange['deliver']>[0], status?: number) => {
      try {
        exchange.deliver(message, status);
      } catch (error) {
        this.log.debug('modern answer not delivered', { method, error: String(error) });
      }
    };
    const meta = metaOf(params);
    const trace = this.options.tracing?.request({ method, params, headers, id: requestId });
    const logLevel = meta?.[LOG_LEVEL_META_KEY];
    const progressToken = meta?.progressToken as string | number | undefined;
    const listener: ParkListener = {
      // Log messages go only to a request that asked for them, at or above its level.
      notify: (note, noteParams) => {
        if (note === 'notifications/message' && !(isLogLevel(logLevel) && admitsLevel(logLevel, noteParams.level))) return;
        deliver({ jsonrpc: '2.0', method: note, params: noteParams });
      },
      ...(progressToken === undefined ? {} : { progress: (progress: object) => deliver({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken, ...progress } }) }),
    };
    const caller = callerKey(headers.authorization);
    const level = isLogLevel(logLevel) ? logLevel : undefined;
    try {
      // Each a literal of its own, not a spread of a shared one (see extended.ts).
      const result = KIND_BY_CALL_METHOD.has(method)
        ? await this.bridge.serve({ requestId, capabilities, caller, credential, logLevel: level, trace, method, params, listener, life: reply, run: (ctx) => this.methods.handle(method, params, ctx, toolset) })
        : this.methods.answersItself(method)
          ? await this.methods.own(method, params, toolset)
          : await this.single(method, params, { requestId, capabilities, caller, logLevel: level, trace, signal: aborted(reply) }, listener, toolset);
      this.options.onAnswered?.(method, null);
      trace?.end(null);
      deliver({ jsonrpc: '2.0', id: requestId, result });
    } catch (error) {
      this.options.onAnswered?.(method, error);
      trace?.end(error);
      const rpc = error instanceof RpcError ? error : new RpcError(JSONRPC.INTERNAL_ERROR, 'internal error in coffer; see the daemon log');
      if (!(error instanceof RpcError)) this.log.error('modern request failed', { method, error: String(error) });
      // A missing client capability is always HTTP 400 (the SDK's ladder), in-band or not.
      deliver({ jsonrpc: '2.0', id: requestId, error: rpc.toBody() }, rpc.code === JSONRPC.MISSING_CLIENT_CAPABILITY ? 400 : undefined);
    }
  }

  /** A request answered in one go, as a caller id of its own. */
  private async single(method: string, params: Record<string, unknown>, ctx: Pick<ForwardContext, 'requestId' | 'capabilities' | 'caller' | 'signal' | 'logLevel' | 'trace'>, listener: ParkListener, toolset: string | null): Promise<Record<string, unknown>> {
    const caller = this.callerId();
    this.exchanges.set(caller, listener);
    try {
      return await this.methods.handle(method, params, extended(ctx, { sessionId: caller, ...(listener.progress ? { onProgress: listener.progress } : {}) }), toolset);
    } finally {
      this.exchanges.delete(caller);
      // A per_session upstream may have opened a connection for this caller: it ends with the request.
      this.features.closeSessionConnections(caller);
    }
  }

  private callerId(): string {
    return `${MODERN_CALLER_PREFIX}${++this.next}`;
  }

  /** A list_changed: to the listens that asked for it, of the views `to` picks (absent: every view). */
  broadcast(notification: { method: string; params?: Record<string, unknown> }, to?: (viewer: ViewSession) => boolean): void {
    this.listens.broadcast(notification, to);
  }

  /** The credential was revoked or bound to another view: its listens end, and its calls kept for its retries (each new request of it is checked anew). */
  closeCredential(credential: string): void {
    this.listens.closeCredential(credential);
    this.bridge.closeCredential(credential);
  }

  closeAll(): void {
    this.listens.closeAll();
    this.bridge.closeAll();
  }
}
