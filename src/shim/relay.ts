// The shim's relay: JSON-RPC messages pass unchanged between the client's stdio
// and the daemon's /mcp. What it adds is continuity across daemon restarts: a
// lost link is replaced by a new session that is re-initialised with the
// client's own `initialize`, and what could not be delivered is sent again.
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  isJSONRPCNotification,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  type JSONRPCErrorResponse,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { JSONRPC } from '../protocol/errors.js';

/** A ready daemon's /mcp; `identity` changes when the daemon is restarted. */
export interface DaemonEndpoint {
  mcpUrl: URL;
  /** Presented as `Authorization: Bearer` on every request to /mcp. */
  token: string;
  /** Changes when the daemon restarts or its token is rotated: the link is then made again. */
  identity: string;
}

export interface RelayOptions {
  /** The client side: the stdio server transport. */
  client: Transport;
  /** The ready daemon of this home, or null. */
  locate(): Promise<DaemonEndpoint | null>;
  /** Starts a daemon when none runs at start-up (never on reconnect: a `coffer daemon stop` is respected). */
  startDaemon(): Promise<void>;
  /** How long a request may wait for a daemon before it fails. */
  reconnectBoundMs: number;
  log(line: string): void;
}

interface Link {
  transport: StreamableHTTPClientTransport;
  generation: number;
  identity: string;
}

/** queued: waiting for a link · sending: POST under way · sent: accepted, answer awaited. */
interface Pending {
  request: JSONRPCRequest;
  phase: 'queued' | 'sending' | 'sent';
  generation: number;
  deadline?: NodeJS.Timeout;
}

/** Requests without side effects: sent again when the daemon vanished while they ran. */
const SAFE_TO_RESEND = new Set([
  'initialize',
  'ping',
  'tools/list',
  'prompts/list',
  'prompts/get',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'resources/subscribe',
  'resources/unsubscribe',
  'completion/complete',
  'logging/setLevel',
]);

const REINIT_ID_PREFIX = 'coffer-shim-reinit-';
const REINIT_TIMEOUT_MS = 30_000;
const RETRY_MIN_MS = 100;
const RETRY_MAX_MS = 2_000;

type Failure = 'undelivered' | 'lost' | 'rejected';

/** undelivered: certainly never processed · lost: may have been · rejected: the daemon answered with an HTTP error. */
function classify(error: unknown): Failure {
  if (error instanceof StreamableHTTPError) {
    // 404: the session is unknown (a restarted daemon); 503: starting or stopping.
    return error.code === 404 || error.code === 503 ? 'undelivered' : 'rejected';
  }
  const cause = (error as { cause?: { code?: unknown } } | undefined)?.cause?.code;
  return cause === 'ECONNREFUSED' ? 'undelivered' : 'lost';
}

function errorResponse(id: RequestId, code: number, message: string, data?: unknown): JSONRPCErrorResponse {
  return { jsonrpc: '2.0', id, error: data === undefined ? { code, message } : { code, message, data } };
}

function unreachable(id: RequestId, message: string, reason: string): JSONRPCErrorResponse {
  return errorResponse(id, JSONRPC.UPSTREAM_UNAVAILABLE, `DAEMON_UNREACHABLE: ${message}`, { code: 'UPSTREAM_UNAVAILABLE', reason });
}

/** The daemon's own JSON-RPC error out of a rejected POST when there is one, else a generic one. */
function rejection(id: RequestId, error: StreamableHTTPError): JSONRPCErrorResponse {
  try {
    const body = JSON.parse(error.message.slice(error.message.indexOf('{'))) as { error?: { code?: unknown; message?: unknown; data?: unknown } };
    if (typeof body.error?.code === 'number' && typeof body.error.message === 'string') {
      return errorResponse(id, body.error.code, body.error.message, body.error.data);
    }
  } catch {
    // not JSON
  }
  return errorResponse(id, JSONRPC.INTERNAL_ERROR, `the coffer daemon rejected the request (HTTP ${error.code}): ${error.message}`);
}

