// Routed requests: resolve the exposed name or URI to its upstream, check its
// switch (R10), send it with the original name, and record the invocation.
// Also keeps the calls in flight, which the upstreams' requests for clients
// are matched to (progress travels with its call).
import { CAPABILITY_TYPE_OF, IDENTITY_FIELD, type CallKind, type CapabilityType, type ListKind } from '../protocol/capabilities.js';
import { JSONRPC } from '../protocol/errors.js';
import { TASKS_EXTENSION } from '../protocol/extensions.js';
import type { ClientRef, ForwardOutcome, ForwardRequest, Progress } from '../protocol/actor.js';
import type { InvocationRecord, InvocationStatus } from '../protocol/events.js';
import { RpcError } from '../mcp/rpc-error.js';
import type { Upstream, UpstreamDirectory } from '../upstreams/upstream.js';
import type { CallRoute, ClientAsk } from './client-messages.js';
import { exposeResultUris } from './expose-results.js';
import type { CapabilityGate } from './gate.js';
import { driveInputRequired } from './input-driver.js';
import type { LogLevel } from './log-levels.js';
import type { Namespaces, ServerDirectory } from './namespaces.js';
import { describe, disabledByName, disabledResource, notInToolset } from './refusals.js';
import { resolveExposed, type ResolverDirectory, type Routed } from './resolver.js';
import { normaliseUri } from './uri-rule.js';
import type { RequestTrace, UpstreamSpan } from '../ops/tracing.js';
import { withTraceMeta } from '../ops/trace-context.js';
import type { CancelSignal } from '../protocol/cancel.js';

/** A toolset as calls see it: which capabilities are in it (after the switches, never instead of them). */
export interface ToolsetScope {
  name: string;
  includes(server: string, type: CapabilityType, key: string): boolean;
  /** Whether the set has a rule for this server at all. */
  covers(server: string): boolean;
}

export interface ForwardContext {
  sessionId: string;
  /** The downstream request id: the upstream's requests and notifications during the call go on its stream. */
  requestId: string | number;
  /** What the session declared (per_session connections declare the same). */
  capabilities: Record<string, unknown>;
  /** How the upstream's requests during the call reach its client; without it, the session's link. */
  ask?: ClientAsk;
  /** A modern caller's credential digest (its calls have sessions of their own but are one client's). */
  caller?: string;
  /** How long the client may take to answer the upstream's requests (a modern caller answers on its retry). */
  answerTimeoutMs?: number;
  /**
   * A modern caller's retry of a modern upstream's input_required: its answers
   * and the upstream's own requestState go to that upstream, for the same
   * tool, prompt or resource (`key`, its original name or URI), as long as the
   * call still leads there. Without `server`, the inputResponses a first request
   * brought unasked: a modern upstream gets them as they came (it uses what
   * it recognises); a 2025 upstream's questions are answered from them instead.
   */
  retry?: { server?: string; key?: string; inputResponses: Record<string, unknown>; requestState: string | null };
  /**
   * The log messages the caller wants during this request (a 2025 session:
   * the level it set; a modern caller: its envelope's). A modern upstream
   * sends none without it; a 2025 upstream is told with logging/setLevel.
   */
  logLevel?: LogLevel;
  /**
   * A modern caller gets an upstream's input_required result itself (this
   * makes it the caller's); without it coffer asks the caller each request
   * and retries the upstream until it completes.
   */
  onInputRequired?: (server: string, key: string, result: Record<string, unknown>) => Record<string, unknown>;
  /**
   * A modern caller of the tasks extension: an upstream's CreateTaskResult
   * for this tool becomes the caller's (coffer's own taskId). Without it the
   * upstream is never told the caller speaks the extension, so it answers
   * synchronously (or -32021 for a tool that requires a task).
   */
  onTask?: (server: string, tool: string, result: Record<string, unknown>) => Record<string, unknown>;
  /** The toolset the session sees; absent or null: the whole surface. */
  toolset?: ToolsetScope | null;
  /** Present when the client asked for progress (its progressToken). */
  onProgress?: (progress: Progress) => void;
  signal: CancelSignal;
  /** The request's spans, when tracing is on. */
  trace?: RequestTrace;
}

