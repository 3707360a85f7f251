// The main-thread side of one upstream actor: spawns its worker, calls it over
// comlink (forwards, cancels and commands over their own port), decodes list
// payloads, relays its events, and makes sure that a dead or stuck worker
// neither hangs callers nor leaves a child process behind.
import { MessageChannel, Worker } from 'node:worker_threads';
import type { ActorApi, ActorCommand, ActorEvent, ActorInit, ActorStatus, ActorTuning, CallMessage, ForwardAnswer, ForwardOutcome, ForwardRequest, ListOutcome } from '../protocol/actor.js';
import type { ListKind } from '../protocol/capabilities.js';
import { Comlink, endpoint, type Remote } from '../protocol/comlink.js';
import { JSONRPC, messageOf, type ErrorBody } from '../protocol/errors.js';
import { decodeList } from '../protocol/list-codec.js';
import type { ServerConfig } from '../protocol/server-config.js';
import { actorEntry } from '../paths.js';
import { approximateChars, busyForward, inFlight, MAX_IN_FLIGHT_PER_UPSTREAM } from './in-flight.js';

export interface ActorSpawnOptions {
  config: ServerConfig;
  /** Where the actor appends its notes and a stdio child's stderr. */
  logFile: string;
  tuning: ActorTuning;
  /** How long stop() lets the actor shut down cleanly before terminating it (default 6 s). */
  shutdownDeadlineMs?: number;
}

export interface ActorCallbacks {
  onEvent(event: ActorEvent): void;
  /** The worker died without stop() (crash, out of memory). Called at most once. */
  onExit(reason: string): void;
  /** Something the worker sent could not be read here (a message lost on its way): for the daemon's log. */
  onLost?(what: string, reason: string): void;
}

/** A ListOutcome with its items decoded. */
export type ActorListAnswer =
  | { ok: true; state: 'live'; kind: ListKind; items: Record<string, unknown>[]; version: number; fetchedAt: number; cached: boolean }
  | { ok: true; state: 'unsupported'; kind: ListKind; version: number; fetchedAt: number; cached: boolean }
  | { ok: false; kind: ListKind; error: ErrorBody };

export interface ActorHandle {
  readonly server: string;
  list(kind: ListKind, fresh: boolean): Promise<ActorListAnswer>;
  forward(req: ForwardRequest): Promise<ForwardOutcome>;
  cancel(id: string, reason: string): void;
  dropCache(): void;
  /** One-way; dropped when the actor is gone. */
  command(command: ActorCommand): void;
  /** Asks the actor; a dead actor answers with its last known status, state `failed` (`stopped` after stop()). */
  status(): Promise<ActorStatus>;
  /** The status from the last state event (no round trip). */
  readonly lastStatus: ActorStatus;
  /** Shuts the actor down (child stopped), terminates the worker after the deadline. Idempotent. */
  stop(): Promise<void>;
}

const DEFAULT_SHUTDOWN_DEADLINE_MS = 6_000;
/**
 * The actor answers every forward itself within connect_ms + request_ms; this
 * much later the main thread gives up on its own, so an answer lost on the way
 * (a message that could not be deserialised) never leaves a call open.
 */
const ANSWER_GRACE_MS = 5_000;
/** A smaller young generation saves ~5 MB of RSS per actor; actors allocate little. */
const ACTOR_RESOURCE_LIMITS = { maxYoungGenerationSizeMb: 2, maxOldGenerationSizeMb: 256 };

/** The answer of an actor that is not running (dead, stopped, or stopped before it booted). */
export function unavailableList(server: string, kind: ListKind, reason: string): Extract<ActorListAnswer, { ok: false }> {
  return { ok: false, kind, error: { code: 'UPSTREAM_UNAVAILABLE', message: `${server}: ${reason}`, details: { server } } };
}

/** A forward whose answer never came back from the actor (it was lost between the threads). */
function lostForward(server: string, boundMs: number): ForwardOutcome {
  const message = `${server}: no answer from its actor within ${boundMs} ms (the answer was lost between threads or the actor is stuck)`;
  return { ok: false, error: { code: JSONRPC.UPSTREAM_TIMEOUT, message, data: { code: 'UPSTREAM_TIMEOUT', server } } };
}

