// One live MCP session with the upstream: an SDK Client over the configured
// transport. It turns every way a request can fail into a RequestFailure with
// a kind the actor can act on, and reports a session that ends on its own.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpError, ResultSchema, type JSONRPCMessage, type Progress, type ServerCapabilities } from '@modelcontextprotocol/sdk/types.js';
import type { JsonRpcErrorBody } from '../../src/protocol/errors.js';
import type { ServerConfig } from '../../src/protocol/server-config.js';
import type { ActorLog } from './log.js';
import { createTransport, type UpstreamTransport } from './transports.js';

const CLIENT_INFO = { name: 'coffer', version: '0.1.0' };
/** The SDK's own request timer is disabled (set beyond any real wait); Connection keeps the time itself. */
const NO_SDK_TIMEOUT = 2 ** 31 - 1;
/** A stdio child that ignores stdin EOF and SIGTERM is SIGKILLed by the SDK after ~4 s. */
const CLOSE_WAIT_MS = 5_000;
const PROBE_TIMEOUT_MS = 5_000;
const END_SESSION_WAIT_MS = 1_000;
/** A server printing logs on stdout yields one transport error per line: note at most one per interval. */
const ERROR_NOTE_INTERVAL_MS = 1_000;

/**
 * timeout: our deadline passed (never retried) · cancelled: the caller aborted ·
 * unavailable: the session is gone or unreachable · upstream: the upstream answered a JSON-RPC error.
 */
export type FailureKind = 'timeout' | 'cancelled' | 'unavailable' | 'upstream';

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

export interface ConnectionHooks {
  /** A ready session ended without close() being called (child exit, dead HTTP server). */
  onLost(reason: string): void;
  onNotification(method: string): void;
}

export interface RequestOptions {
  timeoutMs: number;
  signal?: AbortSignal;
  onprogress?: (progress: Progress) => void;
}

/** The SDK never needs to validate a tool's output here: coffer forwards raw results and does not call callTool. */
const NO_VALIDATION = {
  getValidator: () => (input: unknown) => ({ valid: true as const, data: input as never, errorMessage: undefined }),
};

/** An upstream result: ResultSchema is a loose object, so every field the upstream sent is kept. */
export type UpstreamResult = Record<string, unknown>;

function mcpErrorBody(error: McpError): JsonRpcErrorBody {
  // McpError prefixes the upstream's message; the downstream client gets the original.
  const message = error.message.replace(`MCP error ${error.code}: `, '');
  return error.data === undefined ? { code: error.code, message } : { code: error.code, message, data: error.data };
}

