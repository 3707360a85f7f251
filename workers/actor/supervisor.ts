// The connection lifecycle of one upstream: connecting → ready → (lost)
// backoff → connecting …, with a crash-loop cap (`failed`, then slow retries).
// It owns the current Connection and tells the rest of the actor when a
// session starts and ends; it knows nothing about lists or forwarding.
import type { ActorState, ActorStatus, ActorTuning } from '../../src/protocol/actor.js';
import { CAPABILITY_FLAG, LIST_KINDS, type ListKind } from '../../src/protocol/capabilities.js';
import { messageOf } from '../../src/protocol/errors.js';
import { sanitiseText } from '../../src/protocol/untrusted-text.js';
import type { ServerConfig } from '../../src/protocol/server-config.js';
import { retryPlan } from './backoff.js';
import { Connection, type ConnectionHooks } from './connection.js';
import type { HttpAuth } from './http-auth.js';
import type { Era } from './era-negotiation.js';
import { ProbeExitedError } from './modern-session.js';
import type { ActorLog } from './log.js';

/**
 * The shared connection relays sampling, elicitation and roots to the client
 * whose call caused them (if that client declared them; a modern client
 * answers them as input_required). Roots asked outside any call belong to no
 * one and are refused: roots without listChanged, as no single client's
 * changes could be told to a connection every client shares.
 */
const SHARED_CLIENT_CAPABILITIES = { sampling: {}, elicitation: {}, roots: {} };

export interface SupervisorHooks {
  onState(status: ActorStatus): void;
  /** A session began (after the first, this is a reconnect). */
  onSessionStart(): void;
  /** The session ended: lost, evicted or shut down. */
  onSessionEnd(): void;
  /** Server messages on the shared connection (see ConnectionHooks). */
  connection: Pick<ConnectionHooks, 'onNotification' | 'onRequest'>;
}

export class Supervisor {
  private state: ActorState = 'connecting';
  private since = Date.now();
  private failures = 0;
  private lastError: string | null = null;
  private current: Connection | null = null;
  /** The connection being opened, so shutdown can stop its child too. */
  private opening: Connection | null = null;
  private readyAt = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  private stopped = false;
  /** The era the first connection found: it holds for this actor's lifetime (reconnects skip a legacy probe). */
  private knownEra: Era | null = null;
  private readonly stateWaiters = new Set<() => void>();
  private readonly closing = new Set<Promise<void>>();

  constructor(
    private readonly config: ServerConfig,
    private readonly tuning: ActorTuning,
    private readonly log: ActorLog,
    private readonly hooks: SupervisorHooks,
    /** An HTTP/SSE upstream's OAuth hook: a connect it refuses means `needs_auth`, not a retry. */
    private readonly auth: HttpAuth | null = null,
  ) {}

  start(): void {
    this.connect();
  }

  status(): ActorStatus {
    return {
      server: this.config.name,
      state: this.state,
      since: this.since,
      attempts: this.failures,
      lastError: this.lastError,
      serverInfo: this.current?.serverInfo ?? null,
      ...(this.current?.instructions ? { instructions: this.current.instructions } : {}),
      ...(this.current ? { serves: servedKinds(this.current.capabilities) } : {}),
      ...extensionsOf(this.current?.capabilities),
      protocolVersion: this.current?.protocolVersion ?? null,
      era: this.current?.era ?? null,
      pid: this.current?.pid ?? null,
    };
  }

  get isReady(): boolean {
    return this.current !== null;
  }

  /** The error code of unavailableReason(). */
  unavailableCode(): 'UPSTREAM_AUTH_REQUIRED' | 'UPSTREAM_UNAVAILABLE' {
    return this.state === 'needs_auth' ? 'UPSTREAM_AUTH_REQUIRED' : 'UPSTREAM_UNAVAILABLE';
  }

  /** Signed in while waiting for it: connect now. */
  signedIn(): void {
    if (this.state !== 'needs_auth' || this.stopped) return;
    this.failures = 0;
    this.connect();
  }

  /** Signed out: the connection ends, and the next one finds out it needs a sign-in. */
  signedOut(): void {
    if (this.current) void this.replace(this.current, 'signed out');
  }

  /** Why there is no connection, for error messages. */
  unavailableReason(): string {
    const detail = this.lastError ? `: ${this.lastError}` : '';
    return `upstream ${this.config.name} is not connected (${this.state}${detail})`;
  }