export function unavailableForward(server: string, reason: string): ForwardOutcome {
  return { ok: false, error: { code: JSONRPC.UPSTREAM_UNAVAILABLE, message: `${server}: ${reason}`, data: { code: 'UPSTREAM_UNAVAILABLE', server } } };
}

class WorkerActor implements ActorHandle {
  readonly server: string;
  lastStatus: ActorStatus;
  private readonly worker: Worker;
  private readonly remote: Remote<ActorApi>;
  private readonly events: MessageChannel['port1'];
  private readonly calls: MessageChannel['port1'];
  /** Forwards waiting for their answer, by seq; the worker's exit settles those left. */
  private readonly answers = new Map<number, (outcome: ForwardOutcome) => void>();
  private nextSeq = 0;
  private exitReason: string | null = null;
  private readonly exited: Promise<string>;
  /** Settles each comlink call still waiting when the worker exits (comlink would never settle it). */
  private readonly waitingCalls = new Set<(reason: string) => void>();
  private stopping: Promise<void> | null = null;
  private cleanShutdown = false;

  constructor(
    private readonly options: ActorSpawnOptions,
    private readonly callbacks: ActorCallbacks,
  ) {
    this.server = options.config.name;
    this.lastStatus = {
      server: this.server,
      state: 'connecting',
      since: Date.now(),
      attempts: 0,
      lastError: null,
      serverInfo: null,
      protocolVersion: null,
      pid: null,
    };
    const events = new MessageChannel();
    const calls = new MessageChannel();
    const init: ActorInit = { config: options.config, logFile: options.logFile, tuning: options.tuning, events: events.port2, calls: calls.port2 };
    this.worker = new Worker(actorEntry(), {
      workerData: init,
      transferList: [events.port2, calls.port2],
      resourceLimits: ACTOR_RESOURCE_LIMITS,
    });
    this.remote = Comlink.wrap<ActorApi>(endpoint(this.worker));
    this.events = events.port1;
    this.events.on('message', (event: ActorEvent) => {
      if (event.type === 'state') this.lastStatus = event.status;
      this.callbacks.onEvent(event);
    });
    // A message that cannot be deserialised here is lost: the forward it answered ends at its own bound.
    this.events.on('messageerror', (error) => this.callbacks.onLost?.('an event', messageOf(error)));
    this.worker.on('messageerror', (error) => this.callbacks.onLost?.('a list or status answer', messageOf(error)));
    this.calls = calls.port1;
    this.calls.on('messageerror', (error) => this.callbacks.onLost?.('a call answer', messageOf(error)));
    this.calls.on('message', (answer: ForwardAnswer) => {
      this.answers.get(answer.seq)?.('outcome' in answer ? answer.outcome : unavailableForward(this.server, `actor call failed: ${answer.failure}`));
    });

    let failure: string | null = null;
    this.worker.on('error', (error) => (failure = messageOf(error)));
    this.exited = new Promise((resolve) => {
      this.worker.once('exit', (code) => {
        this.exitReason = this.stopping ? 'actor stopped' : (failure ?? `actor worker exited with code ${code}`);
        this.events.close();
        this.calls.close();
        for (const settle of [...this.answers.values()]) settle(unavailableForward(this.server, this.exitReason));
        this.answers.clear();
        for (const settle of this.waitingCalls) settle(this.exitReason);
        this.waitingCalls.clear();
        if (!this.stopping) {
          this.killOrphanedChild();
          this.callbacks.onExit(this.exitReason);
        }
        resolve(this.exitReason);
      });
    });
  }

  async list(kind: ListKind, fresh: boolean): Promise<ActorListAnswer> {
    const outcome = await this.call<ListOutcome>(
      () => this.remote.list(kind, fresh) as Promise<ListOutcome>,
      (reason) => unavailableList(this.server, kind, reason),
    );
    if (!outcome.ok || outcome.state !== 'live') return outcome;
    const { list, ...rest } = outcome;
    return { ...rest, items: decodeList(list) };
  }

