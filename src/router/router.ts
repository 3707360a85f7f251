// The router: fans lists out to the upstreams with a per-upstream deadline,
// merges and namespaces them, gates them by preference, and routes calls back
// by namespace. It never waits on an upstream without a deadline.
import { EventEmitter } from 'node:events';
import type { ListKind } from '../protocol/capabilities.js';
import { JSONRPC } from '../protocol/errors.js';
import type { ForwardOutcome } from '../protocol/actor.js';
import type { InvocationKind, InvocationRecord, InvocationStatus } from '../protocol/events.js';
import { RpcError } from '../mcp/rpc-error.js';
import type { Upstream, UpstreamDirectory } from '../upstreams/upstream.js';
import { mergeLists, type Item, type UpstreamList } from './merge.js';
import { parseNamespacedName, parseNamespacedUri, type Namespaced } from './namespace.js';
import type { CapabilityGate } from './gate.js';
import { UpstreamLists } from './upstream-lists.js';

export type CallKind = 'tools' | 'resources' | 'prompts';

export interface ForwardContext {
  sessionId: string;
  /** Present when the client asked for progress (its progressToken). */
  onProgress?: (progress: { progress: number; total?: number; message?: string }) => void;
  signal: AbortSignal;
}

export interface RouterEvents {
  /** Sessions must be told that a downstream list changed. */
  list_changed: [kind: ListKind];
  /** An upstream was left out of a list answer. */
  degraded: [server: string, kind: ListKind, reason: string];
  /** A left-out upstream answered again. */
  recovered: [server: string, kind: ListKind];
  /** A routed call finished (or was refused by its switch). */
  invocation: [record: InvocationRecord];
}

const INVOCATION_KIND: Record<CallKind, InvocationKind> = { tools: 'tool', resources: 'resource', prompts: 'prompt' };

function statusOf(error: unknown): { status: InvocationStatus; error_code: number | null } {
  const code = error instanceof RpcError ? error.code : JSONRPC.INTERNAL_ERROR;
  if (code === JSONRPC.TOOL_DISABLED) return { status: 'denied', error_code: code };
  return { status: code === JSONRPC.UPSTREAM_TIMEOUT ? 'timeout' : 'error', error_code: code };
}

interface MergedEntry {
  versions: string;
  gateVersion: number;
  items: Item[];
}

const MISSED = Symbol('missed');

export class Router extends EventEmitter<RouterEvents> {
  private merged = new Map<ListKind, MergedEntry>();
  /** Upstreams left out of an answer, per kind, until they answer again. */
  private missed = new Map<string, Set<ListKind>>();
  /** Upstream lists (server, kind) that missed their deadline and have not answered yet. */
  private lateLists = new Set<string>();
  private progressRoutes = new Map<string, NonNullable<ForwardContext['onProgress']>>();
  private nextForwardId = 0;

  private readonly copies: UpstreamLists;

  constructor(
    private readonly upstreams: UpstreamDirectory,
    private readonly gate: CapabilityGate,
    /** Registered, enabled or not: a disabled server is refused as such, not as unknown. */
    private readonly isRegistered: (server: string) => boolean,
    /** The actors' list cache TTL: the router's copies expire with them. */
    cacheTtlMs: number,
  ) {
    super();
    this.copies = new UpstreamLists(cacheTtlMs);
  }

  /** R3: an upstream's list changed, was refreshed, or its session restarted. */
  invalidate(server: string, kind?: ListKind): void {
    if (kind === undefined) this.copies.forget(server);
    else {
      this.copies.forgetKind(server, kind);
      // A resources/list_changed also covers templates.
      if (kind === 'resources') this.copies.forgetKind(server, 'resourceTemplates');
    }
  }

  /**
   * The merged, namespaced, gated list of one kind. Upstreams whose list copy
   * is still fresh are not asked; the others are asked with their deadline.
   */
  async list(kind: ListKind): Promise<Item[]> {
    const now = Date.now();
    const answers = await Promise.all(
      this.upstreams.active().map((upstream) => {
        const copy = this.copies.get(upstream.name, kind, now);
        return copy ? { server: upstream.name, items: copy.items, version: copy.version } : this.listWithDeadline(upstream, kind);
      }),
    );
    const lists = answers.filter((answer): answer is UpstreamList & { version: number } => answer !== null);
    const versions = lists.map((list) => `${list.server}:${list.version}`).join(',');
    const cached = this.merged.get(kind);
    if (cached && cached.versions === versions && cached.gateVersion === this.gate.version) return cached.items;
    const items = mergeLists(kind, lists, (server, itemKind, key) => this.gate.isEnabled(server, itemKind, key));
    this.merged.set(kind, { versions, gateVersion: this.gate.version, items });
    return items;
  }

