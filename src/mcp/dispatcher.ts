// Handles the JSON-RPC messages of a downstream session: initialize and ping
// here, lists and calls through the router, the session's stateful features
// (subscriptions, completion, log level, roots) through SessionFeatures, and
// the client's answers to requests relayed from upstreams. Results pass through
// unchanged but for their resource URIs, which the router exposes.
import {
  LATEST_PROTOCOL_VERSION,
  SUPPORTED_PROTOCOL_VERSIONS,
  type JSONRPCMessage,
  type JSONRPCRequest,
} from '@modelcontextprotocol/sdk/types.js';
import { KIND_BY_CALL_METHOD, KIND_BY_LIST_METHOD } from '../protocol/capabilities.js';
import { JSONRPC } from '../protocol/errors.js';
import { aggregateInstructions } from '../protocol/instructions.js';
import type { Calls, ForwardContext } from '../router/calls.js';
import type { ClientMessages } from '../router/client-messages.js';
import type { Router } from '../router/router.js';
import type { SessionFeatures } from '../router/session-features.js';
import type { SearchMode } from '../search/search-mode.js';
import type { ViewLists } from '../toolsets/view-lists.js';
import type { Logger } from '../log.js';
import { abandonClientRequests, acceptClientAnswer } from './client-link.js';
import { checkParamLengths } from './param-limits.js';
import { RpcError } from './rpc-error.js';
import type { McpSession } from './session.js';
import type { RequestTrace, Tracing } from '../ops/tracing.js';
import { incomingTrace } from '../ops/trace-context.js';
import type { Answer } from './json-text.js';
import { FirstPages } from './page-text.js';
import { listPage, OWN_INSTRUCTIONS, SERVER_CAPABILITIES } from './surface.js';
import { Cancel } from '../protocol/cancel.js';
import { clipText } from '../protocol/untrusted-text.js';

/** What the dispatcher hands requests to. */
export interface DispatcherParts {
  /** The merged lists. */
  router: Router;
  calls: Calls;
  /** The upstreams' requests to clients, whose progress the clients report back. */
  clientMessages: ClientMessages;
  features: SessionFeatures;
  /** What each session sees of the lists: the whole surface or its toolset. */
  views: ViewLists;
  /** Search mode: the meta-tools instead of every tool, for sessions whose toolset (or the gateway) asks for it. */
  search: SearchMode;
}

export interface DispatcherOptions {
  version: string;
  /** Items per page of every merged list; default DEFAULT_PAGE_SIZE. */
  pageSize?: number;
  /** Every request once answered: its error, or null (for the metrics). */
  onAnswered?(method: string, error: unknown): void;
  /** Present when traces are exported: each request gets its spans. */
  tracing?: Tracing;
}

/** The HTTP headers a message came with (for its trace context). */
type Headers = Record<string, string | string[] | undefined>;

type FeatureMethod = 'subscribe' | 'unsubscribe' | 'complete' | 'setLogLevel';
const FEATURE_METHODS: Record<string, FeatureMethod> = {
  'resources/subscribe': 'subscribe',
  'resources/unsubscribe': 'unsubscribe',
  'completion/complete': 'complete',
  'logging/setLevel': 'setLogLevel',
};

/** What ties a log record to its request: the session, the JSON-RPC id and the trace (coffer's, else the client's own). */
function requestIds(session: McpSession, request: JSONRPCRequest, trace: RequestTrace | undefined, headers: Headers | undefined): Record<string, string> {
  const traceId = trace?.traceId ?? incomingTrace((request.params ?? {}) as Record<string, unknown>, headers)?.traceId;
  return { session: session.id, request_id: String(request.id), ...(traceId ? { trace_id: traceId } : {}) };
}

/**
 * The reason a client gave for a cancel, as it travels on to the upstream: a
 * string, clipped. Anything else is no reason (an object whose toString is
 * not a function throws in String(), which every listener of the abort uses).
 */
function cancelReason(reason: unknown): string {
  return typeof reason === 'string' ? clipText(reason) : 'cancelled by client';
}