  /**
   * One promise per call, settled by its answer, by the worker's exit or by its
   * own bound; its request's bytes are in the ledger until then.
   */
  forward(req: ForwardRequest): Promise<ForwardOutcome> {
    if (this.exitReason !== null) return Promise.resolve(unavailableForward(this.server, this.exitReason));
    const chars = approximateChars(req.params, MAX_IN_FLIGHT_PER_UPSTREAM);
    const refused = inFlight.take(this.server, chars);
    if (refused !== null) return Promise.resolve(busyForward(this.server, refused));
    const seq = this.nextSeq++;
    try {
      this.post({ type: 'forward', seq, req });
    } catch (error) {
      // Not cloneable: no answer will come.
      inFlight.give(this.server, chars);
      return Promise.resolve(unavailableForward(this.server, `actor call failed: ${messageOf(error)}`));
    }
    const { timeouts } = this.options.config;
    const boundMs = timeouts.connect_ms + (req.timeoutMs ?? timeouts.request_ms) + ANSWER_GRACE_MS;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        const settle = this.answers.get(seq);
        if (!settle) return;
        this.cancel(req.id, 'no answer in time');
        settle(lostForward(this.server, boundMs));
      }, boundMs);
      timer.unref();
      this.answers.set(seq, (outcome) => {
        this.answers.delete(seq);
        clearTimeout(timer);
        inFlight.give(this.server, chars);
        resolve(outcome);
      });
    });
  }

  cancel(id: string, reason: string): void {
    if (this.exitReason === null) this.post({ type: 'cancel', id, reason });
  }

  dropCache(): void {
    if (this.exitReason === null) void this.remote.dropCache().catch(() => {});
  }

  command(command: ActorCommand): void {
    if (this.exitReason === null) this.post({ type: 'command', command });
  }

  private post(message: CallMessage): void {
    this.calls.postMessage(message);
  }

  status(): Promise<ActorStatus> {
    return this.call(
      () => this.remote.status(),
      (reason) => ({ ...this.lastStatus, state: this.stopping ? 'stopped' : 'failed', lastError: reason, pid: null }),
    );
  }

  stop(): Promise<void> {
    this.stopping ??= this.shutdown();
    return this.stopping;
  }

  private async shutdown(): Promise<void> {
    if (this.exitReason === null) {
      const deadlineMs = this.options.shutdownDeadlineMs ?? DEFAULT_SHUTDOWN_DEADLINE_MS;
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, deadlineMs)));
      await Promise.race([
        this.remote.shutdown().then(() => (this.cleanShutdown = true), () => {}),
        deadline,
        this.exited,
      ]);
      clearTimeout(timer);
      await this.worker.terminate();
    }
    await this.exited;
    if (!this.cleanShutdown) this.killOrphanedChild();
  }

  /**
   * Comlink never settles a call whose worker died: every call is settled by
   * the worker's exit too, and a failed call becomes the same data answer.
   * (Not a race against `exited`: each race would leave a reaction on that
   * promise until the worker exits, one per call, for the actor's lifetime.)
   */
  private call<T>(invoke: () => Promise<T>, whenDead: (reason: string) => T): Promise<T> {
    if (this.exitReason !== null) return Promise.resolve(whenDead(this.exitReason));
    return new Promise<T>((resolve) => {
      const onExit = (reason: string): void => resolve(whenDead(reason));
      this.waitingCalls.add(onExit);
      invoke().then(
        (value) => {
          this.waitingCalls.delete(onExit);
          resolve(value);
        },
        (error: unknown) => {
          this.waitingCalls.delete(onExit);
          resolve(whenDead(`actor call failed: ${messageOf(error)}`));
        },
      );
    });
  }

  /** A worker that died or was terminated cannot stop its stdio child; do it from here. */
  private killOrphanedChild(): void {
    const pid = this.lastStatus.pid;
    if (pid === null) return;
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
}

/** Starts an actor worker for one upstream; it connects in the background and reports through callbacks. */
export function spawnActor(options: ActorSpawnOptions, callbacks: ActorCallbacks): ActorHandle {
  return new WorkerActor(options, callbacks);
}
