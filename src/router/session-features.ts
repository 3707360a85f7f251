// The stateful part of MCP routed per client session: resource subscriptions,
// completion of namespaced prompts and templates, the log level, roots
// changes, and the end of a session. It owns the sessions' subscriptions and
// log levels; the upstreams' messages for clients are routed by what it keeps.
import { JSONRPC } from '../protocol/errors.js';
import { RpcError } from '../mcp/rpc-error.js';
import type { Upstream, UpstreamDirectory } from '../upstreams/upstream.js';
import { assertNotCancelled, type Calls, type ForwardContext, type ToolsetScope } from './calls.js';
import type { SessionInterest } from './client-messages.js';
import { isLogLevel, LogLevels, type LogLevel } from './log-levels.js';
import { MAX_SESSION_SUBSCRIPTIONS, Subscriptions } from './subscriptions.js';
import type { CancelSignal } from '../protocol/cancel.js';

/** How long logging/setLevel waits for each upstream (they apply it in parallel; errors are only logged). */
const SET_LEVEL_WAIT_MS = 2_000;

export class SessionFeatures implements SessionInterest {
  private readonly subscriptions = new Subscriptions();
  private readonly logLevels = new LogLevels();

  constructor(
    private readonly calls: Calls,
    private readonly upstreams: UpstreamDirectory,
    /** A toolset as it is now (null: the whole surface; an unknown name: an empty one). */
    private readonly toolsetOf: (name: string | null) => ToolsetScope | null,
    private readonly onError: (message: string, context: Record<string, unknown>) => void,
  ) {}

  async subscribe(params: Record<string, unknown>, ctx: ForwardContext): Promise<Record<string, unknown>> {
    const { upstream, target } = await this.calls.resolve('resources', params.uri, ctx.toolset);
    // Its session may have ended while the URI was resolved, its subscriptions already dropped: one added now would stay for good.
    assertNotCancelled('resources/subscribe', ctx.signal);
    this.calls.assertEnabled('resources', upstream.name, target.original, ctx.toolset);
    if (this.subscriptions.full(target, ctx.sessionId)) {
      throw RpcError.invalidParams(`this session is subscribed to ${MAX_SESSION_SUBSCRIPTIONS} resources, as many as coffer keeps for one session: unsubscribe from one first`);
    }
    this.subscriptions.add(target, { session: ctx.sessionId, uri: params.uri as string, toolset: ctx.toolset?.name ?? null });
    const subscribe = () => this.calls.send(upstream, 'resources/subscribe', { ...params, uri: target.original }, ctx);
    try {
      await (perSession(upstream) ? subscribe() : this.subscriptions.upstream(target, subscribe));
    } catch (error) {
      this.subscriptions.remove(target, ctx.sessionId);
      throw error;
    }
    return {};
  }

  async unsubscribe(params: Record<string, unknown>, ctx: ForwardContext): Promise<Record<string, unknown>> {
    const { upstream, target } = await this.calls.resolve('resources', params.uri, ctx.toolset);
    const last = this.subscriptions.remove(target, ctx.sessionId);
    if (last || perSession(upstream)) await this.calls.send(upstream, 'resources/unsubscribe', { ...params, uri: target.original }, ctx);
    return {};
  }

  /** completion/complete for `ref/prompt` (namespaced name) or `ref/resource` (namespaced template URI). */
  async complete(params: Record<string, unknown>, ctx: ForwardContext): Promise<Record<string, unknown>> {
    const ref = params.ref as { type?: unknown; name?: unknown; uri?: unknown } | undefined;
    if (typeof ref !== 'object' || ref === null) throw RpcError.invalidParams('params.ref must be an object');
    if (ref.type === 'ref/prompt') {
      const { upstream, target } = await this.calls.resolve('prompts', ref.name, ctx.toolset);
      this.calls.assertEnabled('prompts', upstream.name, target.original, ctx.toolset);
      return this.calls.send(upstream, 'completion/complete', { ...params, ref: { ...ref, name: target.original } }, ctx);
    }
    if (ref.type === 'ref/resource') {
      const { upstream, target } = await this.calls.resolve('resourceTemplates', ref.uri, ctx.toolset);
      this.calls.assertEnabled('resourceTemplates', upstream.name, target.original, ctx.toolset);
      return this.calls.send(upstream, 'completion/complete', { ...params, ref: { ...ref, uri: target.original } }, ctx);
    }
    throw RpcError.invalidParams('params.ref.type must be "ref/prompt" or "ref/resource"');
  }