/** Client notifications an upstream connection of that client needs to see. */
const RELAYED_CLIENT_NOTIFICATIONS = new Set(['notifications/roots/list_changed']);

export class Dispatcher {
  private readonly router: Router;
  private readonly calls: Calls;
  private readonly clientMessages: ClientMessages;
  private readonly features: SessionFeatures;
  private readonly views: ViewLists;
  private readonly search: SearchMode;
  private readonly firstPages: FirstPages;

  constructor(
    parts: DispatcherParts,
    private readonly options: DispatcherOptions,
    private readonly log: Logger,
  ) {
    ({ router: this.router, calls: this.calls, clientMessages: this.clientMessages, features: this.features, views: this.views, search: this.search } = parts);
    this.firstPages = new FirstPages(options.pageSize);
  }

  /**
   * Every message reaching here was validated already (by the SDK transport,
   * or by plainMessages, which accepts only what the SDK would): tell the
   * kinds apart by shape, not by running zod again on the hot path.
   */
  onMessage(session: McpSession, message: JSONRPCMessage, headers?: Headers): void {
    session.lastActiveAt = Date.now();
    if (!('method' in message)) {
      if (!acceptClientAnswer(session, message)) this.log.debug('answer to no request of coffer', { session: session.tag });
    } else if ('id' in message) {
      void this.answer(session, message, headers);
    } else if (message.method === 'notifications/cancelled') {
      const params = message.params as { requestId?: string | number; reason?: unknown } | undefined;
      if (params?.requestId !== undefined) session.inflight.get(params.requestId)?.abort(cancelReason(params.reason));
    } else if (message.method === 'notifications/progress' && message.params) {
      this.clientMessages.clientProgress(session.id, message.params as Record<string, unknown>);
    } else if (RELAYED_CLIENT_NOTIFICATIONS.has(message.method)) {
      this.features.clientNotification(session.id, message.method, message.params as Record<string, unknown> | undefined);
    }
    // notifications/initialized and the like need no action.
  }

  /** The session ended (closed, evicted or idle): its relayed requests fail and its upstream state goes. */
  sessionClosed(session: McpSession): void {
    abandonClientRequests(session);
    this.views.forget(session);
    if (session.id !== '') this.features.sessionClosed(session.id, AbortSignal.timeout(30_000));
  }

  private async answer(session: McpSession, request: JSONRPCRequest, headers: Headers | undefined): Promise<void> {
    const params = (request.params ?? {}) as Record<string, unknown>;
    const trace = this.options.tracing?.request({ method: request.method, params, headers, session: session.id, id: request.id });
    let reply: JSONRPCMessage;
    try {
      const result = await this.handle(session, request, trace);
      reply = { jsonrpc: '2.0', id: request.id, result };
      this.options.onAnswered?.(request.method, null);
      trace?.end(null);
    } catch (error) {
      this.options.onAnswered?.(request.method, error);
      trace?.end(error);
      const rpc = error instanceof RpcError ? error : new RpcError(JSONRPC.INTERNAL_ERROR, 'internal error in coffer; see the daemon log');
      if (!(error instanceof RpcError)) this.log.error('request failed', { method: request.method, error: String(error), ...requestIds(session, request, trace, headers) });
      reply = { jsonrpc: '2.0', id: request.id, error: rpc.toBody() };
    }
    try {
      await session.transport.send(reply);
    } catch (error) {
      // The client went away before its answer: nothing left to tell it.
      this.log.debug('answer not delivered', { method: request.method, error: String(error), ...requestIds(session, request, trace, headers) });
    } finally {
      session.pending.delete(request.id);
    }
  }

