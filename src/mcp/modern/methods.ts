// The methods of the modern era (2026-07-28) on coffer's /mcp, each answered
// per request through the same router, switches (R10) and upstreams as the
// legacy era: server/discover, the four lists with their cache hints, the
// routed calls (tools/call, resources/read, prompts/get) and completion.
// Results carry resultType and coffer's serverInfo; what the 2026 revision
// removed (initialize, ping, logging/setLevel, resources/subscribe, ...) is
// unknown here and answered 404 by the endpoint.
import { KIND_BY_CALL_METHOD, KIND_BY_LIST_METHOD } from '../../protocol/capabilities.js';
import { JSONRPC } from '../../protocol/errors.js';
import { TASK_METHODS, TASKS_EXTENSION } from '../../protocol/extensions.js';
import { aggregateInstructions } from '../../protocol/instructions.js';
import { extended } from '../../protocol/extended.js';
import type { Calls, ForwardContext } from '../../router/calls.js';
import type { SearchMode } from '../../search/search-mode.js';
import type { ViewLists } from '../../toolsets/view-lists.js';
import type { Item } from '../../router/merge.js';
import type { Router } from '../../router/router.js';
import type { SessionFeatures } from '../../router/session-features.js';
import type { EraRejection } from '../era.js';
import { checkParamLengths } from '../param-limits.js';
import { RpcError } from '../rpc-error.js';
import type { Answer } from '../json-text.js';
import { FirstPages } from '../page-text.js';
import { listPage, OWN_INSTRUCTIONS, SERVER_CAPABILITIES } from '../surface.js';
import { checkParamHeaders, declaredHeaders } from './param-headers.js';
import { TaskRoutes } from './tasks.js';
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  LOG_LEVEL_META_KEY,
  isPlainObject,
  MODERN_VERSIONS,
  PROTOCOL_VERSION_META_KEY,
  SERVER_INFO_META_KEY,
} from './wire.js';

/**
 * coffer's lists change at once when a switch flips or an upstream announces
 * a change, so a merged list is never promised fresh for any time (clients
 * learn of changes on subscriptions/listen). Lists can differ by caller
 * (per-session upstreams): never shared across callers.
 */
const CACHE_HINTS = { ttlMs: 0, cacheScope: 'private' } as const;

export interface ModernParts {
  router: Router;
  calls: Calls;
  features: SessionFeatures;
  /** The toolset views: a caller of /mcp/<toolset>, or bound to one, sees only its set, as in 2025. */
  views: Pick<ViewLists, 'listFor' | 'viewOf' | 'viewOfList'>;
  /** Search mode: the meta-tools instead of every tool, when the caller's toolset (or the gateway) asks for it. */
  search: SearchMode;
  version: string;
  pageSize?: number;
}

export class ModernMethods {
  /** coffer's identity as every result's _meta carries it (one object, never changed). */
  private readonly identity: Readonly<Record<string, unknown>>;
  private readonly tasks: TaskRoutes;
  private readonly firstPages: FirstPages;

  constructor(private readonly parts: ModernParts) {
    this.identity = Object.freeze({ [SERVER_INFO_META_KEY]: Object.freeze({ name: 'coffer', version: parts.version }) });
    this.tasks = new TaskRoutes(parts.calls);
    this.firstPages = new FirstPages(parts.pageSize, (page) => this.stamp(withCacheHints(page)));
  }

  /** Whether the endpoint serves this method in the modern era (else 404 -32601). */
  serves(method: string): boolean {
    return method === 'server/discover' || method === 'completion/complete' || KIND_BY_LIST_METHOD.has(method) || KIND_BY_CALL_METHOD.has(method) || TASK_METHODS.has(method);
  }

  /** Whether coffer answers this method from what it holds (a list, its discovery): no upstream is asked, so no caller id or signal is needed. */
  answersItself(method: string): boolean {
    return method === 'server/discover' || KIND_BY_LIST_METHOD.has(method);
  }