  /**
   * Records the session's level and tells the upstreams: a shared connection
   * gets the most verbose level any session wants (coffer filters per session),
   * a per_session connection this session's own.
   */
  async setLogLevel(params: Record<string, unknown>, ctx: ForwardContext): Promise<Record<string, unknown>> {
    if (!isLogLevel(params.level)) throw RpcError.invalidParams('params.level must be one of debug, info, notice, warning, error, critical, alert, emergency');
    this.logLevels.set(ctx.sessionId, params.level, ctx.toolset?.name ?? null);
    const shared = this.logLevels.mostVerbose() ?? params.level;
    // A toolset's session sets the level of the servers its set covers only, as it hears only theirs.
    const concerned = this.upstreams.active().filter((upstream) => !ctx.toolset || ctx.toolset.covers(upstream.name));
    await Promise.all(
      concerned.map((upstream) =>
        within(this.calls.send(upstream, 'logging/setLevel', { level: perSession(upstream) ? params.level : shared }, ctx), SET_LEVEL_WAIT_MS).catch((error: unknown) => {
          // -32601: the upstream has no logging; anything else is worth a line in the log, not a failed setLevel.
          if (!(error instanceof RpcError && error.code === JSONRPC.METHOD_NOT_FOUND)) this.onError('logging/setLevel not applied', { server: upstream.name, error: String(error) });
        }),
      ),
    );
    return {};
  }

  /** notifications/roots/list_changed and the like: to this session's per_session connections. */
  clientNotification(sessionId: string, method: string, params: Record<string, unknown> | undefined): void {
    for (const upstream of this.upstreams.active()) {
      if (perSession(upstream)) upstream.command({ type: 'notify', session: sessionId, method, ...(params ? { params } : {}) });
    }
  }

  /** A subscription outlives the switch or toolset that allowed it, so each update is weighed against them as they are now (once per toolset). */
  subscribers(server: string, original: string): Array<[string, string]> {
    const admitted = new Map<string | null, boolean>();
    const admits = (toolset: string | null): boolean => {
      let allowed = admitted.get(toolset);
      if (allowed === undefined) admitted.set(toolset, (allowed = this.calls.admits('resources', server, original, this.toolsetOf(toolset))));
      return allowed;
    };
    return this.subscriptions
      .subscribers(server, original)
      .filter(({ toolset }) => admits(toolset))
      .map(({ session, uri }) => [session, uri]);
  }

  /** The level the session set with logging/setLevel, if it did: what its requests ask of a modern upstream. */
  logLevelOf(session: string): LogLevel | undefined {
    return this.logLevels.of(session);
  }

  admitsLog(session: string, level: unknown, related: boolean): boolean {
    return this.logLevels.admits(session, level, related);
  }

  /** A toolset is weighed as it is when the message comes (a removed one covers nothing). */
  logListeners(server: string): string[] {
    return this.logLevels.sessions().filter((session) => {
      const toolset = this.logLevels.toolsetOf(session);
      return toolset === null || (this.toolsetOf(toolset)?.covers(server) ?? false);
    });
  }

  /** A server was removed or disabled: its subscriptions end with it. */
  forgetServer(server: string): void {
    this.subscriptions.dropServer(server);
  }

  /** The session ended: its subscriptions and level go, and so do its per_session connections. */
  sessionClosed(sessionId: string, signal: CancelSignal): void {
    this.logLevels.drop(sessionId);
    for (const source of this.subscriptions.dropSession(sessionId)) {
      const upstream = this.upstreams.get(source.server);
      if (!upstream || perSession(upstream)) continue;
      const ctx: ForwardContext = { sessionId, requestId: 'unsubscribe', capabilities: {}, signal };
      this.calls.send(upstream, 'resources/unsubscribe', { uri: source.original }, ctx).catch((error: unknown) => this.onError('unsubscribe after session end failed', { server: source.server, error: String(error) }));
    }
    this.closeSessionConnections(sessionId);
  }

  /** The session's per_session connections close (a modern caller's end with its request). */
  closeSessionConnections(sessionId: string): void {
    for (const upstream of this.upstreams.active()) upstream.closeSession(sessionId);
  }
}

function perSession(upstream: Upstream): boolean {
  return upstream.config.session_mode === 'per_session';
}

function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([promise, new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)))]).finally(() => clearTimeout(timer));
}