function statusOf(error: unknown): { status: InvocationStatus; error_code: number | null } {
  const code = error instanceof RpcError ? error.code : JSONRPC.INTERNAL_ERROR;
  if (code === JSONRPC.TOOL_DISABLED || code === JSONRPC.NOT_IN_TOOLSET) return { status: 'denied', error_code: code };
  return { status: code === JSONRPC.UPSTREAM_TIMEOUT ? 'timeout' : 'error', error_code: code };
}

export class Calls {
  /** Forwarded requests in flight, by forward id. */
  private inFlight = new Map<string, ForwardContext>();
  private nextForwardId = 0;

  constructor(
    private readonly upstreams: UpstreamDirectory,
    private readonly gate: CapabilityGate,
    /** Registered, enabled or not: a disabled server is refused as such, not as unknown. */
    private readonly servers: ServerDirectory,
    private readonly namespaces: Namespaces,
    /** Where exposed names are looked up: the merged lists. */
    private readonly directory: ResolverDirectory,
    /** A routed call finished (or was refused by its switch). */
    private readonly onInvocation: (record: InvocationRecord) => void,
    /** How a call's client is asked something (its own way, or its session's link). */
    private readonly askOf: (route: CallRoute) => ClientAsk,
  ) {}

  /** Routes tools/call, resources/read or prompts/get to its upstream with the original name / URI; URIs in the result come back exposed. */
  async forward(kind: CallKind, method: string, params: Record<string, unknown>, ctx: ForwardContext): Promise<Record<string, unknown>> {
    const field = IDENTITY_FIELD[kind];
    const route = ctx.trace?.step('coffer.route');
    const { upstream, target } = await this.resolve(kind, params[field], ctx.toolset).catch((error: unknown) => {
      route?.end(error);
      throw error;
    });
    const started = Date.now();
    const record = (outcome: { status: InvocationStatus; error_code: number | null }) =>
      this.onInvocation({ at: new Date(started).toISOString(), server: upstream.name, kind: CAPABILITY_TYPE_OF[kind], key: target.original, duration_ms: Date.now() - started, session: ctx.caller ?? ctx.sessionId, ...outcome });
    try {
      // The route step is name resolution and the switch: it ends before the upstream is asked.
      try {
        this.assertEnabled(kind, upstream.name, target.original, ctx.toolset);
        if (target.unlisted) {
          await this.assertListed(kind, upstream, target.original);
          // Its list may take up to the deadline: a switch turned off meanwhile must still stop the call.
          this.assertEnabled(kind, upstream.name, target.original, ctx.toolset);
        }
      } catch (error) {
        route?.end(error);
        throw error;
      }
      route?.end();
      const sent = { ...params, [field]: target.original, ...this.retryParams(upstream, target.original, ctx) };
      const answer = await this.send(upstream, method, sent, ctx);
      const result = answer.resultType === 'input_required' ? await this.inputRequired(upstream, target.original, method, sent, answer, ctx) : answer;
      if (result.resultType === 'task') return this.taskCreated(upstream.name, target.original, result, ctx, record);
      record({ status: 'ok', error_code: null });
      return exposeResultUris(kind, result, this.namespaces.of(upstream.name));
    } catch (error) {
      record(statusOf(error));
      throw error;
    }
  }

  /** A CreateTaskResult made the caller's; one from an upstream never asked for tasks (a caller without the extension) is refused. */
  private taskCreated(server: string, tool: string, result: Record<string, unknown>, ctx: ForwardContext, record: (outcome: { status: InvocationStatus; error_code: number | null }) => void): Record<string, unknown> {
    if (!ctx.onTask) {
      throw RpcError.coffer(JSONRPC.UPSTREAM_RESPONSE_INVALID, 'UPSTREAM_RESPONSE_INVALID', `${server}: the upstream answered a task to a caller that did not declare ${TASKS_EXTENSION}; tell its maintainers (a task is created only for a caller that declares the extension)`);
    }
    record({ status: 'ok', error_code: null });
    return ctx.onTask(server, tool, result);
  }