  /** A method coffer answers itself, for the caller of `toolset`. */
  async own(method: string, params: Record<string, unknown>, toolset: string | null): Promise<Answer> {
    checkParamLengths(method, params);
    if (method === 'server/discover') return this.stamp(this.discover(toolset));
    const list = KIND_BY_LIST_METHOD.get(method);
    if (!list) throw new RpcError(JSONRPC.METHOD_NOT_FOUND, `method not found: ${method}`);
    const items = await this.parts.views.listFor(list, toolset);
    // Its mode and pins are those of the view it was narrowed with: the set may have changed while it was gathered.
    const view = this.parts.views.viewOfList(items);
    // A page reads only the cursor of the params: no copy of them without the envelope.
    if (list === 'tools' && this.parts.search.modeOf(view) === 'search') return this.stamp(withCacheHints(listPage(list, this.parts.search.list(view, items), params, this.parts.pageSize)));
    return this.firstPages.page(list, items, params);
  }

  /**
   * Answers one request; an RpcError becomes an in-band error. `ctx` is made
   * for this request alone: the caller's view (and the tasks hook) are set on
   * it, not on a copy of it made for every call.
   */
  async handle(method: string, params: Record<string, unknown>, ctx: ForwardContext, toolset: string | null): Promise<Record<string, unknown>> {
    checkParamLengths(method, params);
    const view = this.parts.views.viewOf(toolset);
    ctx.toolset = view;
    // A caller of the tasks extension gets its upstreams' tasks under coffer's ids (tasks.ts).
    if (ctx.caller !== undefined && TaskRoutes.declared(ctx.capabilities)) ctx.onTask = this.tasks.hook(ctx.caller);
    const searching = this.parts.search.modeOf(view) === 'search';
    // tasks/update's inputResponses are the task's answers, not a retry: they go to the upstream.
    const forwarded = forwardable(params, !TASK_METHODS.has(method));
    const call = KIND_BY_CALL_METHOD.get(method);
    if (call === 'tools' && searching && this.parts.search.isMetaTool(forwarded.name, false)) {
      return this.stamp(await this.parts.search.call(forwarded, () => this.parts.views.listFor('tools', toolset), (inner) => this.parts.calls.forward('tools', method, inner, ctx)));
    }
    if (call === 'resources') {
      const read = await this.read(method, forwarded, ctx);
      // An interim input_required carries no cache hints; a read that needed input is not cacheable either way.
      return this.stamp(read.resultType === 'input_required' ? read : withCacheHints(read));
    }
    if (call) return this.stamp(await this.parts.calls.forward(call, method, forwarded, ctx));
    if (method === 'completion/complete') return this.stamp(await this.parts.features.complete(forwarded, ctx));
    if (TASK_METHODS.has(method)) return this.stamp(await this.tasks.handle(method, forwarded, ctx));
    throw new RpcError(JSONRPC.METHOD_NOT_FOUND, `method not found: ${method}`);
  }

  /**
   * A tools/call's Mcp-Param-* headers against the declarations of the tool it
   * names, in the last merged list (a promise only while there is none). A
   * tool outside the caller's toolset is not checked: the call is refused as
   * outside the set, and its declarations are not the caller's to learn.
   */
  checkParamHeaders(params: Record<string, unknown>, headers: Readonly<Record<string, string | undefined>>, toolset: string | null): EraRejection | undefined | Promise<EraRejection | undefined> {
    const name = params.name;
    if (typeof name !== 'string') return undefined;
    const check = (tools: readonly Item[]) => (toolset !== null && !this.inToolset(name, toolset, tools) ? undefined : checkParamHeaders(declaredHeaders(tools, name), params.arguments, headers));
    const tools = this.parts.router.lastList('tools');
    return Array.isArray(tools) ? check(tools) : tools.then(check);
  }

  /** Whether the exposed tool `name` of the merged list `tools` is one the caller of `toolset` may call (its switch and its set). */
  private inToolset(name: string, toolset: string, tools: readonly Item[]): boolean {
    // The routes of the list whose declarations are checked: another merge may have come since it was gathered.
    const route = this.parts.router.routesOf(tools)?.get(name);
    return route !== undefined && this.parts.calls.admits('tools', route.server, route.original, this.parts.views.viewOf(toolset));
  }

