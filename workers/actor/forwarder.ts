// Forwards one downstream request to the upstream and returns its result or
// error unchanged; coffer's own failures become JSON-RPC errors with data.code.
import type { ForwardOutcome, ForwardRequest, Progress } from '../../src/protocol/actor.js';
import { JSONRPC, type JsonRpcErrorBody, messageOf } from '../../src/protocol/errors.js';
import type { ServerConfig } from '../../src/protocol/server-config.js';
import { Cancel } from '../../src/protocol/cancel.js';
import { RequestFailure } from './connection.js';
import { Deadline } from './deadline.js';
import { MAX_DEPTH } from '../../src/protocol/message-limit.js';
import { nestsDeeperThan } from '../../src/protocol/nesting.js';
import type { Lease, SessionConnections } from './session-connections.js';
import type { Supervisor } from './supervisor.js';

/** The shared connection is the supervisor's: a call holds nothing to give back. */
const keepShared = (): void => undefined;

interface InFlight {
  abort: Cancel;
  deadline: Deadline;
  /** The downstream session that made the call. */
  session: string | undefined;
  /** The client behind that session (a modern caller's credential; else the session). */
  client: string | undefined;
  answerTimeoutMs: number | undefined;
}

export class Forwarder {
  private readonly inFlight = new Map<string, InFlight>();

  constructor(
    private readonly config: ServerConfig,
    private readonly supervisor: Supervisor,
    /** per_session mode: calls of a client go over that client's own connection. */
    private readonly sessions: SessionConnections | null,
  ) {}

  /** The client session of a call in flight (to attribute the upstream's requests during it). */
  sessionOf(id: string): string | undefined {
    return this.inFlight.get(id)?.session;
  }

  /** How long the client of a call in flight may take to answer the upstream's requests, if the call says. */
  answerTimeoutOf(id: string): number | undefined {
    return this.inFlight.get(id)?.answerTimeoutMs;
  }

  /** Who made a call in flight: calls of one client can share a question's attribution. */
  clientOf(id: string): string | undefined {
    return this.inFlight.get(id)?.client;
  }

  /** Stops the time limit of a call in flight while its client is asked something; the release restarts it. */
  hold(id: string): () => void {
    return this.inFlight.get(id)?.deadline.hold() ?? (() => undefined);
  }

  /** `onProgress` gets the upstream's progress when `req.progress` asked for it. */
  async forward(req: ForwardRequest, onProgress: (progress: Progress) => void): Promise<ForwardOutcome> {
    // A per_session client's log level is kept for its connection: setting it never opens one (a child process, for stdio).
    if (req.method === 'logging/setLevel' && this.sessions && req.client) {
      this.sessions.rememberLogLevel(req.client.session, req.params.level);
      if (!this.sessions.current(req.client.session)) return { ok: true, result: {} };
    }
    // Registered before the connection is there, so a cancel (or shutdown) while it opens is not lost.
    const abort = new Cancel();
    const entry: InFlight = { abort, deadline: new Deadline(), session: req.client?.session, client: req.client?.caller ?? req.client?.session, answerTimeoutMs: req.answerTimeoutMs };
    this.inFlight.set(req.id, entry);
    let lease: Lease | string | undefined;
    try {
      lease = await this.connectionFor(req);
      if (typeof lease === 'string') return this.unavailable(lease);
      // A call cancelled while its connection opened fails in request() as cancelled, without being sent.
      // The router already took the client's progressToken off; the session sets its own when progress is wanted.
      const result = await lease.connection.request(req.method, req.params, {
        timeoutMs: req.timeoutMs ?? this.config.timeouts.request_ms,
        signal: abort,
        deadline: entry.deadline,
        ...(req.client ? { clientCapabilities: req.client.capabilities } : {}),
        ...(req.client?.logLevel ? { logLevel: req.client.logLevel } : {}),
        context: req.id,
        // Only the fields the spec gives progress, with their types: nothing deep or odd crosses to the main thread.
        onprogress: req.progress
          ? ({ progress, total, message }) => {
              if (typeof progress !== 'number') return;
              onProgress({ progress, total: typeof total === 'number' ? total : undefined, message: typeof message === 'string' ? message : undefined });
            }
          : undefined,
      });
      return nestsDeeperThan(result, MAX_DEPTH) ? this.refused('result') : { ok: true, result };
    } catch (error) {
      if (!(error instanceof RequestFailure)) throw error;
      return this.failed(error);
    } finally {
      if (this.inFlight.get(req.id) === entry) this.inFlight.delete(req.id);
      if (typeof lease === 'object') lease.release();
    }
  }

  /** The connection for this call, or why there is none. */
  private async connectionFor(req: ForwardRequest): Promise<Lease | string> {
    if (this.sessions && req.client) {
      try {
        return await this.sessions.acquire(req.client);
      } catch (error) {
        return `upstream ${this.config.name}: could not open a connection for this client session: ${messageOf(error)}`;
      }
    }
    const shared = await this.supervisor.usable();
    return shared ? { connection: shared, release: keepShared } : this.supervisor.unavailableReason();
  }

  cancel(id: string, reason: string): void {
    this.inFlight.get(id)?.abort.abort(reason);
  }

  cancelAll(reason: string): void {
    for (const { abort } of this.inFlight.values()) abort.abort(reason);
  }

  private failed(failure: RequestFailure): ForwardOutcome {
    switch (failure.kind) {
      case 'upstream':
        if (nestsDeeperThan(failure.rpc, MAX_DEPTH)) return this.refused('error');
        return { ok: false, error: failure.rpc ?? { code: JSONRPC.INTERNAL_ERROR, message: failure.message } };
      case 'timeout':
        return this.error(JSONRPC.UPSTREAM_TIMEOUT, 'UPSTREAM_TIMEOUT', `${this.config.name}: ${failure.message}`);
      case 'unavailable':
        return this.error(JSONRPC.UPSTREAM_UNAVAILABLE, 'UPSTREAM_UNAVAILABLE', `${this.config.name}: ${failure.message}`);
      case 'cancelled':
        return { ok: false, error: { code: JSONRPC.REQUEST_CANCELLED, message: failure.message } };
      case 'auth':
        return this.error(JSONRPC.UPSTREAM_AUTH_REQUIRED, 'UPSTREAM_AUTH_REQUIRED', `${this.config.name}: ${failure.message}`);
    }
  }

  /** No connection: the supervisor tells whether a sign-in is what is missing. */
  private unavailable(reason: string): ForwardOutcome {
    const code = this.supervisor.unavailableCode();
    return this.error(JSONRPC[code], code, reason);
  }

  /** An answer that breaks the nesting policy fails this call only. */
  private refused(what: 'result' | 'error'): ForwardOutcome {
    const message = `${this.config.name}: the upstream's ${what} nests deeper than ${MAX_DEPTH} levels and was refused`;
    return this.error(JSONRPC.UPSTREAM_RESPONSE_INVALID, 'UPSTREAM_RESPONSE_INVALID', message);
  }

  private error(code: number, dataCode: 'UPSTREAM_TIMEOUT' | 'UPSTREAM_UNAVAILABLE' | 'UPSTREAM_RESPONSE_INVALID' | 'UPSTREAM_AUTH_REQUIRED', message: string): ForwardOutcome {
    const error: JsonRpcErrorBody = { code, message, data: { code: dataCode, server: this.config.name } };
    return { ok: false, error };
  }
}
