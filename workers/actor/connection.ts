// One live MCP session with the upstream: our own JSON-RPC session over the
// configured transport (no SDK Client, no schema validation: results are
// returned exactly as parsed). It turns every way a request can fail into a
// RequestFailure with a kind the actor can act on, and reports a session that
// ends on its own.
import type { Progress, ServerCapabilities } from '@modelcontextprotocol/sdk/types.js';
import { JSONRPC, messageOf, type JsonRpcErrorBody } from '../../src/protocol/errors.js';
import type { ServerConfig } from '../../src/protocol/server-config.js';
import { VERSION } from '../../src/version.js';
import { JsonRpcSession, ProtocolNoise, RpcError, type ServerRequestAnswer } from './jsonrpc-session.js';
import { UpstreamAuthError, type HttpAuth } from './http-auth.js';
import type { Era } from './era-negotiation.js';
import { Cancel, type CancelSignal } from '../../src/protocol/cancel.js';
import { Deadline } from './deadline.js';
import { handshake } from './handshake.js';
import { InputRequiredError, ProbeExitedError, type ModernSession } from './modern-session.js';
import { throttledNote, type ActorLog } from './log.js';
import { createTransport, type UpstreamTransport } from './transports.js';

const CLIENT_INFO = { name: 'coffer', version: VERSION };
/** A stdio child that ignores stdin EOF and SIGTERM is SIGKILLed after ~4 s. */
const CLOSE_WAIT_MS = 5_000;
const PROBE_TIMEOUT_MS = 5_000;
const END_SESSION_WAIT_MS = 1_000;
/** A server printing logs on stdout yields one transport error per line (a slow one, a late answer per timed-out call): a note of each kind at most once per interval. */
const NOTE_INTERVAL_MS = 1_000;

/**
 * timeout: our deadline passed (never retried) · cancelled: the caller aborted ·
 * unavailable: the session is gone or unreachable · upstream: the upstream answered a JSON-RPC error ·
 * auth: the upstream wants a sign-in (or a wider scope) first.
 */
export type FailureKind = 'timeout' | 'cancelled' | 'unavailable' | 'upstream' | 'auth';

export class RequestFailure extends Error {
  constructor(
    readonly kind: FailureKind,
    message: string,
    /** The upstream's own error, for kind `upstream`. */
    readonly rpc?: JsonRpcErrorBody,
  ) {
    super(message);
    this.name = 'RequestFailure';
  }
}

/** Sends a notification on one connection (the one a server request came from). */
export type Notify = (method: string, params: Record<string, unknown>) => Promise<void>;

export interface ConnectionHooks {
  /** A ready session ended without close() being called (child exit, dead HTTP server). */
  onLost(reason: string): void;
  /** `contexts`: the forwarded calls (their ids) the notification may belong to. */
  onNotification(method: string, params: unknown, contexts: string[]): void;
  /** A server→client request other than ping (sampling, elicitation, roots); without it they are refused with -32601. */
  onRequest?(method: string, params: Record<string, unknown>, contexts: string[], signal: AbortSignal, notify: Notify): Promise<ServerRequestAnswer>;
}

export interface RequestOptions {
  timeoutMs: number;
  signal?: CancelSignal;
  onprogress?: (progress: Progress) => void;
  /** The forwarded call's id, reported back with server messages that may belong to it. */
  context?: string;
  /** Keeps timeoutMs (and can stop its clock while the client is asked something); one of its own otherwise. */
  deadline?: Deadline;
  /** What the caller declared (a modern upstream is told what of it coffer can bridge). */
  clientCapabilities?: Record<string, unknown>;
  /** The log messages the caller wants (a modern upstream is told per request). */
  logLevel?: string;
}

/** An upstream result, exactly as the upstream sent it. */
export type UpstreamResult = Record<string, unknown>;

function rpcErrorBody(error: RpcError): JsonRpcErrorBody {
  const message = error.rpcMessage;
  return error.data === undefined ? { code: error.code, message } : { code: error.code, message, data: error.data };
}

/** Waits for `promise` (its failure ignored) at most `ms`. */
async function withinMs(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const cap = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));
  await Promise.race([promise.catch(() => {}), cap]);
  clearTimeout(timer);
}

export class Connection {
  private ready = false;
  private ended = false;
  private closingOnPurpose = false;
  private lostReason: string | null = null;
  private probing = false;
  private protocol: string | null = null;
  private serverCapabilities: ServerCapabilities | null = null;
  private server: { name: string; version: string } | null = null;
  private serverInstructions: string | null = null;
  /** Set once server/discover found a 2026-07-28-era upstream. */
  private modern: ModernSession | null = null;
  private readonly session: JsonRpcSession;
  private readonly closed: Promise<void>;
  private markClosed!: () => void;