/** Waits for `promise` (its failure ignored) at most `ms`. */
async function withinMs(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const cap = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));
  await Promise.race([promise.catch(() => {}), cap]);
  clearTimeout(timer);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export class Connection {
  private ready = false;
  private ended = false;
  private closingOnPurpose = false;
  private lostReason: string | null = null;
  private probing = false;
  private protocol: string | null = null;
  private lastErrorNoteAt = 0;
  private suppressedErrors = 0;
  private readonly closed: Promise<void>;
  private markClosed!: () => void;

  private constructor(
    private readonly client: Client,
    private readonly upstream: UpstreamTransport,
    private readonly config: ServerConfig,
    private readonly log: ActorLog,
    private readonly hooks: ConnectionHooks,
  ) {
    this.closed = new Promise((resolve) => (this.markClosed = resolve));
  }

  /** Builds the transport and client; nothing is started until connect(). */
  static async create(config: ServerConfig, log: ActorLog, hooks: ConnectionHooks): Promise<Connection> {
    const upstream = await createTransport(config.transport, log);
    const client = new Client(CLIENT_INFO, { capabilities: {}, jsonSchemaValidator: NO_VALIDATION });
    const connection = new Connection(client, upstream, config, log, hooks);
    connection.wire();
    return connection;
  }

  /** Connects and initializes within connect_ms, or throws (and closes). */
  async connect(): Promise<void> {
    const limitMs = this.config.timeouts.connect_ms;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`connect + initialize took longer than ${limitMs} ms`)), limitMs);
    });
    try {
      await Promise.race([this.client.connect(this.upstream.transport, { timeout: limitMs }), deadline]);
    } catch (error) {
      void this.close();
      throw new Error(`connect failed: ${messageOf(error)}`);
    } finally {
      clearTimeout(timer);
    }
    this.ready = true;
  }

  private wire(): void {
    // Protocol.connect chains a handler set beforehand; the SDK keeps the negotiated version to itself.
    this.upstream.transport.onmessage = (message: JSONRPCMessage) => {
      if (this.protocol !== null || !('result' in message)) return;
      const version = (message.result as { protocolVersion?: unknown }).protocolVersion;
      if (typeof version === 'string') this.protocol = version;
    };
    this.client.onclose = () => this.handleClose();
    this.client.onerror = (error) => {
      this.noteError(messageOf(error));
      this.probe();
    };
    this.client.fallbackNotificationHandler = async (notification) => this.hooks.onNotification(notification.method);
  }

  get capabilities(): ServerCapabilities {
    return this.client.getServerCapabilities() ?? {};
  }

  get serverInfo(): { name: string; version: string } | null {
    const info = this.client.getServerVersion();
    return info ? { name: info.name, version: info.version } : null;
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

  async request(method: string, params: Record<string, unknown> | undefined, options: RequestOptions): Promise<UpstreamResult> {
    if (this.ended) throw new RequestFailure('unavailable', 'not connected');
    const abort = new AbortController();
    let cause: 'timeout' | 'cancelled' | null = null;
    const timer = setTimeout(() => {
      cause = 'timeout';
      abort.abort(new Error('timeout'));
    }, options.timeoutMs);
    const onCancel = (): void => {
      cause ??= 'cancelled';
      abort.abort(options.signal?.reason);
    };
    if (options.signal?.aborted) onCancel();
    else options.signal?.addEventListener('abort', onCancel, { once: true });
    try {
      const request = params === undefined ? { method } : { method, params };
      // The SDK types requests as its own union; coffer forwards any method the downstream client sent.
      return await this.client.request(request as Parameters<Client['request']>[0], ResultSchema, {
        signal: abort.signal,
        timeout: NO_SDK_TIMEOUT,
        onprogress: options.onprogress,
      });
    } catch (error) {
      throw this.classify(error, cause, method, options.timeoutMs);
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onCancel);
    }
  }

  private classify(error: unknown, cause: 'timeout' | 'cancelled' | null, method: string, timeoutMs: number): RequestFailure {
    if (cause === 'timeout') return new RequestFailure('timeout', `${method} got no answer within ${timeoutMs} ms`);
    if (cause === 'cancelled') return new RequestFailure('cancelled', `${method} was cancelled`);
    if (this.ended) return new RequestFailure('unavailable', `connection lost during ${method}`);
    if (error instanceof McpError) return new RequestFailure('upstream', error.message, mcpErrorBody(error));
    // A transport that failed to send (refused, reset, unknown session): check whether the session is still there.
    this.probe();
    return new RequestFailure('unavailable', `${method} failed: ${messageOf(error)}`);
  }

  private noteError(message: string): void {
    const now = Date.now();
    if (now - this.lastErrorNoteAt < ERROR_NOTE_INTERVAL_MS) {
      this.suppressedErrors += 1;
      return;
    }
    const suppressed = this.suppressedErrors > 0 ? ` (${this.suppressedErrors} more since the last note)` : '';
    this.log.note(`transport error: ${message}${suppressed}`);
    this.lastErrorNoteAt = now;
    this.suppressedErrors = 0;
  }

  /**
   * HTTP transports have no connection whose end we would see; after a
   * transport error a ping tells whether the session is still usable.
   */
  private probe(): void {
    if (this.probing || this.ended || !this.ready || this.config.transport.type === 'stdio') return;
    this.probing = true;
    this.client
      .ping({ timeout: Math.min(PROBE_TIMEOUT_MS, this.config.timeouts.connect_ms) })
      .catch((error: unknown) => {
        if (this.ended) return;
        this.lostReason = `upstream unreachable: ${messageOf(error)}`;
        void this.client.close();
      })
      .finally(() => (this.probing = false));
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
      if (this.ready && this.upstream.endSession) await withinMs(this.upstream.endSession(), END_SESSION_WAIT_MS);
      void this.client.close().catch(() => {});
    }
    await withinMs(this.closed, CLOSE_WAIT_MS);
  }
}