  /**
   * The ready connection. While connecting, waits for the attempt (at most
   * connect_ms); in backoff, failed or stopped, null at once: a caller never
   * waits out a backoff.
   */
  usable(): Promise<Connection | null> {
    if (this.current || this.state !== 'connecting') return Promise.resolve(this.current);
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.stateWaiters.delete(onState);
        resolve(this.current);
      };
      const onState = (): void => {
        if (this.state !== 'connecting') done();
      };
      const timer = setTimeout(done, this.config.timeouts.connect_ms);
      this.stateWaiters.add(onState);
    });
  }

  /** R7: closes a connection that failed a list and connects again at once (no backoff). */
  replace(stale: Connection, reason: string): Promise<Connection | null> {
    if (this.current === stale && !this.stopped) {
      this.log.note(`evicting the connection (${reason}); reconnecting`);
      this.current = null;
      this.track(stale.close());
      this.hooks.onSessionEnd();
      this.connect();
    }
    return this.usable();
  }

  async shutdown(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    for (const connection of [this.current, this.opening]) if (connection) this.track(connection.close());
    if (this.current) this.hooks.onSessionEnd();
    this.current = null;
    this.opening = null;
    await Promise.all(this.closing);
    this.setState('stopped');
  }

  private connect(): void {
    this.setState('connecting');
    void this.attempt();
  }

  private async attempt(): Promise<void> {
    let connection: Connection | null = null;
    try {
      connection = await Connection.create(
        this.config,
        this.log,
        { ...this.hooks.connection, onLost: (reason) => connection && this.lost(connection, reason) },
        SHARED_CLIENT_CAPABILITIES,
        this.auth,
        this.knownEra,
      );
      if (this.stopped) return;
      this.opening = connection;
      await connection.connect();
      // The session may already have ended between initialize and here.
      if (!connection.isOpen) throw new Error('connection closed right after initialize');
    } catch (error) {
      if (connection) this.track(connection.close());
      if (error instanceof ProbeExitedError && !this.stopped) {
        // Not a failure: that server only speaks the 2025 era, and a fresh process is needed to say initialize.
        this.knownEra = 'legacy';
        this.log.note(`${error.message}: starting it again for the 2025 era`);
        // Still the same connecting state: a server that dies at any start fails the next attempt as before.
        void this.attempt();
        return;
      }
      if (!this.stopped) this.fail(messageOf(error));
      return;
    } finally {
      if (this.opening === connection) this.opening = null;
    }
    if (this.stopped) {
      this.track(connection.close());
      return;
    }
    this.current = connection;
    this.readyAt = Date.now();
    this.knownEra = connection.era;
    connection.startListening();
    const info = connection.serverInfo;
    this.log.note(`connected to ${info ? `${info.name} ${info.version}` : 'upstream'} (protocol ${connection.protocolVersion}, ${connection.era} era)`);
    this.setState('ready');
    this.hooks.onSessionStart();
  }

  private lost(connection: Connection, reason: string): void {
    if (connection !== this.current || this.stopped) return;
    this.current = null;
    this.log.note(`session lost: ${reason}`, 'warn');
    this.hooks.onSessionEnd();
    // A session that lived long enough was healthy: reconnect at once and start counting afresh.
    if (Date.now() - this.readyAt >= this.tuning.crashWindowMs) {
      this.failures = 0;
      this.lastError = sanitiseText(reason);
      this.connect();
      return;
    }
    this.fail(reason);
  }

  private fail(reason: string): void {
    const signIn = this.auth?.signInNeeded() ?? null;
    if (signIn !== null) {
      // Retrying cannot help: a person must sign in first (signedIn() connects again).
      this.failures = 0;
      this.lastError = sanitiseText(signIn);
      this.log.note(`needs sign-in: ${signIn}`);
      this.setState('needs_auth');
      return;
    }
    this.failures += 1;
    this.lastError = sanitiseText(reason);
    const plan = retryPlan(this.failures, this.tuning);
    this.log.note(`${reason}; attempt ${this.failures}, retrying in ${plan.delayMs} ms`, 'warn');
    this.setState(plan.state);
    this.retryTimer = setTimeout(() => this.connect(), plan.delayMs);
  }

  private setState(state: ActorState): void {
    this.state = state;
    this.since = Date.now();
    this.hooks.onState(this.status());
    for (const waiter of [...this.stateWaiters]) waiter();
  }

  private track(closing: Promise<void>): void {
    this.closing.add(closing);
    void closing.finally(() => this.closing.delete(closing));
  }
}

/** The extension ids an upstream declares, for the status (what the router may advertise as routable). */
function extensionsOf(capabilities: object | undefined): { extensions?: string[] } {
  const extensions = (capabilities as { extensions?: unknown } | undefined)?.extensions;
  if (typeof extensions !== 'object' || extensions === null || Array.isArray(extensions)) return {};
  const ids = Object.keys(extensions);
  return ids.length > 0 ? { extensions: ids } : {};
}

/** The list kinds whose capability flag the upstream declared (the lister answers the others `unsupported`). */
function servedKinds(capabilities: object): ListKind[] {
  return LIST_KINDS.filter((kind) => Boolean((capabilities as Record<string, unknown>)[CAPABILITY_FLAG[kind]]));
}
