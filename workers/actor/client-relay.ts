// The upstream's messages for clients: its requests (sampling, elicitation,
// roots) and notifications (logging, resource updates) are attributed to the
// client session that caused them and handed to the router as events; the
// router's answers come back as `answer` commands.
import type { ActorEvent, ClientTarget, ForwardOutcome } from '../../src/protocol/actor.js';
import { RELAYED_CLIENT_REQUESTS, requiredCapability } from '../../src/protocol/client-requests.js';
import { JSONRPC } from '../../src/protocol/errors.js';
import type { Notify } from './connection.js';
import { isObject } from '../../src/protocol/json-object.js';
import type { ServerRequestAnswer } from './jsonrpc-session.js';
import { MAX_DEPTH } from '../../src/protocol/message-limit.js';
import { nestsDeeperThan } from '../../src/protocol/nesting.js';

export interface ClientRelayOptions {
  server: string;
  /** How long a client may take to answer (the server's request_ms), unless its call says (answerTimeoutOf). */
  timeoutMs: number;
  answerTimeoutOf?(forwardId: string): number | undefined;
  /** The downstream session of a forwarded call still in flight. */
  sessionOf(forwardId: string): string | undefined;
  /** Who made that call (its session, unless a client's calls each have one). */
  clientOf?(forwardId: string): string | undefined;
  /** Stops the time limit of that call while its client is asked (the release restarts it). */
  hold?(forwardId: string): () => void;
  emit(event: ActorEvent): void;
  /** A line in the actor's log (what was refused and why). */
  note(text: string): void;
}

interface Waiting {
  resolve(answer: ServerRequestAnswer): void;
  /** Sends a notification on the connection the request came from (the client's progress for it). */
  notify?: Notify;
}

/**
 * `connectionSession`: the session a per_session connection belongs to (null
 * for the shared one). `contexts`: the forwarded calls the message may belong
 * to — one when the transport knows (a Streamable HTTP POST stream), else
 * every call in flight on that connection. `clientOf`: who made a call (a
 * legacy session, or a modern caller's credential, whose calls have sessions
 * of their own).
 */
export function attribute(
  connectionSession: string | null,
  contexts: string[],
  sessionOf: (forwardId: string) => string | undefined,
  clientOf: (forwardId: string) => string | undefined = sessionOf,
): ClientTarget | 'ambiguous' {
  const calls = contexts.filter((id) => sessionOf(id) !== undefined);
  if (calls.length === 0) return { forwardId: null, session: connectionSession };
  const clients = new Set(calls.map((id) => clientOf(id)));
  // Several calls of one client: the latest is the likeliest cause, and the answer reaches the right client anyway.
  if (clients.size === 1) {
    const latest = calls[calls.length - 1]!;
    return { forwardId: latest, session: sessionOf(latest)! };
  }
  return 'ambiguous';
}

export class ClientRelay {
  private nextTicket = 0;
  private readonly waiting = new Map<number, Waiting>();

  constructor(private readonly options: ClientRelayOptions) {}

  /** `notify` reaches the connection the request came from: the client's progress on it goes there. */
  request(connectionSession: string | null, method: string, params: Record<string, unknown>, contexts: string[], signal: AbortSignal, notify?: Notify): Promise<ServerRequestAnswer> {
    if (requiredCapability(method) === undefined) {
      return Promise.resolve({ error: { code: JSONRPC.METHOD_NOT_FOUND, message: `Method not found: coffer relays only ${Object.keys(RELAYED_CLIENT_REQUESTS).join(', ')} to clients` } });
    }
    if (nestsDeeperThan(params, MAX_DEPTH)) {
      const message = `the params of ${method} nest deeper than ${MAX_DEPTH} levels: coffer refused to relay it`;
      this.options.note(message);
      return Promise.resolve({ error: { code: JSONRPC.INVALID_PARAMS, message } });
    }
    const target = attribute(connectionSession, contexts, (id) => this.options.sessionOf(id), this.options.clientOf && ((id) => this.options.clientOf!(id)));
    if (target === 'ambiguous') {
      return Promise.resolve(refusal(`coffer cannot tell which client ${method} is for: calls of several clients are in flight on this shared connection; set session_mode "per_session" for server '${this.options.server}'`));
    }
    if (target.forwardId === null && target.session === null) {
      return Promise.resolve(refusal(`coffer relays ${method} only to the client whose call caused it, and no call is in flight${method === 'roots/list' ? "; roots need session_mode \"per_session\"" : ''}`));
    }
    const ticket = ++this.nextTicket;
    const release = target.forwardId === null ? undefined : this.options.hold?.(target.forwardId);
    const timeoutMs = (target.forwardId === null ? undefined : this.options.answerTimeoutOf?.(target.forwardId)) ?? this.options.timeoutMs;
    return new Promise<ServerRequestAnswer>((resolve) => {
      const finish = (answer: ServerRequestAnswer, cancelled: string | null): void => {
        if (!this.waiting.delete(ticket)) return;
        clearTimeout(timer);
        release?.();
        signal.removeEventListener('abort', onAbort);
        if (cancelled !== null) this.options.emit({ type: 'client_request_cancelled', server: this.options.server, ticket, reason: cancelled });
        resolve(answer);
      };
      const onAbort = (): void => finish(refusal('cancelled by the server'), String(signal.reason ?? 'cancelled by the server'));
      const timer = setTimeout(() => finish(refusal(`the client did not answer ${method} within ${timeoutMs} ms`), 'timed out'), timeoutMs);
      this.waiting.set(ticket, { resolve: (answer) => finish(answer, null), ...(notify ? { notify } : {}) });
      signal.addEventListener('abort', onAbort, { once: true });
      this.options.emit({ type: 'client_request', server: this.options.server, ticket, target, method, params });
    });
  }

  notification(connectionSession: string | null, method: string, params: unknown, contexts: string[]): void {
    if (nestsDeeperThan(params, MAX_DEPTH)) return this.options.note(`${method.slice(0, 200)}: params nest deeper than ${MAX_DEPTH} levels, dropped`);
    const attributed = attribute(connectionSession, contexts, (id) => this.options.sessionOf(id), this.options.clientOf && ((id) => this.options.clientOf!(id)));
    // Ambiguous: no particular client (the router sends it to whoever asked for such messages).
    const target = attributed === 'ambiguous' ? { forwardId: null, session: connectionSession } : attributed;
    this.options.emit({ type: 'notification', server: this.options.server, target, method, params: isObject(params) ? params : {} });
  }

  /** The client's progress on a request still waiting for its answer; dropped once answered. */
  progress(ticket: number, params: Record<string, unknown>): void {
    void this.waiting.get(ticket)?.notify?.('notifications/progress', params).catch(() => undefined);
  }

  answer(ticket: number, outcome: ForwardOutcome): void {
    this.waiting.get(ticket)?.resolve(outcome.ok ? { result: outcome.result } : { error: outcome.error });
  }

  /** Connection gone or actor stopping: nobody is left to send answers to. */
  abandonAll(): void {
    for (const waiting of [...this.waiting.values()]) waiting.resolve(refusal('connection closed'));
  }
}

function refusal(message: string): ServerRequestAnswer {
  return { error: { code: JSONRPC.INTERNAL_ERROR, message } };
}