  /**
   * A tasks-extension request (tasks/get, tasks/update, tasks/cancel) for a
   * task coffer handed out: to the server that created it, as long as that
   * server and the tool are still there and enabled (R10); a completed
   * task's inlined result has its URIs exposed like the call's would.
   */
  async forwardTask(server: string, tool: string, method: string, params: Record<string, unknown>, ctx: ForwardContext): Promise<Record<string, unknown>> {
    const upstream = this.upstreams.get(server);
    if (!upstream && !this.servers.config(server)) {
      throw RpcError.coffer(JSONRPC.INVALID_PARAMS, 'TASK_NOT_FOUND', `unknown task: server '${server}', which created it, was removed from coffer`, { server });
    }
    if (!upstream) {
      throw RpcError.coffer(JSONRPC.TOOL_DISABLED, 'TOOL_DISABLED', `server '${server}' is disabled in coffer, and its tasks with it; enable it with 'coffer mcp enable ${server}'`, { server });
    }
    this.assertEnabled('tools', server, tool, ctx.toolset);
    const result = await this.send(upstream, method, params, ctx);
    const inlined = result.result;
    if (typeof inlined !== 'object' || inlined === null) return result;
    return { ...result, result: exposeResultUris('tools', inlined as Record<string, unknown>, this.namespaces.of(server)) };
  }

  /** The retry parameters for the upstream of a modern caller's retry, which must be the one that asked, for the same key (a search mode call names its tool in its arguments). */
  private retryParams(upstream: Upstream, key: string, ctx: ForwardContext): Record<string, unknown> {
    if (!ctx.retry) return {};
    if (ctx.retry.server === undefined) return upstream.lastStatus.era === 'modern' ? { inputResponses: ctx.retry.inputResponses } : {};
    if (ctx.retry.server !== upstream.name || ctx.retry.key !== key) {
      throw RpcError.coffer(JSONRPC.INVALID_PARAMS, 'REQUEST_STATE_INVALID', `the requestState was given for '${ctx.retry.key}' of server '${ctx.retry.server}', and this call leads to '${key}' of '${upstream.name}': call again without requestState and inputResponses`);
    }
    return { inputResponses: ctx.retry.inputResponses, ...(ctx.retry.requestState === null ? {} : { requestState: ctx.retry.requestState }) };
  }

  /** An upstream's input_required: the modern caller's to answer, or asked of the legacy caller round by round. */
  private inputRequired(upstream: Upstream, key: string, method: string, params: Record<string, unknown>, result: Record<string, unknown>, ctx: ForwardContext): Promise<Record<string, unknown>> | Record<string, unknown> {
    if (ctx.onInputRequired) return ctx.onInputRequired(upstream.name, key, result);
    const { inputResponses: _responses, requestState: _state, ...original } = params;
    return driveInputRequired(result, this.askOf(ctx), (inputResponses, requestState) => this.send(upstream, method, { ...original, inputResponses, ...(requestState === undefined ? {} : { requestState }) }, ctx), ctx.signal);
  }

  /** Forwards one request to one upstream as it is; the upstream's error becomes an RpcError. */
  async send(upstream: Upstream, method: string, params: Record<string, unknown>, ctx: ForwardContext): Promise<Record<string, unknown>> {
    // Cancelled while coffer resolved it (a cancel right behind its request): an abort listener added now would never run.
    assertNotCancelled(method, ctx.signal);
    const id = `f${++this.nextForwardId}`;
    const onAbort = () => upstream.cancel(id, String(ctx.signal.reason ?? 'cancelled by client'));
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    this.inFlight.set(id, ctx);
    const span = ctx.trace?.upstream(upstream.name, method);
    let outcome: ForwardOutcome | undefined;
    try {
      outcome = await upstream.forward(forwardRequest(upstream, id, method, params, ctx, span), span ? { onProgress: ctx.onProgress, onUpstreamTimes: span.upstreamTimes } : { onProgress: ctx.onProgress });
    } finally {
      ctx.signal.removeEventListener('abort', onAbort);
      this.inFlight.delete(id);
      span?.end(outcome === undefined ? 'no answer' : outcome.ok ? null : RpcError.from(outcome.error));
    }
    if (!outcome.ok) throw RpcError.from(outcome.error);
    return outcome.result;
  }