  private constructor(
    private readonly upstream: UpstreamTransport,
    private readonly config: ServerConfig,
    private readonly log: ActorLog,
    private readonly hooks: ConnectionHooks,
    /** Declared at initialize: what coffer can relay to a client on this connection. */
    private readonly clientCapabilities: Record<string, unknown>,
    /** The era an earlier connection found (a verdict holds for the actor's lifetime): legacy skips the probe. */
    private readonly knownEra: Era | null,
  ) {
    this.closed = new Promise((resolve) => (this.markClosed = resolve));
    const noteError = throttledNote(log, 'warn', NOTE_INTERVAL_MS);
    const noteLate = throttledNote(log, 'info', NOTE_INTERVAL_MS);
    this.session = new JsonRpcSession(upstream.transport, {
      onNotification: (method, params, contexts) => {
        const seen = this.modern ? this.modern.notification(method, params) : { consumed: false as const, params };
        if (!seen.consumed) this.hooks.onNotification(method, seen.params, contexts);
      },
      ...(hooks.onRequest ? { onRequest: (method, params, contexts, signal) => hooks.onRequest!(method, params, contexts, signal, (m, p) => this.notify(m, p)) } : {}),
      onLate: (method) => noteLate(`the answer to ${method} came after coffer had given up on it: ignored`),
      onclose: () => this.handleClose(),
      onerror: (error) => {
        noteError(`transport error: ${messageOf(error)}`);
        // Noise, or a request refused before it went out (UPSTREAM_BUSY: a probe would be refused too), says nothing about the connection.
        if (!(error instanceof ProtocolNoise || error instanceof RpcError)) this.probe();
      },
    });
  }

  /** Builds the transport and session; nothing is started until connect(). */
  static async create(config: ServerConfig, log: ActorLog, hooks: ConnectionHooks, clientCapabilities: Record<string, unknown>, auth: HttpAuth | null = null, knownEra: Era | null = null): Promise<Connection> {
    const upstream = await createTransport(config.transport, log, auth);
    return new Connection(upstream, config, log, hooks, clientCapabilities, knownEra);
  }

