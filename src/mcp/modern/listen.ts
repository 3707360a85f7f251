// subscriptions/listen on /mcp (modern era): one long-lived POST answered as
// an SSE stream. The acknowledgement comes first, with what coffer honours
// of the requested filter; then a list_changed for each kind asked whenever
// the caller's own view of it changed, once (as a legacy session of that view
// hears it), and notifications/resources/updated for the subscribed resources
// (their URIs as the caller wrote them), each tagged with the subscription id
// (the listen request's id). Keep-alive comments hold the stream; closing it
// ends the subscription (and coffer's upstream subscriptions with it); a
// daemon shutdown ends it gracefully with the listen's result.
import type { HttpReply } from '../../http/reply.js';
import type { Logger } from '../../log.js';
import { JSONRPC } from '../../protocol/errors.js';
import type { ForwardContext } from '../../router/calls.js';
import type { SessionFeatures } from '../../router/session-features.js';
import type { ViewLists, ViewSession } from '../../toolsets/view-lists.js';
import { KINDS_CHANGED_BY } from '../../protocol/capabilities.js';
import { MAX_URI_CHARS } from '../param-limits.js';
import { MODERN_CALLER_PREFIX, type ModernTarget } from './link.js';
import { isPlainObject, SERVER_INFO_META_KEY, SUBSCRIPTION_ID_META_KEY } from './wire.js';
import { Cancel } from '../../protocol/cancel.js';

/** Open listens at most (the SDK's limit); past it a listen is refused in-band. */
export const MAX_LISTENS = 1024;

const FLAGS = ['toolsListChanged', 'promptsListChanged', 'resourcesListChanged'] as const;
type Flag = (typeof FLAGS)[number];
const FLAG_OF: Readonly<Record<string, Flag>> = {
  'notifications/tools/list_changed': 'toolsListChanged',
  'notifications/prompts/list_changed': 'promptsListChanged',
  'notifications/resources/list_changed': 'resourcesListChanged',
};

/** The list kinds the asked flags announce. */
function kindsOf(flags: Set<Flag>) {
  return Object.entries(FLAG_OF).flatMap(([method, flag]) => (flags.has(flag) ? KINDS_CHANGED_BY[method]! : []));
}

export interface ListenFilter {
  toolsListChanged?: true;
  promptsListChanged?: true;
  resourcesListChanged?: true;
  resourceSubscriptions?: string[];
}

export const SSE_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache, no-transform', 'x-accel-buffering': 'no' };

function sseEvent(message: unknown): string {
  return `event: message\ndata: ${JSON.stringify(message)}\n\n`;
}

/** The requested filter, or null when params.notifications is missing or malformed. */
export function parseFilter(params: Record<string, unknown>): { flags: Set<Flag>; uris: string[] } | null {
  const requested = params.notifications;
  if (!isPlainObject(requested)) return null;
  const flags = new Set<Flag>();
  for (const flag of FLAGS) {
    const value = requested[flag];
    if (value === undefined) continue;
    if (typeof value !== 'boolean') return null;
    if (value) flags.add(flag);
  }
  const uris = requested.resourceSubscriptions;
  if (uris !== undefined && !(Array.isArray(uris) && uris.every((uri) => typeof uri === 'string'))) return null;
  return { flags, uris: (uris as string[] | undefined) ?? [] };
}

interface Listen {
  /** The id of the credential that opened it. */
  credential: string;
  /** The view it was opened for: what its list_changed are measured against. */
  viewer: ViewSession;
  flags: Set<Flag>;
  write(message: unknown): void;
  close(graceful: boolean): void;
}

export class ListenRegistry {
  private readonly open = new Map<string, Listen>();
  /** Listens still subscribing their resources, by caller id: they count against the limit already, and end with their credential too. */
  private readonly opening = new Map<string, { credential: string; cancel: Cancel }>();
  private next = 0;

  constructor(
    private readonly features: SessionFeatures,
    private readonly views: Pick<ViewLists, 'list' | 'forget' | 'viewOf'>,
    private readonly keepAliveMs: number,
    private readonly serverInfo: { name: string; version: string },
    private readonly log: Logger,
  ) {}

  get size(): number {
    return this.open.size;
  }

  /** The listen with this caller id (resource updates reach it through the router). */
  target(id: string): ModernTarget | undefined {
    const listen = this.open.get(id);
    return listen && { notify: (method, params) => listen.write({ jsonrpc: '2.0', method, params }) };
  }