  /** The call a forward id belongs to, while it is in flight. */
  routeOf(forwardId: string): CallRoute | undefined {
    return this.inFlight.get(forwardId);
  }

  /**
   * The enabled upstream an exposed name or URI belongs to, and its original
   * form (a resource URI normalised: what is gated is what is read). A refusal
   * names only servers the caller's `toolset` has a rule for.
   */
  async resolve(kind: ListKind, value: unknown, toolset?: ToolsetScope | null): Promise<{ upstream: Upstream; target: Routed }> {
    const what = describe(kind);
    const byName = IDENTITY_FIELD[kind] === 'name';
    if (typeof value !== 'string') throw RpcError.invalidParams(`the ${what} ${byName ? 'name' : 'URI'} must be a string`);
    const resolution = await resolveExposed(this.directory, kind, value);
    if (resolution && 'ambiguous' in resolution) {
      const named = resolution.ambiguous.filter((server) => !toolset || toolset.covers(server));
      const why = named.length > 0 ? `none of the unprefixed servers (${named.join(', ')}) lists it, and coffer never guesses between them` : `no server of toolset '${toolset?.name}' lists it`;
      throw RpcError.coffer(JSONRPC.INVALID_PARAMS, 'RESOURCE_NOT_FOUND', `unknown ${what} '${value}': ${why}`);
    }
    const upstream = resolution ? this.upstreams.get(resolution.server) : undefined;
    if (resolution && !upstream && this.servers.config(resolution.server)) {
      // Outside the set, a switched-off server is refused as what it is there: not in the toolset.
      if (toolset && !toolset.covers(resolution.server)) throw notInToolset(kind, toolset.name, resolution.server, resolution.original);
      throw RpcError.coffer(JSONRPC.TOOL_DISABLED, 'TOOL_DISABLED', `server '${resolution.server}' is disabled in coffer; enable it with 'coffer mcp enable ${resolution.server}'`, { server: resolution.server });
    }
    if (!resolution || !upstream) {
      const expected = byName ? '<namespace>__<name>' : 'coffer://<namespace>/<uri>';
      throw RpcError.coffer(JSONRPC.INVALID_PARAMS, 'RESOURCE_NOT_FOUND', `unknown ${what} '${value}': expected ${expected} of an enabled server`);
    }
    return { upstream, target: kind === 'resources' ? { server: resolution.server, original: normaliseUri(resolution.original) } : resolution };
  }

  /**
   * A tool or prompt that no merged list routes here goes to its upstream only
   * if the upstream's own list names it, or if no live list can say (R8: a
   * failed list is not an empty one). Otherwise an upstream that also answers
   * to unlisted names (aliases, other spellings) would run a tool the user
   * switched off under a name no switch governs. A per_session server is not
   * asked: each session's connection may list what the shared one does not.
   */
  private async assertListed(kind: CallKind, upstream: Upstream, key: string): Promise<void> {
    if (IDENTITY_FIELD[kind] !== 'name' || upstream.config.session_mode === 'per_session') return;
    if ((await this.directory.lists?.(upstream.name, kind, key)) !== false) return;
    const what = describe(kind);
    throw RpcError.coffer(JSONRPC.INVALID_PARAMS, 'RESOURCE_NOT_FOUND', `unknown ${what} '${key}': server '${upstream.name}' does not list it; list the ${what}s again for the names it has now`, { server: upstream.name });
  }