  /** resources/read; an unknown resource is -32602 with data.uri (the 2026 shape; -32002 is gone). */
  private async read(method: string, params: Record<string, unknown>, ctx: ForwardContext): Promise<Record<string, unknown>> {
    // Refused here: the router's refusal of it would read as an unknown resource below, with what was sent echoed in data.uri.
    if (typeof params.uri !== 'string') throw RpcError.invalidParams('resources/read needs params.uri, a string: a URI as resources/list names it');
    try {
      return await this.parts.calls.forward('resources', method, params, ctx);
    } catch (error) {
      if (!(error instanceof RpcError) || !isNotFound(error)) throw error;
      const data = typeof error.data === 'object' && error.data !== null ? error.data : {};
      throw new RpcError(JSONRPC.INVALID_PARAMS, error.message, { code: 'RESOURCE_NOT_FOUND', ...data, uri: params.uri });
    }
  }

  private discover(toolset: string | null): Record<string, unknown> {
    return {
      supportedVersions: [...MODERN_VERSIONS],
      // The tasks extension only while an upstream that serves it is connected: coffer routes tasks, it runs none.
      capabilities: this.parts.router.upstreamExtensions().has(TASKS_EXTENSION) ? { ...SERVER_CAPABILITIES, extensions: { [TASKS_EXTENSION]: {} } } : SERVER_CAPABILITIES,
      instructions: aggregateInstructions(OWN_INSTRUCTIONS, this.parts.router.upstreamInstructions(this.parts.views.viewOf(toolset))),
      // The instructions follow the enabled, connected servers (those of the caller's toolset).
      ...CACHE_HINTS,
    };
  }

  /**
   * resultType (a legacy upstream's result has none: it is complete) and
   * coffer's identity, set on the result itself: every result stamped here
   * was made for this one answer (the actor's answer as it crossed to this
   * thread, or a literal of coffer's) and is written out next, so no copy of
   * it is made. A result's own _meta is copied, never changed.
   */
  stamp(result: Record<string, unknown>): Record<string, unknown> {
    if (typeof result.resultType !== 'string') result.resultType = 'complete';
    result._meta = isPlainObject(result._meta) ? extended(result._meta, this.identity) : this.identity;
    return result;
  }
}

/** The cache hints set on a result made for this answer (a page, a read as it crossed from the actor): no copy of it. */
function withCacheHints(result: Record<string, unknown>): Record<string, unknown> {
  result.ttlMs = CACHE_HINTS.ttlMs;
  result.cacheScope = CACHE_HINTS.cacheScope;
  return result;
}

/** The 2025 era's -32002, or invalid params (the URI is the only parameter a read has): the resource is not there. */
function isNotFound(error: RpcError): boolean {
  return error.code === -32002 || error.code === JSONRPC.INVALID_PARAMS;
}

/**
 * The params an upstream gets: without the envelope, which is coffer's
 * business with its caller (an upstream gets coffer's own; other _meta keys,
 * e.g. progressToken and trace context, stay), and without the retry's
 * inputResponses and requestState when `retry` (input-bridge.ts answers those).
 * Made with rest patterns, not copied and pruned with `delete`, which would
 * leave each forwarded params object in V8's slow dictionary mode.
 */
function forwardable(params: Record<string, unknown>, retry: boolean): Record<string, unknown> {
  const { _meta, ...rest } = params;
  const copy = retry && ('inputResponses' in rest || 'requestState' in rest) ? withoutRetry(rest) : rest;
  const meta = withoutEnvelope(_meta);
  if (meta !== undefined) copy._meta = meta;
  return copy;
}

function withoutRetry({ inputResponses: _responses, requestState: _state, ...rest }: Record<string, unknown>): Record<string, unknown> {
  return rest;
}

const ENVELOPE_KEYS = new Set([PROTOCOL_VERSION_META_KEY, CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY, LOG_LEVEL_META_KEY]);

/** A _meta without the envelope's keys; undefined when nothing else is left (one that is not an object stays as it is). */
function withoutEnvelope(meta: unknown): unknown {
  if (!isPlainObject(meta)) return meta;
  // Most requests' _meta is the envelope alone: nothing to copy then (a rest pattern with computed keys is a slow runtime call).
  if (Object.keys(meta).every((key) => ENVELOPE_KEYS.has(key))) return undefined;
  const { [PROTOCOL_VERSION_META_KEY]: _version, [CLIENT_CAPABILITIES_META_KEY]: _capabilities, [CLIENT_INFO_META_KEY]: _info, [LOG_LEVEL_META_KEY]: _level, ...rest } = meta;
  return rest;
}