  /** Connects and initializes within connect_ms, or throws (and closes). */
  async connect(): Promise<void> {
    const limitMs = this.config.timeouts.connect_ms;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`connect + initialize took longer than ${limitMs} ms`)), limitMs);
    });
    try {
      await Promise.race([this.handshake(), deadline]);
    } catch (error) {
      void this.close();
      if (error instanceof ProbeExitedError) throw error;
      throw new Error(`connect failed: ${messageOf(error)}`);
    } finally {
      clearTimeout(timer);
    }
    this.ready = true;
  }

  private async handshake(): Promise<void> {
    await this.session.start();
    const agreed = await handshake({
      session: this.session,
      upstream: this.upstream,
      config: this.config,
      log: this.log,
      clientInfo: CLIENT_INFO,
      clientCapabilities: this.clientCapabilities,
      knownEra: this.knownEra,
      ended: () => this.ended,
    });
    this.modern = agreed.modern;
    this.protocol = agreed.protocol;
    this.serverCapabilities = agreed.capabilities;
    this.server = agreed.serverInfo;
    this.serverInstructions = agreed.instructions;
  }

  /** 2026-07-28 era: opens the listen stream for list changes and subscribed resources (the shared connection's job). */
  startListening(): void {
    this.modern?.listen(this.capabilities as Record<string, unknown>, () => {
      // The stream was down: whatever changed meanwhile was not announced.
      for (const method of ['notifications/tools/list_changed', 'notifications/prompts/list_changed', 'notifications/resources/list_changed']) this.hooks.onNotification(method, undefined, []);
    });
  }

  get era(): Era | null {
    return this.protocol === null ? null : this.modern ? 'modern' : 'legacy';
  }

  get capabilities(): ServerCapabilities {
    return this.serverCapabilities ?? {};
  }

  get serverInfo(): { name: string; version: string } | null {
    return this.server;
  }

  get instructions(): string | null {
    return this.serverInstructions;
  }

  get protocolVersion(): string | null {
    return this.protocol;
  }

  get pid(): number | null {
    return this.ended ? null : this.upstream.pid();
  }

  get isOpen(): boolean {
    return !this.ended;
  }

  notify(method: string, params?: Record<string, unknown>): Promise<void> {
    return this.session.notify(method, params);
  }

  async request(method: string, params: Record<string, unknown> | undefined, options: RequestOptions): Promise<UpstreamResult> {
    if (this.ended) throw new RequestFailure('unavailable', 'not connected');
    if (this.modern) {
      const local = this.modern.answerLocally(method, params);
      if (local) return local;
      params = this.modern.envelope(params, options.clientCapabilities, options.logLevel);
    }
    const result = await this.send(method, params, options);
    if (!this.modern) return result;
    try {
      return this.modern.checkResult(method, result);
    } catch (error) {
      if (!(error instanceof InputRequiredError)) throw error;
      throw new RequestFailure('upstream', error.message, { code: JSONRPC.INTERNAL_ERROR, message: error.message, data: { code: 'UPSTREAM_INPUT_REQUIRED' } });
    }
  }

  private async send(method: string, params: Record<string, unknown> | undefined, options: RequestOptions): Promise<UpstreamResult> {
    const abort = new Cancel();
    let cause: 'timeout' | 'cancelled' | null = null;
    const deadline = options.deadline ?? new Deadline();
    deadline.arm(options.timeoutMs, () => {
      cause = 'timeout';
      abort.abort(new Error('timeout'));
    });
    const onCancel = (): void => {
      cause ??= 'cancelled';
      abort.abort(options.signal?.reason);
    };
    if (options.signal?.aborted) onCancel();
    else options.signal?.addEventListener('abort', onCancel, { once: true });
    const sentAt = Date.now();
    try {
      return await this.session.request(method, params, {
        signal: abort,
        onprogress: options.onprogress as ((p: { progress: number; total?: number; message?: string }) => void) | undefined,
        context: options.context,
      });
    } catch (error) {
      throw this.classify(error, cause, method, options.timeoutMs, sentAt);
    } finally {
      deadline.disarm();
      options.signal?.removeEventListener('abort', onCancel);
    }
  }

  private classify(error: unknown, cause: 'timeout' | 'cancelled' | null, method: string, timeoutMs: number, sentAt: number): RequestFailure {
    if (cause === 'timeout') {
      // Nothing at all came back since this request went out: the process may have stopped (a stdio one is
      // still "open"), so a ping tells. A session that still sends anything is merely slow at this request.
      if (this.session.lastReceivedAt < sentAt) this.probe(true);
      return new RequestFailure('timeout', `${method} got no answer within ${timeoutMs} ms`);
    }
    if (cause === 'cancelled') return new RequestFailure('cancelled', `${method} was cancelled`);
    if (this.ended) return new RequestFailure('unavailable', `connection lost during ${method}`);
    if (error instanceof RpcError) return new RequestFailure('upstream', error.message, rpcErrorBody(error));
    if (error instanceof UpstreamAuthError) return new RequestFailure('auth', error.message);
    // A transport that failed to send (refused, reset, unknown session): check whether the session is still there.
    this.probe();
    return new RequestFailure('unavailable', `${method} failed: ${messageOf(error)}`);
  }

  /**
   * HTTP transports have no connection whose end we would see; after a
   * transport error (or, on any transport, a request that timed out) a ping
   * tells whether the session is still usable. A failed ping ends it as lost,
   * so the supervisor reconnects.
   */
  private probe(afterTimeout = false): void {
    if (this.probing || this.ended || !this.ready || (this.config.transport.type === 'stdio' && !afterTimeout)) return;
    this.probing = true;
    const limitMs = Math.min(PROBE_TIMEOUT_MS, this.config.timeouts.connect_ms);
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(new Error(`Request timed out after ${limitMs} ms`)), limitMs);
    (this.modern ? this.modern.discover(abort.signal) : this.session.ping({ signal: abort.signal }))
      .catch((error: unknown) => {
        if (this.ended) return;
        this.lostReason = `upstream unreachable: ${messageOf(error)}`;
        void this.session.close();
      })
      .finally(() => {
        clearTimeout(timer);
        this.probing = false;
      });
  }

  private handleClose(): void {
    if (this.ended) return;
    this.ended = true;
    this.markClosed();
    if (this.ready && !this.closingOnPurpose) this.hooks.onLost(this.lostReason ?? 'connection closed');
  }

  /** Ends the session on purpose (no onLost); for stdio resolves once the child is gone. */
  async close(): Promise<void> {
    if (!this.closingOnPurpose && !this.ended) {
      this.closingOnPurpose = true;
      this.modern?.close();
      if (this.ready && this.upstream.endSession) await withinMs(this.upstream.endSession(), END_SESSION_WAIT_MS);
      void this.session.close().catch(() => {});
    }
    await withinMs(this.closed, CLOSE_WAIT_MS);
  }
}