  private async handle(session: McpSession, request: JSONRPCRequest, trace: RequestTrace | undefined): Promise<Answer> {
    const params = (request.params ?? {}) as Record<string, unknown>;
    if (typeof params !== 'object' || Array.isArray(params)) throw RpcError.invalidParams('params must be an object');
    checkParamLengths(request.method, params);
    if (request.method === 'initialize') return this.initialize(session, params);
    if (request.method === 'ping') return {};
    const list = KIND_BY_LIST_METHOD.get(request.method);
    const searcher = { key: session, listChanged: () => this.toolsChanged(session, request) };
    if (list) {
      const items = await this.views.list(list, session);
      // Its mode and pins are those of the view it was narrowed with: the set may have changed while it was gathered.
      const view = this.views.viewOfList(items);
      if (list === 'tools' && this.search.modeOf(view) === 'search') return listPage(list, this.search.list(view, items, searcher), params, this.options.pageSize);
      return this.firstPages.page(list, items, params);
    }
    const call = KIND_BY_CALL_METHOD.get(request.method);
    if (call === 'tools' && this.search.modeOf(this.views.viewOf(session.toolset)) === 'search' && this.search.isMetaTool(params.name, true)) {
      return this.withContext(session, request, params, trace, (ctx) =>
        // What the caller may find, not a list it is given: what it last listed stays what list_changed is measured from.
        this.search.call(params, () => this.views.listFor('tools', session.toolset), (forwarded) => this.calls.forward('tools', request.method, forwarded, ctx), searcher),
      );
    }
    if (call) return this.withContext(session, request, params, trace, (ctx) => this.calls.forward(call, request.method, params, ctx));
    const feature = FEATURE_METHODS[request.method];
    if (feature) return this.withContext(session, request, params, trace, (ctx) => this.features[feature](params, ctx));
    throw new RpcError(JSONRPC.METHOD_NOT_FOUND, `method not found: ${request.method}`);
  }

  /** This session's own tools/list changed (search mode): told on the stream of the request that changed it. */
  private toolsChanged(session: McpSession, request: JSONRPCRequest): void {
    session.transport
      .send({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' }, { relatedRequestId: request.id })
      .catch((error: unknown) => this.log.debug('list_changed not delivered', { session: session.tag, error: String(error) }));
  }

  private initialize(session: McpSession, params: Record<string, unknown>): Record<string, unknown> {
    const requested = typeof params.protocolVersion === 'string' ? params.protocolVersion : '';
    const protocolVersion = SUPPORTED_PROTOCOL_VERSIONS.includes(requested) ? requested : LATEST_PROTOCOL_VERSION;
    session.protocolVersion = protocolVersion;
    session.clientInfo = (params.clientInfo as McpSession['clientInfo']) ?? null;
    session.clientCapabilities = (params.capabilities as Record<string, unknown>) ?? {};
    return {
      protocolVersion,
      capabilities: SERVER_CAPABILITIES,
      serverInfo: { name: 'coffer', version: this.options.version },
      // The servers enabled and connected now, of its toolset's only; MCP has no notification for changed instructions, so a session keeps what it got here.
      instructions: aggregateInstructions(OWN_INSTRUCTIONS, this.router.upstreamInstructions(this.views.viewOf(session.toolset))),
    };
  }

  /** Runs a routed request with its context: cancellable by the client, progress relayed if asked for. */
  private async withContext(
    session: McpSession,
    request: JSONRPCRequest,
    params: Record<string, unknown>,
    trace: RequestTrace | undefined,
    run: (ctx: ForwardContext) => Promise<Record<string, unknown>>,
  ): Promise<Record<string, unknown>> {
    const cancel = new Cancel();
    session.inflight.set(request.id, cancel);
    const progressToken = (params._meta as { progressToken?: string | number } | undefined)?.progressToken;
    const onProgress =
      progressToken === undefined
        ? undefined
        : (progress: { progress: number; total?: number; message?: string }) =>
            void session.transport
              .send({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken, ...progress } }, { relatedRequestId: request.id })
              .catch(() => undefined);
    try {
      const toolset = this.views.viewOf(session.toolset);
      const logLevel = this.features.logLevelOf(session.id);
      return await run({
        sessionId: session.id,
        requestId: request.id,
        capabilities: session.clientCapabilities,
        toolset,
        signal: cancel,
        ...(logLevel ? { logLevel } : {}),
        ...(onProgress ? { onProgress } : {}),
        ...(trace ? { trace } : {}),
      });
    } finally {
      session.inflight.delete(request.id);
    }
  }
}
