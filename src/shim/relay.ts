// The shim's relay: JSON-RPC messages pass unchanged between the client's stdio
// and the daemon's /mcp, in either era (era-route.ts): a 2025-11-25 client's
// through one Streamable HTTP session, each 2026-07-28 request as a POST of
// its own (modern-post.ts), cancelled by closing it. What it adds is
// continuity across daemon restarts: a lost link is replaced by a new session
// (link-lifecycle.ts) that is re-initialised with the client's own
// `initialize` (handshake.ts), and what could not be delivered is sent again
// (request-ledger.ts says what is owed and what is safe to resend). This
// module routes messages and decides, for each failed send, whether to
// resend, queue or fail it.
import type { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { isJSONRPCNotification, isJSONRPCRequest, type JSONRPCErrorResponse, type JSONRPCMessage, type JSONRPCNotification } from '@modelcontextprotocol/sdk/types.js';
import { DaemonStarter } from './daemon-start.js';
import { routeOf } from './era-route.js';
import { HandshakeReplay } from './handshake.js';
import { LinkLifecycle, type DaemonEndpoint, type Link } from './link-lifecycle.js';
import { ToolHeaderParams } from '../protocol/mcp-param-headers.js';
import { postModern } from './modern-post.js';
import { classify, describe, idInUse, rejection, unreachable, unreadable, type UnreadableAnswer } from './relay-answers.js';
import { mayResend, RequestLedger, type Pending } from './request-ledger.js';

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

export class Relay {
  /** Messages waiting for a link, in arrival order. */
  private queue: JSONRPCMessage[] = [];
  private readonly ledger = new RequestLedger();
  private readonly handshake = new HandshakeReplay();
  /** What the modern tools/list answers relayed to the client declared: the Mcp-Param-* headers its calls carry. */
  private readonly toolHeaders = new ToolHeaderParams();
  private readonly starter: DaemonStarter;
  private readonly links: LinkLifecycle;

  constructor(private readonly options: RelayOptions) {
    this.starter = new DaemonStarter(options, {
      started: () => {
        for (const entry of this.ledger.entries()) if (entry.phase === 'queued' && !entry.deadline) this.armDeadline(entry);
      },
      failed: (reason) => {
        for (const entry of this.ledger.entries()) {
          if (entry.phase === 'queued') this.fail(entry, unreachable(entry.request.id, `could not start the coffer daemon: ${reason}`, 'DAEMON_UNREACHABLE'));
        }
      },
    });
    this.links = new LinkLifecycle(options, this.starter, this.handshake, {
      message: (link, message) => this.fromDaemon(link, message),
      up: () => {
        const queued = this.queue;
        this.queue = [];
        for (const message of queued) this.redeliver(message);
      },
      lost: (link) => {
        for (const entry of this.ledger.entries()) {
          if (entry.generation === link.generation && entry.phase === 'sent') this.lostInFlight(link, entry);
        }
        this.ledger.forgetGeneration(link.generation);
      },
    });
  }

  async start(): Promise<void> {
    const { client } = this.options;
    client.onmessage = (message) => this.fromClient(message);
    client.onerror = (error) => this.options.log(`stdio: ${error.message}`);
    await client.start();
    this.links.connect(true);
  }

  async close(): Promise<void> {
    this.ledger.close();
    await this.links.close();
  }

  private fromClient(message: JSONRPCMessage): void {
    const route = routeOf(message);
    if (route.era === 'refused') {
      if (isJSONRPCRequest(message)) this.toClient({ jsonrpc: '2.0', id: message.id, error: route.error });
      else this.options.log(`dropped ${describe(message)}: ${route.error.message}`);
      return;
    }
    if (isJSONRPCRequest(message)) {
      // Answers find their request by id: a reused one would take the first request's entry, whose answer then reaches no one.
      if (this.ledger.get(message.id)) return this.toClient(idInUse(message.id));
      this.ledger.track(message, route.era === 'modern' ? { revision: route.revision } : undefined);
    } else if (isJSONRPCNotification(message)) {
      if (this.cancelledModern(message)) return;
      // No other client notification means anything in that era (/mcp answers it 202 and drops it).
      if (route.era === 'modern') return;
      this.handshake.clientNotified(message.method);
    } else if (message.id !== undefined) {
      // The client's answer to a daemon request: only the session that asked can use it.
      const asker = this.ledger.takeAsker(message.id);
      if (asker === undefined || asker !== this.links.current?.generation) {
        this.options.log(`dropped the client's answer ${String(message.id)}: the daemon session that asked is gone, or it cancelled the request`);
        return;
      }
    }
    this.deliver(message);
  }

  private fromDaemon(link: Link, message: JSONRPCMessage): void {
    if (isJSONRPCRequest(message)) {
      this.ledger.serverAsked(message.id, link.generation);
    } else if (isJSONRPCNotification(message)) {
      // A request the daemon cancelled is owed nothing: a client that never answers it leaves no record behind.
      const id = message.method === 'notifications/cancelled' ? message.params?.requestId : undefined;
      if (typeof id === 'string' || typeof id === 'number') this.ledger.serverCancelled(id, link.generation);
    } else if (message.id !== undefined) {
      if (this.handshake.claim(message)) return;
      const entry = this.ledger.get(message.id);
      if (!entry) {
        this.options.log(`dropped an answer to ${String(message.id)}: no such request is pending`);
        return;
      }
      this.ledger.settle(entry);
      this.handshake.answered(entry.request, message, link.transport);
    }
    this.toClient(message);
  }

  private toClient(message: JSONRPCMessage): void {
    this.options.client.send(message).catch((error: Error) => this.options.log(`stdout: ${error.message}`));
  }

  private fail(entry: Pending, response: JSONRPCErrorResponse): void {
    this.drop(entry);
    this.toClient(response);
  }

  private drop(entry: Pending): void {
    this.ledger.settle(entry);
    this.queue = this.queue.filter((message) => message !== entry.request);
  }

  /** A 2026-07-28-era request is cancelled by closing its POST (the daemon then cancels it); true when `notification` did that. */
  private cancelledModern(notification: JSONRPCNotification): boolean {
    if (notification.method !== 'notifications/cancelled') return false;
    const id = notification.params?.requestId;
    const entry = typeof id === 'string' || typeof id === 'number' ? this.ledger.get(id) : undefined;
    if (!entry?.modern) return false;
    entry.modern.abort?.abort();
    this.drop(entry);
    return true;
  }

  private deliver(message: JSONRPCMessage): void {
    const link = this.links.current;
    if (link) return this.sendOn(link, message);
    this.queue.push(message);
    const entry = isJSONRPCRequest(message) ? this.ledger.get(message.id) : undefined;
    if (entry) {
      entry.phase = 'queued';
      clearTimeout(entry.deadline);
      entry.deadline = undefined;
      // While a daemon is being started, its own start timeout bounds the wait.
      if (!this.starter.starting) this.armDeadline(entry);
    }
    this.links.connect(false);
  }

  private armDeadline(entry: Pending): void {
    this.ledger.arm(entry, this.options.reconnectBoundMs, () => {
      const seconds = Math.round(this.options.reconnectBoundMs / 1000);
      this.fail(entry, unreachable(entry.request.id, `no coffer daemon answered within ${seconds} s; start one with \`coffer daemon start\``, 'DAEMON_UNREACHABLE'));
    });
  }

  private sendOn(link: Link, message: JSONRPCMessage): void {
    const entry = isJSONRPCRequest(message) ? this.ledger.get(message.id) : undefined;
    if (entry) {
      clearTimeout(entry.deadline);
      entry.phase = 'sending';
      entry.generation = link.generation;
      if (entry.modern) return this.postOn(link, entry, entry.modern);
    }
    link.transport.send(message).then(
      () => {
        if (entry?.phase === 'sending') entry.phase = 'sent';
      },
      (error: unknown) => this.sendFailed(link, message, entry, error),
    );
  }

  /** Stays 'sending' until answered: a lost link's session is not its concern, only its own POST's failure is. */
  private postOn(link: Link, entry: Pending, modern: NonNullable<Pending['modern']>): void {
    const abort = (modern.abort = new AbortController());
    const listsTools = entry.request.method === 'tools/list';
    const onAnswer = (answer: JSONRPCMessage) => {
      if (listsTools) this.learnToolHeaders(answer);
      this.fromDaemon(link, answer);
    };
    postModern(link.endpoint, entry.request, modern.revision, (tool) => this.toolHeaders.of(tool), abort.signal, onAnswer).then(
      () => {
        // Aborted: cancelled by the client, or the shim is closing; neither is a failure.
        if (!abort.signal.aborted && this.ledger.isOpen(entry)) this.sendFailed(link, entry.request, entry, new Error('the daemon ended the answer without answering'));
      },
      (error: unknown) => this.sendFailed(link, entry.request, entry, error),
    );
  }

  /** The client keeps or excludes a tool with an invalid declaration itself: the shim only records, it never filters what it relays. */
  private learnToolHeaders(answer: JSONRPCMessage): void {
    const tools = 'result' in answer ? answer.result.tools : undefined;
    if (Array.isArray(tools)) this.toolHeaders.admit(tools, (note) => this.options.log(note));
  }

  private sendFailed(link: Link, message: JSONRPCMessage, entry: Pending | undefined, error: unknown): void {
    const failure = classify(error);
    this.options.log(`send ${describe(message)} failed (${failure}): ${(error as Error).message}`);
    if (failure === 'rejected') return void this.rejected(link, message, entry, error as StreamableHTTPError);
    if (failure === 'unreadable') {
      // The link works: only this answer is bad, and asking again would get it again.
      if (entry && this.ledger.isOpen(entry)) this.fail(entry, unreadable(entry.request.id, error as UnreadableAnswer));
      return;
    }
    this.links.lost(link, 'the daemon did not take a message');
    if (entry && !this.ledger.isOpen(entry)) return; // answered or failed meanwhile
    if (failure === 'undelivered' || !entry) this.redeliver(message);
    else this.lostInFlight(link, entry);
  }

  /** An HTTP error answer is final, unless it came from a daemon that has since been replaced (which may answer 400 to a session it never knew). */
  private async rejected(link: Link, message: JSONRPCMessage, entry: Pending | undefined, error: StreamableHTTPError): Promise<void> {
    await this.links.check(link);
    if (entry && !this.ledger.isOpen(entry)) return; // answered or failed meanwhile
    if (link !== this.links.current) return this.redeliver(message);
    if (entry) this.fail(entry, rejection(entry.request.id, error));
  }

  private redeliver(message: JSONRPCMessage): void {
    // Answers to daemon requests belong to the old session; the replay on the new link sends `initialized`.
    if (!isJSONRPCRequest(message) && !isJSONRPCNotification(message)) return;
    if (this.handshake.replaysItself(message)) return;
    this.deliver(message);
  }

  private lostInFlight(link: Link, entry: Pending): void {
    if (mayResend(entry, link.endpoint.identity)) return this.deliver(entry.request);
    const times = entry.losses!.times;
    const why = times > 1 ? `it was lost ${times} times and is not sent again` : 'it was not resent because it may have taken effect';
    this.fail(entry, unreachable(entry.request.id, `the coffer daemon went away while this request was running; ${why}`, 'DAEMON_CONNECTION_LOST'));
  }
}