  private async listWithDeadline(upstream: Upstream, kind: ListKind): Promise<(UpstreamList & { version: number }) | null> {
    const key = `${upstream.name}\u0000${kind}`;
    // Its last list missed the deadline and is still out: waiting again would only add the deadline to this answer.
    // The actor shares that in-flight request, and its arrival tells every session to list again.
    if (this.lateLists.has(key)) return null;
    const pending = upstream.list(kind, false);
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<typeof MISSED>((resolve) => {
      timer = setTimeout(() => resolve(MISSED), upstream.config.timeouts.list_deadline_ms);
    });
    const answer = await Promise.race([pending, deadline]);
    clearTimeout(timer);
    if (answer === MISSED) {
      this.markMissed(upstream.name, kind, `no answer within ${upstream.config.timeouts.list_deadline_ms} ms`);
      // Keep listening: the late answer fills the actor's cache, and sessions are told to list again.
      this.lateLists.add(key);
      pending
        .then((late) => late.ok && this.markAnswered(upstream.name, kind))
        .catch(() => undefined)
        .finally(() => this.lateLists.delete(key));
      return null;
    }
    if (!answer.ok) {
      this.markMissed(upstream.name, kind, `${answer.error.code}: ${answer.error.message}`);
      return null;
    }
    this.markAnswered(upstream.name, kind);
    const items = answer.state === 'live' ? answer.items : [];
    // Reconciliation (R4) runs beside the answer: until it lands, unknown keys follow the server's policy anyway.
    if (answer.state === 'live') void this.gate.observe(upstream, kind, items, answer.version);
    this.copies.set(upstream.name, kind, answer.version, items, answer.fetchedAt);
    return { server: upstream.name, items, version: answer.version };
  }

  private markMissed(server: string, kind: ListKind, reason: string): void {
    let kinds = this.missed.get(server);
    if (!kinds) this.missed.set(server, (kinds = new Set()));
    kinds.add(kind);
    this.emit('degraded', server, kind, reason);
  }

  private markAnswered(server: string, kind: ListKind): void {
    const kinds = this.missed.get(server);
    if (!kinds?.delete(kind)) return;
    if (kinds.size === 0) this.missed.delete(server);
    this.emit('recovered', server, kind);
    this.emit('list_changed', kind);
  }

  /** An upstream became ready: every kind it was left out of may now have items. */
  upstreamReady(server: string): void {
    for (const kind of this.missed.get(server) ?? []) this.emit('list_changed', kind);
    this.missed.delete(server);
  }

  /** Names of upstreams currently left out of some list. */
  degradedServers(): string[] {
    return [...this.missed.keys()];
  }

  /** Routes tools/call, resources/read or prompts/get to its upstream with the original name / URI. */
  async forward(kind: CallKind, method: string, params: Record<string, unknown>, ctx: ForwardContext): Promise<Record<string, unknown>> {
    const { upstream, target } = this.resolve(kind, params);
    const started = Date.now();
    const record = (outcome: { status: InvocationStatus; error_code: number | null }) =>
      this.emit('invocation', { at: new Date(started).toISOString(), server: upstream.name, kind: INVOCATION_KIND[kind], key: target.original, duration_ms: Date.now() - started, session: ctx.sessionId, ...outcome });
    try {
      const result = await this.route(kind, method, params, ctx, upstream, target);
      record({ status: 'ok', error_code: null });
      return result;
    } catch (error) {
      record(statusOf(error));
      throw error;
    }
  }

  private async route(kind: CallKind, method: string, params: Record<string, unknown>, ctx: ForwardContext, upstream: Upstream, target: Namespaced): Promise<Record<string, unknown>> {
    if (!this.gate.isEnabled(upstream.name, kind, target.original)) {
      throw RpcError.coffer(JSONRPC.TOOL_DISABLED, 'TOOL_DISABLED', `${describe(kind)} '${target.original}' of server '${upstream.name}' is disabled in coffer; enable it with 'coffer mcp cap enable ${upstream.name} ${capRef(kind, target.original)}'`, { server: upstream.name });
    }
    const forwarded = { ...params, [kind === 'resources' ? 'uri' : 'name']: target.original };
    const id = `f${++this.nextForwardId}`;
    const onAbort = () => upstream.cancel(id, String(ctx.signal.reason ?? 'cancelled by client'));
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    if (ctx.onProgress) this.progressRoutes.set(id, ctx.onProgress);
    let outcome: ForwardOutcome;
    try {
      outcome = await upstream.forward({ id, method, params: stripProgressToken(forwarded), progress: ctx.onProgress !== undefined });
    } finally {
      ctx.signal.removeEventListener('abort', onAbort);
      this.progressRoutes.delete(id);
    }
    if (!outcome.ok) throw RpcError.from(outcome.error);
    return outcome.result;
  }

  /** Progress the actor reported for a forwarded request. */
  progress(requestId: string, progress: { progress: number; total?: number; message?: string }): void {
    this.progressRoutes.get(requestId)?.(progress);
  }

  private resolve(kind: CallKind, params: Record<string, unknown>): { upstream: Upstream; target: Namespaced } {
    const field = kind === 'resources' ? 'uri' : 'name';
    const value = params[field];
    if (typeof value !== 'string') throw RpcError.invalidParams(`params.${field} must be a string`);
    const target = kind === 'resources' ? parseNamespacedUri(value) : parseNamespacedName(value);
    const upstream = target ? this.upstreams.get(target.server) : undefined;
    if (target && !upstream && this.isRegistered(target.server)) {
      throw RpcError.coffer(JSONRPC.TOOL_DISABLED, 'TOOL_DISABLED', `server '${target.server}' is disabled in coffer; enable it with 'coffer mcp enable ${target.server}'`, { server: target.server });
    }
    if (!target || !upstream) {
      const expected = kind === 'resources' ? 'coffer://<server>/<uri>' : '<server>__<name>';
      throw RpcError.coffer(JSONRPC.INVALID_PARAMS, 'RESOURCE_NOT_FOUND', `unknown ${describe(kind)} '${value}': expected ${expected} of an enabled server`);
    }
    return { upstream, target };
  }
}

function describe(kind: CallKind): string {
  return kind === 'tools' ? 'tool' : kind === 'resources' ? 'resource' : 'prompt';
}

function capRef(kind: CallKind, key: string): string {
  return `${describe(kind)}:${key}`;
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
