// The router: fans lists out to the upstreams with a per-upstream deadline,
// merges and namespaces them, gates them by preference, and routes calls back
// by namespace. It never waits on an upstream without a deadline.
import { EventEmitter } from 'node:events';
import { CAPABILITY_TYPE_OF, IDENTITY_FIELD, kindsChangedWith, type CallKind, type ListKind } from '../protocol/capabilities.js';
import { JSONRPC } from '../protocol/errors.js';
import type { ClientRef, ForwardOutcome } from '../protocol/actor.js';
import type { ServerConfig } from '../protocol/server-config.js';
import type { InvocationRecord, InvocationStatus } from '../protocol/events.js';
import type { UpstreamInstructions } from '../protocol/instructions.js';
import { RpcError } from '../mcp/rpc-error.js';
import type { Upstream, UpstreamDirectory } from '../upstreams/upstream.js';
import { ClientMessages, type ClientEvent, type ClientLink } from './client-messages.js';
import { mergeLists, type Collision, type Hidden, type Item, type UpstreamList } from './merge.js';
import type { Namespaced } from './namespace.js';
import type { CapabilityGate } from './gate.js';
import { exposeResultUris } from './expose-results.js';
import { LogLevels } from './log-levels.js';
import { describe, disabledByName, disabledResource } from './refusals.js';
import { claimant, prefixIndex, resolveExposed, type PrefixIndex, type ResolverDirectory } from './resolver.js';
import { Subscriptions } from './subscriptions.js';
import { UpstreamLists } from './upstream-lists.js';
import { normaliseUri } from './uri-rule.js';

export type { CallKind };

export interface ForwardContext {
  sessionId: string;
  /** The downstream request id: the upstream's requests and notifications during the call go on its stream. */
  requestId: string | number;
  /** What the session declared (per_session connections declare the same). */
  capabilities: Record<string, unknown>;
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
  /** An unprefixed name another server already exposes: it is exposed prefixed instead. */
  collision: [collision: Collision];
  /** An unprefixed server lists a name in another registered server's prefix form: it is hidden. */
  hidden: [hidden: Hidden];
}

/** The registered servers, enabled or not (the registry). */
export interface ServerDirectory {
  config(name: string): ServerConfig | undefined;
  all(): ServerConfig[];
}

function statusOf(error: unknown): { status: InvocationStatus; error_code: number | null } {
  const code = error instanceof RpcError ? error.code : JSONRPC.INTERNAL_ERROR;
  if (code === JSONRPC.TOOL_DISABLED) return { status: 'denied', error_code: code };
  return { status: code === JSONRPC.UPSTREAM_TIMEOUT ? 'timeout' : 'error', error_code: code };
}

interface MergedEntry {
  versions: string;
  gateVersion: number;
  items: Item[];
  routes: Map<string, Namespaced>;
}

const MISSED = Symbol('missed');

export class Router extends EventEmitter<RouterEvents> {
  private merged = new Map<ListKind, MergedEntry>();
  /** Upstreams left out of an answer, per kind, until they answer again. */
  private missed = new Map<string, Set<ListKind>>();
  /** Upstream lists (server, kind) that missed their deadline and have not answered yet. */
  private lateLists = new Set<string>();
  /** Forwarded calls in flight, by forward id. */
  private calls = new Map<string, ForwardContext>();
  private nextForwardId = 0;
  /** Who owns which prefix; dropped whenever a server changes (invalidate without a kind). */
  private prefixes: PrefixIndex | null = null;
  /** Bumped with every new prefix index: which names are hidden depends on it, so merges are redone. */
  private prefixGeneration = 0;
  /** Collisions and hidden items of the last merge, by event and kind, to announce only new ones. */
  private announced = new Map<string, Set<string>>();

  private readonly copies: UpstreamLists;
  readonly subscriptions = new Subscriptions();
  readonly logLevels = new LogLevels();
  private readonly clientMessages: ClientMessages;
  /** What resolve() reads exposed names from: the merged lists' routes and the prefix index. */
  private readonly directory: ResolverDirectory = {
    routes: (kind) => this.merged.get(kind)?.routes,
    refresh: async (kind) => (await this.list(kind), this.merged.get(kind)?.routes),
    prefixes: () => this.prefixIndex(),
  };

  constructor(
    private readonly upstreams: UpstreamDirectory,
    private readonly gate: CapabilityGate,
    /** Registered, enabled or not: a disabled server is refused as such, not as unknown. */
    private readonly servers: ServerDirectory,
    /** The actors' list cache TTL: the router's copies expire with them. */
    cacheTtlMs: number,
  ) {
    super();
    this.copies = new UpstreamLists(cacheTtlMs);
    this.clientMessages = new ClientMessages(upstreams, (id) => this.calls.get(id), this.subscriptions, this.logLevels);
  }

  /** How the upstreams' requests and notifications reach client sessions. */
  connectClients(link: ClientLink): void {
    this.clientMessages.connect(link);
  }