  /** `toolset`: the caller's (null: the whole surface); a resource outside it is not subscribed, as a read of it is refused. */
  async serve(requestId: string | number, params: Record<string, unknown>, capabilities: Record<string, unknown>, { credential, toolset }: { credential: string; toolset: string | null }, reply: HttpReply): Promise<void> {
    const inBand = (code: number, message: string) =>
      reply.send(200, { 'content-type': 'application/json' }, JSON.stringify({ jsonrpc: '2.0', id: requestId, error: { code, message } }));
    if (this.open.size + this.opening.size >= MAX_LISTENS) return inBand(JSONRPC.INTERNAL_ERROR, `Subscription limit reached: coffer holds at most ${MAX_LISTENS} open subscriptions/listen streams`);
    const filter = parseFilter(params);
    if (filter === null) return inBand(JSONRPC.INVALID_PARAMS, "Invalid params: 'notifications' is required and must be a subscription filter (booleans, and resourceSubscriptions as an array of URIs)");
    const id = `${MODERN_CALLER_PREFIX}listen:${++this.next}`;
    const cancel = new Cancel();
    const ctx: ForwardContext = { sessionId: id, requestId, capabilities, toolset: this.views.viewOf(toolset), signal: cancel };
    // Each URI is subscribed as a legacy resources/subscribe would be: an unknown, switched-off, out-of-toolset or over-long one is left out of the honoured set.
    const subscribed: string[] = [];
    const viewer: ViewSession = { toolset };
    this.opening.set(id, { credential, cancel });
    // A client gone (or its credential) while its resources are subscribed ends the listen: the subscribe in flight is cancelled, the rest not asked.
    reply.onAbort(() => cancel.abort('the client closed the request'));
    try {
      for (const uri of filter.uris) {
        if (cancel.aborted) break;
        if (uri.length > MAX_URI_CHARS) continue;
        try {
          await this.features.subscribe({ uri }, ctx);
          subscribed.push(uri);
        } catch (error) {
          this.log.debug('listen: resource not subscribed', { uri, error: String(error) });
        }
      }
      // A toolset's listen is told of a change only when its own view changed: what the view holds now is where that is measured from.
      if (viewer.toolset !== null) for (const kind of kindsOf(filter.flags)) await this.views.list(kind, viewer);
    } finally {
      this.opening.delete(id);
    }
    const honoured: ListenFilter = {};
    for (const flag of filter.flags) honoured[flag] = true;
    if (subscribed.length > 0) honoured.resourceSubscriptions = subscribed;
    const tag = (message: { method: string; params?: Record<string, unknown> }) => {
      const meta = isPlainObject(message.params?._meta) ? message.params._meta : {};
      return { jsonrpc: '2.0', method: message.method, params: { ...message.params, _meta: { ...meta, [SUBSCRIPTION_ID_META_KEY]: requestId } } };
    };
    let closed = false;
    const keepAlive = setInterval(() => !reply.aborted && reply.write(': keepalive\n\n', false), this.keepAliveMs);
    keepAlive.unref();
    const listen: Listen = {
      credential,
      viewer,
      flags: filter.flags,
      write: (message) => {
        if (!closed && !reply.aborted) reply.write(sseEvent(tag(message as { method: string; params?: Record<string, unknown> })), false);
      },
      close: (graceful) => {
        if (closed) return;
        closed = true;
        clearInterval(keepAlive);
        this.open.delete(id);
        this.views.forget(viewer);
        cancel.abort('the subscription ended');
        if (!reply.aborted) {
          const result = { resultType: 'complete', _meta: { [SUBSCRIPTION_ID_META_KEY]: requestId, [SERVER_INFO_META_KEY]: this.serverInfo } };
          reply.write(graceful ? sseEvent({ jsonrpc: '2.0', id: requestId, result }) : '', true);
        }
        this.features.sessionClosed(id, AbortSignal.timeout(30_000));
      },
    };
    reply.onAbort(() => listen.close(false));
    reply.startStream(200, SSE_HEADERS, sseEvent(tag({ method: 'notifications/subscriptions/acknowledged', params: { notifications: honoured } })));
    if (cancel.aborted) return listen.close(false);
    // Nothing honoured, nothing will ever come: the subscription completes at once.
    if (Object.keys(honoured).length === 0) return listen.close(true);
    this.open.set(id, listen);
  }

  /** A list_changed: to the listens that asked for that kind and whose view `to` picks (absent: every view). */
  broadcast(notification: { method: string; params?: Record<string, unknown> }, to?: (viewer: ViewSession) => boolean): void {
    const flag = FLAG_OF[notification.method];
    if (flag === undefined) return;
    for (const listen of this.open.values()) if (listen.flags.has(flag) && (!to || to(listen.viewer))) listen.write(notification);
  }

  /** Ends the listens of a credential revoked or bound to another view: what they hear was chosen by the old one. */
  closeCredential(credential: string): void {
    for (const listen of [...this.open.values()]) if (listen.credential === credential) listen.close(false);
    for (const subscribing of this.opening.values()) if (subscribing.credential === credential) subscribing.cancel.abort('its credential was revoked or bound to another view');
  }

  /** Ends every listen gracefully (the daemon stops). */
  closeAll(): void {
    for (const listen of [...this.open.values()]) listen.close(true);
  }
}