  /** R10: a disabled capability is refused as such (calls, subscriptions, completion); so is one outside the session's toolset. */
  assertEnabled(kind: CallKind | 'resourceTemplates', server: string, key: string, toolset?: ToolsetScope | null): void {
    if (this.admits(kind, server, key, toolset)) return;
    // Refused: asked again only to say why.
    if (toolset && !this.inToolset(kind, server, key, toolset)) throw notInToolset(kind, toolset.name, server, key);
    if (IDENTITY_FIELD[kind] === 'name') throw disabledByName(kind, server, key);
    throw disabledResource(server, key, this.gate.resourceDecision(server, key));
  }

  /** Whether the capability is allowed now: its switch, and the toolset if any (no error is made for a refusal). */
  admits(kind: CallKind | 'resourceTemplates', server: string, key: string, toolset?: ToolsetScope | null): boolean {
    if (toolset && !this.inToolset(kind, server, key, toolset)) return false;
    // Named kinds have one switch per name; resources (and templates) are governed by URI rules.
    return IDENTITY_FIELD[kind] === 'name' ? this.gate.isEnabled(server, kind, key) : this.gate.resourceDecision(server, key).enabled;
  }

  /** A toolset holds a URI as the switches do: by the key that governs it (a template holds what it generates), else by the URI itself. */
  private inToolset(kind: CallKind | 'resourceTemplates', server: string, key: string, toolset: ToolsetScope): boolean {
    if (IDENTITY_FIELD[kind] === 'name') return toolset.includes(server, CAPABILITY_TYPE_OF[kind], key);
    const inSet = (uri: string) => toolset.includes(server, 'resource', uri);
    return this.gate.resourceRule(server, key, inSet)?.enabled ?? inSet(key);
  }
}

/** A request cancelled (by its client, or its session's end) is answered so, whatever was done for it so far. */
export function assertNotCancelled(method: string, signal: CancelSignal): void {
  if (signal.aborted) throw new RpcError(JSONRPC.REQUEST_CANCELLED, `${method} was cancelled`);
}

/** The caller's capabilities as an upstream may see them: the tasks extension only where coffer can make the upstream's tasks the caller's. */
function declaredFor(ctx: ForwardContext): Record<string, unknown> {
  if (ctx.onTask || ctx.capabilities.extensions === undefined) return ctx.capabilities;
  return omit(ctx.capabilities, 'extensions');
}

/**
 * What the actor is sent for one call. Built field by field: a spread of a
 * conditional literal costs a temporary object and a slower literal, on every call.
 */
function forwardRequest(upstream: Upstream, id: string, method: string, params: Record<string, unknown>, ctx: ForwardContext, span: UpstreamSpan | undefined): ForwardRequest {
  const modern = upstream.lastStatus.era === 'modern';
  // The capabilities only matter to a per_session connection (it declares them) and to a modern upstream (each request does): no clone per call otherwise.
  const client: ClientRef = { session: ctx.sessionId, capabilities: upstream.config.session_mode === 'per_session' || modern ? declaredFor(ctx) : {} };
  if (ctx.caller) client.caller = ctx.caller;
  if (ctx.logLevel && modern) client.logLevel = ctx.logLevel;
  const stripped = stripProgressToken(params);
  const request: ForwardRequest = { id, method, params: span ? withTraceMeta(stripped, span.traceparent, span.tracestate) : stripped, progress: ctx.onProgress !== undefined, client };
  if (ctx.answerTimeoutMs !== undefined) request.answerTimeoutMs = ctx.answerTimeoutMs;
  if (span) request.timed = true;
  return request;
}

/** The actor asks the upstream for progress with its own token; the client's stays with the router. */
function stripProgressToken(params: Record<string, unknown>): Record<string, unknown> {
  const meta = params._meta as Record<string, unknown> | undefined;
  if (!meta || !('progressToken' in meta)) return params;
  const { progressToken: _dropped, ...rest } = meta;
  return Object.keys(rest).length === 0 ? omit(params, '_meta') : { ...params, _meta: rest };
}

function omit(object: Record<string, unknown>, key: string): Record<string, unknown> {
  const { [key]: _dropped, ...rest } = object;
  return rest;
}