  /** An actor's request or notification for clients. */
  clientEvent(event: ClientEvent): void {
    this.clientMessages.handle(event);
  }

  /** A client's notifications/progress for a request an upstream sent it. */
  clientProgress(params: Record<string, unknown>): void {
    this.clientMessages.clientProgress(params);
  }

  /** R3: an upstream's list changed, was refreshed, or its session restarted. */
  invalidate(server: string, kind?: ListKind): void {
    if (kind === undefined) {
      this.copies.forget(server);
      this.prefixes = null;
      this.prefixGeneration++;
    } else {
      // A resources/list_changed also covers templates.
      for (const changed of kindsChangedWith(kind)) this.copies.forgetKind(server, changed);
    }
  }

  /**
   * The merged, namespaced, gated list of one kind. Upstreams whose list copy
   * is still fresh are not asked; the others are asked with their deadline.
   */
  async list(kind: ListKind): Promise<Item[]> {
    const now = Date.now();
    // Every deadline counts from here, not from when its upstream's request went out: posting to hundreds of actors
    // (and a GC pause on the way) must not push the last ones' deadlines later.
    const started = performance.now();
    const answers = await Promise.all(
      this.upstreams.active().map((upstream) => {
        const copy = this.copies.get(upstream.name, kind, now);
        return copy ? { server: upstream.name, namespace: this.namespaceOf(upstream.name), items: copy.items, version: copy.version } : this.listWithDeadline(upstream, kind, started);
      }),
    );
    const lists = answers.filter((answer): answer is UpstreamList & { version: number } => answer !== null);
    // The namespace is part of the key: a renamed prefix must re-merge even when the new actor counts versions from the same number.
    const versions = `${this.prefixGeneration}|${lists.map((list) => `${list.server}:${list.namespace}:${list.version}`).join(',')}`;
    const cached = this.merged.get(kind);
    if (cached && cached.versions === versions && cached.gateVersion === this.gate.version) return cached.items;
    const prefixes = this.prefixIndex();
    const merged = mergeLists(
      kind,
      lists,
      (server, itemKind, key) => this.gate.isEnabled(server, itemKind, key),
      (itemKind, exposed) => claimant(prefixes, itemKind, exposed),
    );
    this.merged.set(kind, { versions, gateVersion: this.gate.version, items: merged.items, routes: merged.routes });
    for (const collision of this.unannounced('collision', kind, merged.collisions)) this.emit('collision', collision);
    for (const hidden of this.unannounced('hidden', kind, merged.hidden)) this.emit('hidden', hidden);
    return merged.items;
  }

  /** The items not in the last merge's announcement of this event and kind. */
  private unannounced<T extends Namespaced>(event: 'collision' | 'hidden', kind: ListKind, items: T[]): T[] {
    const marker = `${event}\u0000${kind}`;
    const before = this.announced.get(marker) ?? new Set<string>();
    const now = new Set(items.map((item) => `${item.server}\u0000${item.original}`));
    this.announced.set(marker, now);
    return items.filter((item) => !before.has(`${item.server}\u0000${item.original}`));
  }

  private async listWithDeadline(upstream: Upstream, kind: ListKind, started: number): Promise<(UpstreamList & { version: number }) | null> {
    const key = `${upstream.name}\u0000${kind}`;
    // Its last list missed the deadline and is still out: waiting again would only add the deadline to this answer.
    // The actor shares that in-flight request, and its arrival tells every session to list again.
    if (this.lateLists.has(key)) return null;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<typeof MISSED>((resolve) => {
      timer = setTimeout(() => resolve(MISSED), Math.max(0, started + upstream.config.timeouts.list_deadline_ms - performance.now()));
    });
    const pending = upstream.list(kind, false);
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
    return { server: upstream.name, namespace: this.namespaceOf(upstream.name), items, version: answer.version };
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
    // Clients list again; the upstream stays degraded until one of those lists answers (ready is not "lists work").
    for (const kind of this.missed.get(server) ?? []) this.emit('list_changed', kind);
  }

  /** Names of upstreams currently left out of some list. */
  degradedServers(): string[] {
    return [...this.missed.keys()];
  }

  /** Routes tools/call, resources/read or prompts/get to its upstream with the original name / URI; URIs in the result come back exposed. */
  async forward(kind: CallKind, method: string, params: Record<string, unknown>, ctx: ForwardContext): Promise<Record<string, unknown>> {
    const field = IDENTITY_FIELD[kind];
    const { upstream, target } = await this.resolve(kind, params[field]);
    const started = Date.now();
    const record = (outcome: { status: InvocationStatus; error_code: number | null }) =>
      this.emit('invocation', { at: new Date(started).toISOString(), server: upstream.name, kind: CAPABILITY_TYPE_OF[kind], key: target.original, duration_ms: Date.now() - started, session: ctx.sessionId, ...outcome });
    try {
      this.assertEnabled(kind, upstream.name, target.original);
      const result = await this.send(upstream, method, { ...params, [field]: target.original }, ctx);
      record({ status: 'ok', error_code: null });
      return exposeResultUris(kind, result, this.namespaceOf(upstream.name));
    } catch (error) {
      record(statusOf(error));
      throw error;
    }
  }