export class Relay {
  private link: Link | null = null;
  private generation = 0;
  /** Messages waiting for a link, in arrival order. */
  private queue: JSONRPCMessage[] = [];
  /** Client requests not answered yet. */
  private readonly pending = new Map<RequestId, Pending>();
  /** Daemon→client requests awaiting the client's answer, with the link generation that asked. */
  private readonly serverRequests = new Map<RequestId, number>();
  /** The client's `initialize`, once answered: replayed on every later link. */
  private initialize: JSONRPCRequest | null = null;
  private initializedSeen = false;
  private readonly reinitWaiters = new Map<string, (message: JSONRPCMessage) => void>();
  private connecting = false;
  private startingDaemon = false;
  private closed = false;

  constructor(private readonly options: RelayOptions) {}

  async start(): Promise<void> {
    const { client } = this.options;
    client.onmessage = (message) => this.fromClient(message);
    client.onerror = (error) => this.options.log(`stdio: ${error.message}`);
    await client.start();
    this.connect(true);
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const entry of this.pending.values()) clearTimeout(entry.deadline);
    const link = this.link;
    this.link = null;
    if (link) {
      // Polite: frees the daemon-side session at once instead of at its idle timeout; a hung daemon does not hold us.
      await Promise.race([link.transport.terminateSession().catch(() => undefined), sleep(1_000)]);
      await link.transport.close();
    }
  }

  private fromClient(message: JSONRPCMessage): void {
    if (isJSONRPCRequest(message)) {
      this.pending.set(message.id, { request: message, phase: 'queued', generation: 0 });
    } else if (isJSONRPCNotification(message)) {
      if (message.method === 'notifications/initialized') this.initializedSeen = true;
    } else if (message.id !== undefined) {
      // The client's answer to a daemon request: only the session that asked can use it.
      const asker = this.serverRequests.get(message.id);
      this.serverRequests.delete(message.id);
      if (asker === undefined || asker !== this.link?.generation) {
        this.options.log(`dropped the client's answer ${String(message.id)}: the daemon session that asked is gone`);
        return;
      }
    }
    this.deliver(message);
  }

  private fromDaemon(link: Link, message: JSONRPCMessage): void {
    if (isJSONRPCRequest(message)) {
      this.serverRequests.set(message.id, link.generation);
    } else if (!isJSONRPCNotification(message) && message.id !== undefined) {
      const waiter = typeof message.id === 'string' ? this.reinitWaiters.get(message.id) : undefined;
      if (waiter) return waiter(message);
      const entry = this.pending.get(message.id);
      if (!entry) {
        this.options.log(`dropped an answer to ${String(message.id)}: no such request is pending`);
        return;
      }
      this.settle(entry);
      if (entry.request.method === 'initialize' && isJSONRPCResultResponse(message)) {
        this.initialize = entry.request;
        link.transport.setProtocolVersion(String(message.result.protocolVersion));
      }
    }
    this.toClient(message);
  }

  private toClient(message: JSONRPCMessage): void {
    this.options.client.send(message).catch((error: Error) => this.options.log(`stdout: ${error.message}`));
  }

  private settle(entry: Pending): void {
    clearTimeout(entry.deadline);
    this.pending.delete(entry.request.id);
  }

  private fail(entry: Pending, response: JSONRPCErrorResponse): void {
    this.settle(entry);
    this.queue = this.queue.filter((message) => message !== entry.request);
    this.toClient(response);
  }

  private deliver(message: JSONRPCMessage): void {
    if (this.link) return this.sendOn(this.link, message);
    this.queue.push(message);
    const entry = isJSONRPCRequest(message) ? this.pending.get(message.id) : undefined;
    if (entry) {
      entry.phase = 'queued';
      clearTimeout(entry.deadline);
      entry.deadline = undefined;
      // While a daemon is being started, its own start timeout bounds the wait.
      if (!this.startingDaemon) this.armDeadline(entry);
    }
    this.connect(false);
  }

  private armDeadline(entry: Pending): void {
    entry.deadline = setTimeout(() => {
      const seconds = Math.round(this.options.reconnectBoundMs / 1000);
      this.fail(entry, unreachable(entry.request.id, `no coffer daemon answered within ${seconds} s; start one with \`coffer daemon start\``, 'DAEMON_UNREACHABLE'));
    }, this.options.reconnectBoundMs);
  }

  private sendOn(link: Link, message: JSONRPCMessage): void {
    const entry = isJSONRPCRequest(message) ? this.pending.get(message.id) : undefined;
    if (entry) {
      clearTimeout(entry.deadline);
      entry.phase = 'sending';
      entry.generation = link.generation;
    }
    link.transport.send(message).then(
      () => {
        if (entry?.phase === 'sending') entry.phase = 'sent';
      },
      (error: unknown) => this.sendFailed(link, message, entry, error),
    );
  }

  private sendFailed(link: Link, message: JSONRPCMessage, entry: Pending | undefined, error: unknown): void {
    const failure = classify(error);
    this.options.log(`send ${describe(message)} failed (${failure}): ${(error as Error).message}`);
    if (failure === 'rejected') return void this.rejected(link, message, entry, error as StreamableHTTPError);
    this.linkLost(link, 'the daemon did not take a message');
    if (entry && this.pending.get(entry.request.id) !== entry) return; // answered or failed meanwhile
    if (failure === 'undelivered' || !entry) this.redeliver(message);
    else this.lostInFlight(entry);
  }

  /** An HTTP error answer is final, unless it came from a daemon that has since been replaced (which may answer 400 to a session it never knew). */
  private async rejected(link: Link, message: JSONRPCMessage, entry: Pending | undefined, error: StreamableHTTPError): Promise<void> {
    await this.checkLink(link);
    if (entry && this.pending.get(entry.request.id) !== entry) return; // answered or failed meanwhile
    if (link !== this.link) return this.redeliver(message);
    if (entry) this.fail(entry, rejection(entry.request.id, error));
  }

  private redeliver(message: JSONRPCMessage): void {
    // Answers to daemon requests belong to the old session; the replay on the new link sends `initialized`.
    if (!isJSONRPCRequest(message) && !isJSONRPCNotification(message)) return;
    if (isJSONRPCNotification(message) && message.method === 'notifications/initialized' && this.initialize) return;
    this.deliver(message);
  }

  private lostInFlight(entry: Pending): void {
    if (SAFE_TO_RESEND.has(entry.request.method)) return this.deliver(entry.request);
    this.fail(
      entry,
      unreachable(entry.request.id, 'the coffer daemon went away while this request was running; it was not resent because it may have taken effect', 'DAEMON_CONNECTION_LOST'),
    );
  }

  /** The link is dead: drop it, settle what was in flight on it, and look for the daemon again. */
  private linkLost(link: Link, why: string): void {
    if (link !== this.link) return;
    this.options.log(`link ${link.generation} to ${link.identity} lost: ${why}`);
    this.link = null;
    link.transport.onerror = undefined;
    link.transport.onclose = undefined;
    // Aborts its streams; requests still being POSTed end up in sendFailed.
    void link.transport.close();
    for (const entry of [...this.pending.values()]) {
      if (entry.generation === link.generation && entry.phase === 'sent') this.lostInFlight(entry);
    }
    for (const [id, generation] of this.serverRequests) if (generation === link.generation) this.serverRequests.delete(id);
    this.connect(false);
  }

  /** A stream error: the daemon may be gone or restarted, or only one stream broke. */
  private async checkLink(link: Link): Promise<void> {
    const endpoint = await this.options.locate().catch(() => null);
    if (endpoint?.identity !== link.identity) this.linkLost(link, endpoint ? 'the daemon was restarted' : 'the daemon is gone');
  }

  /** One loop at a time, until a link is up; polls daemon.json with a capped backoff. */
  private connect(mayStartDaemon: boolean): void {
    if (this.connecting || this.closed || this.link) return;
    this.connecting = true;
    void (async () => {
      let delay = RETRY_MIN_MS;
      while (!this.closed && !this.link) {
        try {
          let endpoint = await this.options.locate();
          if (!endpoint && mayStartDaemon) {
            mayStartDaemon = false;
            endpoint = await this.startDaemon();
          }
          if (endpoint) await this.establish(endpoint);
        } catch (error) {
          this.options.log(`connecting: ${(error as Error).message}`);
        }
        if (this.link) break;
        await sleep(delay);
        delay = Math.min(delay * 2, RETRY_MAX_MS);
      }
      this.connecting = false;
    })();
  }

  private async startDaemon(): Promise<DaemonEndpoint | null> {
    this.options.log('no daemon is running: starting one');
    this.startingDaemon = true;
    try {
      await this.options.startDaemon();
      for (const entry of this.pending.values()) if (entry.phase === 'queued' && !entry.deadline) this.armDeadline(entry);
    } catch (error) {
      const reason = (error as Error).message.split('\n')[0]!;
      this.options.log(`starting the daemon failed: ${(error as Error).message}`);
      // Nobody is going to start one for these: fail them now, not at the bound.
      for (const entry of [...this.pending.values()]) {
        if (entry.phase === 'queued') this.fail(entry, unreachable(entry.request.id, `could not start the coffer daemon: ${reason}`, 'DAEMON_UNREACHABLE'));
      }
      return null;
    } finally {
      this.startingDaemon = false;
    }
    return this.options.locate();
  }

  /** Opens a session, replays the client's handshake (answer swallowed), then flushes the queue. */
  private async establish(endpoint: DaemonEndpoint): Promise<void> {
    const link: Link = {
      transport: new StreamableHTTPClientTransport(endpoint.mcpUrl, {
        requestInit: { headers: { authorization: `Bearer ${endpoint.token}` } },
        // The shim itself reconnects; the transport's own retries would only hit a dead session.
        reconnectionOptions: { maxRetries: 0, initialReconnectionDelay: 1_000, maxReconnectionDelay: 1_000, reconnectionDelayGrowFactor: 1 },
      }),
      generation: ++this.generation,
      identity: endpoint.identity,
    };
    link.transport.onmessage = (message) => this.fromDaemon(link, message);
    link.transport.onerror = (error) => {
      if (link !== this.link) return;
      this.options.log(`link ${link.generation}: ${error.message}`);
      void this.checkLink(link);
    };
    try {
      await link.transport.start();
      if (this.initialize) await this.replayHandshake(link, this.initialize);
    } catch (error) {
      await link.transport.close();
      throw error;
    }
    this.link = link;
    this.options.log(`link ${link.generation} to ${link.identity} open (session ${link.transport.sessionId ?? 'none'})`);
    const queued = this.queue;
    this.queue = [];
    for (const message of queued) this.redeliver(message);
  }

  private async replayHandshake(link: Link, initialize: JSONRPCRequest): Promise<void> {
    const id = `${REINIT_ID_PREFIX}${link.generation}`;
    const answered = new Promise<JSONRPCMessage>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no answer to the replayed initialize')), REINIT_TIMEOUT_MS);
      this.reinitWaiters.set(id, (message) => {
        clearTimeout(timer);
        resolve(message);
      });
    });
    try {
      await link.transport.send({ ...initialize, id });
      const answer = await answered;
      if (!isJSONRPCResultResponse(answer)) throw new Error(`the replayed initialize failed: ${JSON.stringify(answer)}`);
      link.transport.setProtocolVersion(String(answer.result.protocolVersion));
      if (this.initializedSeen) await link.transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    } finally {
      this.reinitWaiters.delete(id);
    }
  }
}

function describe(message: JSONRPCMessage): string {
  if (isJSONRPCRequest(message)) return `${message.method} #${String(message.id)}`;
  if (isJSONRPCNotification(message)) return message.method;
  return `answer #${String(message.id)}`;
}
