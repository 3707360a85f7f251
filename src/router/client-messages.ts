// The upstreams' messages for clients, as the actors attributed them: requests
// (sampling, elicitation, roots) go with the call that caused them (its own
// way to ask, or its session's link, on that call's stream), and the answer
// goes back to the actor; log messages and
// resource updates go to the sessions that asked for them.
import type { ActorEvent, ClientTarget, ForwardOutcome } from '../protocol/actor.js';
import { JSONRPC } from '../protocol/errors.js';
import type { UpstreamDirectory } from '../upstreams/upstream.js';
import { Cancel, type CancelSignal } from '../protocol/cancel.js';

/** How the router reaches a client session; the MCP layer implements it. */
export interface ClientLink {
  /** Sends a request to the session (on the stream of `relatedRequestId` when given) and waits for its answer. */
  request(session: string, relatedRequestId: string | number | undefined, method: string, params: Record<string, unknown>, signal: CancelSignal): Promise<ForwardOutcome>;
  notify(session: string, relatedRequestId: string | number | undefined, method: string, params: Record<string, unknown>): void;
}

/** Asks the client of one call something (sampling, elicitation, roots) and waits for its answer. */
export type ClientAsk = (method: string, params: Record<string, unknown>, signal: CancelSignal) => Promise<ForwardOutcome>;

/** The downstream side of a forwarded call. */
export interface CallRoute {
  sessionId: string;
  requestId: string | number;
  /** How the upstream's requests during this call reach its client, when the call brings its own way (else the session's link). */
  ask?: ClientAsk;
}

/** What the sessions asked to hear: resource updates and log messages (SessionFeatures keeps it). */
export interface SessionInterest {
  /** [session, the URI as it subscribed] for each session subscribed to this upstream URI. */
  subscribers(server: string, original: string): Array<[string, string]>;
  /** Whether a log message of this level reaches the session (`related`: it came with one of its calls). */
  admitsLog(session: string, level: unknown, related: boolean): boolean;
  /** The sessions that set a log level and may hear `server` (its toolset, if any, has a rule for it). */
  logListeners(server: string): string[];
}

export type ClientEvent = Extract<ActorEvent, { type: 'client_request' | 'client_request_cancelled' | 'notification' }>;

export class ClientMessages {
  private link: ClientLink | null = null;
  private readonly tickets = new Map<string, Cancel>();
  /**
   * The progressToken coffer gave a relayed request → its upstream, ticket and
   * the upstream's own token, and the session asked. Upstreams pick tokens
   * independently (often their request id, from 0), so they are never shown
   * to clients as they are; coffer's can be guessed, so only the session asked
   * may report progress under one.
   */
  private readonly progressTokens = new Map<string, { server: string; ticket: number; original: unknown; session: string | null }>();

  constructor(
    private readonly upstreams: UpstreamDirectory,
    /** The call a forward id belongs to, while it is in flight. */
    private readonly callOf: (forwardId: string) => CallRoute | undefined,
    private readonly interest: SessionInterest,
  ) {}

  connect(link: ClientLink): void {
    this.link = link;
  }

  handle(event: ClientEvent): void {
    switch (event.type) {
      case 'client_request':
        void this.request(event);
        break;
      case 'client_request_cancelled':
        this.tickets.get(`${event.server}\u0000${event.ticket}`)?.abort(event.reason);
        break;
      case 'notification':
        this.notification(event);
        break;
    }
  }

  private async request(event: Extract<ClientEvent, { type: 'client_request' }>): Promise<void> {
    const { call, session } = this.route(event.target);
    const key = `${event.server}\u0000${event.ticket}`;
    const abort = new Cancel();
    this.tickets.set(key, abort);
    const meta = event.params._meta as { progressToken?: unknown } | undefined;
    const progressToken = meta?.progressToken === undefined ? undefined : `coffer-progress-${event.server}-${event.ticket}`;
    if (progressToken !== undefined) this.progressTokens.set(progressToken, { server: event.server, ticket: event.ticket, original: meta!.progressToken, session });
    const params = progressToken === undefined ? event.params : { ...event.params, _meta: { ...meta, progressToken } };
    let outcome: ForwardOutcome;
    try {
      outcome = call
        ? await this.askOf(call)(event.method, params, abort)
        : session === null || !this.link
          ? { ok: false, error: { code: JSONRPC.INTERNAL_ERROR, message: `the client call that caused ${event.method} has ended` } }
          : await this.link.request(session, undefined, event.method, params, abort);
    } finally {
      this.tickets.delete(key);
      if (progressToken !== undefined) this.progressTokens.delete(progressToken);
    }
    this.upstreams.get(event.server)?.command({ type: 'answer', ticket: event.ticket, outcome });
  }

  /** How the client of a call is asked something: the call's own way, else on its stream through the session's link. */
  askOf(call: CallRoute): ClientAsk {
    if (call.ask) return call.ask;
    return (method, params, signal) =>
      this.link
        ? this.link.request(call.sessionId, call.requestId, method, params, signal)
        : Promise.resolve({ ok: false, error: { code: JSONRPC.INTERNAL_ERROR, message: `no client link to ask ${method}` } });
  }

  /** The session a message is for: that of the call it came with, else the one its connection serves, if any. */
  private route(target: ClientTarget): { call: CallRoute | undefined; session: string | null } {
    const call = target.forwardId === null ? undefined : this.callOf(target.forwardId);
    return { call, session: call?.sessionId ?? target.session };
  }

  /** A session's progress on a request relayed to it goes to the upstream that asked. */
  clientProgress(sessionId: string, params: Record<string, unknown>): void {
    const relayed = typeof params.progressToken === 'string' ? this.progressTokens.get(params.progressToken) : undefined;
    if (relayed?.session === sessionId) this.upstreams.get(relayed.server)?.command({ type: 'progress', ticket: relayed.ticket, params: { ...params, progressToken: relayed.original } });
  }

  private notification(event: Extract<ClientEvent, { type: 'notification' }>): void {
    if (!this.link) return;
    if (event.method === 'notifications/resources/updated') {
      const uri = event.params.uri;
      if (typeof uri !== 'string') return;
      for (const [session, exposed] of this.interest.subscribers(event.server, uri)) this.link.notify(session, undefined, event.method, { ...event.params, uri: exposed });
      return;
    }
    const { call, session } = this.route(event.target);
    if (event.method === 'notifications/message') {
      const level = event.params.level;
      if (session !== null) {
        if (this.interest.admitsLog(session, level, true)) this.link.notify(session, call?.requestId, event.method, event.params);
        return;
      }
      for (const listener of this.interest.logListeners(event.server)) if (this.interest.admitsLog(listener, level, false)) this.link.notify(listener, undefined, event.method, event.params);
      return;
    }
    // Anything else the upstream sends goes to the client it concerns, if any.
    if (session !== null) this.link.notify(session, call?.requestId, event.method, event.params);
  }
}