  /** Forwards one request to one upstream as it is; the upstream's error becomes an RpcError. */
  async send(upstream: Upstream, method: string, params: Record<string, unknown>, ctx: ForwardContext): Promise<Record<string, unknown>> {
    const id = `f${++this.nextForwardId}`;
    const onAbort = () => upstream.cancel(id, String(ctx.signal.reason ?? 'cancelled by client'));
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    this.calls.set(id, ctx);
    let outcome: ForwardOutcome;
    try {
      outcome = await upstream.forward({
        id,
        method,
        params: stripProgressToken(params),
        progress: ctx.onProgress !== undefined,
        // The capabilities only matter to a per_session connection (it declares them): no clone per call otherwise.
        client: { session: ctx.sessionId, capabilities: upstream.config.session_mode === 'per_session' ? ctx.capabilities : {} } satisfies ClientRef,
      });
    } finally {
      ctx.signal.removeEventListener('abort', onAbort);
      this.calls.delete(id);
    }
    if (!outcome.ok) throw RpcError.from(outcome.error);
    return outcome.result;
  }

  /** Progress the actor reported for a forwarded request. */
  progress(requestId: string, progress: { progress: number; total?: number; message?: string }): void {
    this.calls.get(requestId)?.onProgress?.(progress);
  }

  /** From the registry, not the actor's config copy: a namespace change needs no actor restart. */
  private prefixIndex(): PrefixIndex {
    return (this.prefixes ??= prefixIndex(this.servers.all()));
  }

  private namespaceOf(server: string): string {
    return this.prefixIndex().namespaces.get(server) ?? server;
  }

  /** The instructions of the enabled upstreams connected now, each with the namespace its names are exposed under. */
  upstreamInstructions(): UpstreamInstructions[] {
    const found: UpstreamInstructions[] = [];
    for (const upstream of this.upstreams.active()) {
      const { state, instructions } = upstream.status();
      if (state === 'ready' && instructions) found.push({ server: upstream.name, namespace: this.namespaceOf(upstream.name), text: instructions });
    }
    return found;
  }

  /** The enabled upstream an exposed name or URI belongs to, and its original form (a resource URI normalised: what is gated is what is read). */
  async resolve(kind: ListKind, value: unknown): Promise<{ upstream: Upstream; target: Namespaced }> {
    const what = describe(kind);
    const byName = IDENTITY_FIELD[kind] === 'name';
    if (typeof value !== 'string') throw RpcError.invalidParams(`the ${what} ${byName ? 'name' : 'URI'} must be a string`);
    const resolution = await resolveExposed(this.directory, kind, value);
    if (resolution && 'ambiguous' in resolution) {
      throw RpcError.coffer(JSONRPC.INVALID_PARAMS, 'RESOURCE_NOT_FOUND', `unknown ${what} '${value}': none of the unprefixed servers (${resolution.ambiguous.join(', ')}) lists it, and coffer never guesses between them`);
    }
    const upstream = resolution ? this.upstreams.get(resolution.server) : undefined;
    if (resolution && !upstream && this.servers.config(resolution.server)) {
      throw RpcError.coffer(JSONRPC.TOOL_DISABLED, 'TOOL_DISABLED', `server '${resolution.server}' is disabled in coffer; enable it with 'coffer mcp enable ${resolution.server}'`, { server: resolution.server });
    }
    if (!resolution || !upstream) {
      const expected = byName ? '<namespace>__<name>' : 'coffer://<namespace>/<uri>';
      throw RpcError.coffer(JSONRPC.INVALID_PARAMS, 'RESOURCE_NOT_FOUND', `unknown ${what} '${value}': expected ${expected} of an enabled server`);
    }
    return { upstream, target: kind === 'resources' ? { server: resolution.server, original: normaliseUri(resolution.original) } : resolution };
  }

  /** R10: a disabled capability is refused as such (calls, subscriptions, completion). */
  assertEnabled(kind: CallKind | 'resourceTemplates', server: string, key: string): void {
    if (kind === 'tools' || kind === 'prompts') {
      if (!this.gate.isEnabled(server, kind, key)) throw disabledByName(kind, server, key);
      return;
    }
    const decision = this.gate.resourceDecision(server, key);
    if (!decision.enabled) throw disabledResource(server, key, decision);
  }

  /** A server was removed or disabled: its subscriptions end with it. */
  forgetServer(server: string): void {
    this.subscriptions.dropServer(server);
    this.missed.delete(server);
    this.invalidate(server);
  }
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
