// The main thread's one object per upstream: it boots the upstream's actor
// worker (in its turn), holds calls made meanwhile, asks the worker everything
// (lists, forwards, cancels, commands, shutdown) on one ordered port, decodes list
// payloads, relays its events, and makes sure that a dead or stuck worker
// neither hangs callers nor leaves a child process behind; a worker that died
// is replaced on a restart schedule when one is given (src/supervision/), and
// the wait shows as state `backoff`.
import { MessageChannel, Worker, type WorkerOptions } from 'node:worker_threads';
import type { ActorCommand, ActorEvent, ActorHeap, ActorInit, ActorStatus, ActorTuning, CallAnswer, CallMessage, CallReply, ForwardOutcome, ForwardRequest, Progress, ScriptSet } from '../protocol/actor.js';
import type { ListKind } from '../protocol/capabilities.js';
import { JSONRPC, messageOf, type ErrorBody } from '../protocol/errors.js';
import { decodeList } from '../protocol/list-decode.js';
import type { OAuthAction, OAuthOutcome, OAuthRecord } from '../protocol/oauth.js';
import type { ServerConfig } from '../protocol/server-config.js';
import { actorEntry } from '../paths.js';
import { killChild } from '../supervision/kill-child.js';
import { Restarter, type RestartWait } from '../supervision/restarter.js';
import type { RestartSchedule } from '../supervision/restart-schedule.js';
import { approximateChars, busyForward, inFlight, MAX_IN_FLIGHT_PER_UPSTREAM } from './in-flight.js';
import { MAX_DEPTH } from '../protocol/message-limit.js';
import { nestsDeeperThan } from '../protocol/nesting.js';
import type { ForwardHooks, Upstream } from './upstream.js';

export interface ActorOptions {
  config: ServerConfig;
  /** Where the actor appends its notes and a stdio child's stderr. */
  logFile: string;
  /** The actor's scripts and their code caches as the daemon holds them (read once for every worker); absent: the worker reads the scripts itself and compiles them every time. */
  scripts?: () => ScriptSet | undefined;
  tuning: ActorTuning;
  /** How long stop() lets the actor shut down cleanly before terminating it (default 6 s). */
  shutdownDeadlineMs?: number;
  /** Waits for a turn to boot, with the function that ends the turn (on the worker's first event or its exit). Absent: boot at once. */
  bootSlot?: () => Promise<() => void>;
  /** A worker that died without stop() is replaced on this schedule. Absent: it is not. */
  restart?: RestartSchedule;
  /** Starts the actor worker; a test passes its own to get at the worker it kills. */
  newWorker?: (options: WorkerOptions) => Worker;
  /** The stored OAuth state of an HTTP/SSE upstream, read before each boot. */
  oauthRecord?: () => Promise<OAuthRecord | null>;
}

export interface ActorCallbacks {
  onEvent(event: ActorEvent): void;
  /** The worker died without stop() (crash, out of memory). Called once per worker. */
  onExit(reason: string): void;
  /** Something the worker sent could not be read here (a message lost on its way): for the daemon's log. */
  onLost?(what: string, reason: string): void;
}

/** A ListOutcome with its items decoded. */
export type ActorListAnswer =
  | { ok: true; state: 'live'; kind: ListKind; items: Record<string, unknown>[]; version: number; fetchedAt: number; expiresAt?: number; cached: boolean }
  | { ok: true; state: 'unsupported'; kind: ListKind; version: number; fetchedAt: number; expiresAt?: number; cached: boolean }
  | { ok: false; kind: ListKind; error: ErrorBody };

const DEFAULT_SHUTDOWN_DEADLINE_MS = 6_000;
/**
 * The actor answers every forward itself within connect_ms + request_ms; this
 * much later the main thread gives up on its own, so an answer lost on the way
 * (a message that could not be deserialised) never leaves a call open.
 */
const ANSWER_GRACE_MS = 5_000;
/** A smaller young generation saves ~5 MB of RSS per actor; actors allocate little. */
export const ACTOR_RESOURCE_LIMITS = { maxYoungGenerationSizeMb: 2, maxOldGenerationSizeMb: 256 };
const NOT_STARTED = 'actor stopped before it started';

/** A message waiting for its answer: a forward's progress comes before it. */
interface Waiting {
  answer(answer: CallAnswer): void;
  gone(reason: string): void;
  onProgress?: (progress: Progress) => void;
}

function failureOf(answer: CallAnswer): string {
  return `actor call failed: ${'failure' in answer ? answer.failure : 'an answer of another kind'}`;
}

function initialStatus(server: string): ActorStatus {
  return { server, state: 'connecting', since: Date.now(), attempts: 0, lastError: null, serverInfo: null, protocolVersion: null, era: null, pid: null };
}

/** Waiting for a replacement worker: no connection, and why and until when, for callers and every status surface. */
function waitingStatus(server: string, reason: string, wait: RestartWait): ActorStatus {
  const lastError = `${reason}; a new actor worker starts in ${wait.delayMs} ms (${new Date(wait.at).toISOString()}, attempt ${wait.attempt})`;
  return { ...initialStatus(server), state: 'backoff', attempts: wait.attempt, lastError };
}

const newActorWorker = (options: WorkerOptions): Worker => new Worker(actorEntry(), options);

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

/**
 * A call that could not be handed to the actor: a request nested past what the
 * actor takes from an upstream (its params, or the capabilities its client
 * declared) is the caller's to flatten (copying it to the worker overflowed
 * the stack); anything else means the actor is gone.
 */
function unsentForward(server: string, req: ForwardRequest, error: unknown): ForwardOutcome {
  if (!nestsDeeperThan(req, MAX_DEPTH)) return unavailableForward(server, `actor call failed: ${messageOf(error)}`);
  const message = `the request nests deeper than ${MAX_DEPTH} levels (its params or its clientCapabilities), too deep for coffer to pass on to '${server}': send it flatter`;
  return { ok: false, error: { code: JSONRPC.INVALID_PARAMS, message, data: { code: 'BAD_REQUEST', server } } };
}

/** A client's answer that could not be handed to the actor, as the upstream gets it instead. */
function unsentAnswer(outcome: ForwardOutcome, error: unknown): ForwardOutcome {
  const why = nestsDeeperThan(outcome, MAX_DEPTH) ? `it nests deeper than ${MAX_DEPTH} levels` : messageOf(error);
  return { ok: false, error: { code: JSONRPC.INVALID_PARAMS, message: `coffer refused to relay the client's answer: ${why}` } };
}

export class UpstreamActor implements Upstream {
  lastStatus: ActorStatus;
  private worker: Worker | null = null;
  private calls: MessageChannel['port1'] | null = null;
  /** Whether the worker was started: false once stop() came before its boot turn. */
  private started: Promise<boolean>;
  /** Why the current worker is gone; null while it runs or boots. */
  private exitReason: string | null = null;
  private exited: Promise<string> = Promise.resolve(NOT_STARTED);
  /** Messages waiting for their answer, by seq; the worker's exit settles those left. */
  private readonly pending = new Map<number, Waiting>();
  private nextSeq = 0;
  private stopping: Promise<void> | null = null;
  private cleanShutdown = false;
  private readonly restarter: Restarter | null;
  /**
   * The client sessions a request was forwarded for in per_session mode (each
   * may have a connection of its own in the actor): only those are told when
   * their session ends. A 2026-07-28 caller's every request ends as a session,
   * and telling every per_session actor each time would wake them all per call.
   */
  private readonly sessions = new Set<string>();

  constructor(
    private readonly options: ActorOptions,
    private readonly callbacks: ActorCallbacks,
  ) {
    this.lastStatus = initialStatus(this.name);
    this.restarter = options.restart ? new Restarter(options.restart, { replace: () => this.replace(), onWait: (wait) => this.awaitReplacement(wait) }) : null;
    this.started = this.boot();
  }

  get name(): string {
    return this.options.config.name;
  }

  get config(): ServerConfig {
    return this.options.config;
  }

  private async boot(): Promise<boolean> {
    const { bootSlot, oauthRecord } = this.options;
    const oauth = oauthRecord && this.config.transport.type !== 'stdio' ? await oauthRecord().catch(() => null) : null;
    if (!bootSlot) {
      this.spawn(() => undefined, oauth);
      return true;
    }
    const release = await bootSlot();
    if (this.stopping) {
      release();
      return false;
    }
    this.spawn(release, oauth);
    return true;
  }

  private spawn(release: () => void, oauth: OAuthRecord | null): void {
    const events = new MessageChannel();
    const calls = new MessageChannel();
    const { logFile, tuning } = this.options;
    const init: ActorInit = { config: this.config, logFile, tuning, events: events.port2, calls: calls.port2, oauth };
    const scripts = this.options.scripts?.();
    if (scripts) init.scripts = scripts;
    const worker = (this.options.newWorker ?? newActorWorker)({
      workerData: init,
      transferList: [events.port2, calls.port2],
      resourceLimits: ACTOR_RESOURCE_LIMITS,
    });
    this.worker = worker;
    this.calls = calls.port1;
    events.port1.on('message', (event: ActorEvent) => {
      release();
      if (event.type === 'state') this.lastStatus = event.status;
      this.callbacks.onEvent(event);
    });
    events.port1.on('messageerror', (error) => this.callbacks.onLost?.('an event', messageOf(error)));
    // An answer that cannot be deserialised here is lost: a forward ends at its own bound, a list at the router's deadline.
    calls.port1.on('messageerror', (error) => this.callbacks.onLost?.('an answer', messageOf(error)));
    calls.port1.on('message', (reply: CallReply) => {
      const waiting = this.pending.get(reply.seq);
      if (!waiting) return;
      if ('progress' in reply) waiting.onProgress?.(reply.progress);
      else waiting.answer(reply);
    });

    let failure: string | null = null;
    worker.on('error', (error) => (failure = messageOf(error)));
    this.exited = new Promise((resolve) => {
      worker.once('exit', (code) => {
        release();
        const reason = this.stopping ? 'actor stopped' : (failure ?? `actor worker exited with code ${code}`);
        this.exitReason = reason;
        events.port1.close();
        calls.port1.close();
        for (const waiting of [...this.pending.values()]) waiting.gone(reason);
        if (!this.stopping) {
          this.killOrphanedChild();
          this.callbacks.onExit(reason);
          this.restarter?.died();
        }
        resolve(reason);
      });
    });
  }

  /** Calls meanwhile answer at once with the wait, and every status surface shows it. */
  private awaitReplacement(wait: RestartWait): void {
    this.lastStatus = waitingStatus(this.name, this.exitReason ?? 'actor worker gone', wait);
    this.exitReason = this.lastStatus.lastError;
    this.callbacks.onEvent({ type: 'state', server: this.name, status: this.lastStatus });
  }

  private replace(): Promise<boolean> {
    this.lastStatus = initialStatus(this.name);
    this.exitReason = null;
    this.worker = null;
    this.started = this.boot();
    return this.started;
  }

  /**
   * Acts at once if the worker runs, else once it booted (in call order);
   * `gone` answers for a worker that is gone or was never started.
   */
  private use<T>(act: () => T | Promise<T>, gone: (reason: string) => T): Promise<T> {
    if (this.exitReason !== null) return Promise.resolve(gone(this.exitReason));
    if (this.worker) return Promise.resolve(act());
    return this.started.then((started) => (!started ? gone(NOT_STARTED) : this.exitReason !== null ? gone(this.exitReason) : act()));
  }

  async list(kind: ListKind, fresh: boolean): Promise<ActorListAnswer> {
    const gone = (reason: string) => unavailableList(this.name, kind, reason);
    const outcome = await this.use(() => {
      const seq = this.nextSeq++;
      return this.ask(seq, { type: 'list', seq, kind, fresh }, (answer) => ('list' in answer ? answer.list : gone(failureOf(answer))), gone);
    }, gone);
    if (!outcome.ok || outcome.state !== 'live') return outcome;
    const { list, ...rest } = outcome;
    return { ...rest, items: decodeList(list) };
  }

  forward(req: ForwardRequest, hooks: ForwardHooks = {}): Promise<ForwardOutcome> {
    if (req.client && this.config.session_mode === 'per_session') this.sessions.add(req.client.session);
    return this.use(() => this.post(req, hooks), (reason) => unavailableForward(this.name, reason));
  }

  /**
   * One promise per call, settled by its answer, by the worker's exit or by its
   * own bound; its request's bytes are in the ledger until then.
   */
  private post(req: ForwardRequest, hooks: ForwardHooks): Promise<ForwardOutcome> {
    const chars = approximateChars(req.params, MAX_IN_FLIGHT_PER_UPSTREAM);
    const refused = inFlight.take(this.name, chars);
    if (refused !== null) return Promise.resolve(busyForward(this.name, refused));
    const seq = this.nextSeq++;
    const { timeouts } = this.config;
    const boundMs = timeouts.connect_ms + (req.timeoutMs ?? timeouts.request_ms) + ANSWER_GRACE_MS;
    const timer = setTimeout(() => {
      const waiting = this.pending.get(seq);
      if (!waiting) return;
      this.cancel(req.id, 'no answer in time');
      waiting.answer({ seq, outcome: lostForward(this.name, boundMs) });
    }, boundMs);
    timer.unref();
    const gone = (reason: string) => unavailableForward(this.name, reason);
    const read = (answer: CallAnswer): ForwardOutcome => {
      if (!('outcome' in answer)) return gone(failureOf(answer));
      if (answer.upstreamAt) hooks.onUpstreamTimes?.(...answer.upstreamAt);
      return answer.outcome;
    };
    return this.ask(seq, { type: 'forward', seq, req }, read, gone, hooks.onProgress, (error) => unsentForward(this.name, req, error)).then((outcome) => {
      clearTimeout(timer);
      inFlight.give(this.name, chars);
      return outcome;
    });
  }

  /**
   * Posts a message and waits for its answer; the worker's exit settles it
   * too, and a message that cannot be posted (not cloneable) is answered at once.
   */
  private ask<T>(
    seq: number,
    message: CallMessage,
    read: (answer: CallAnswer) => T,
    gone: (reason: string) => T,
    onProgress?: (progress: Progress) => void,
    unsent: (error: unknown) => T = (error) => gone(`actor call failed: ${messageOf(error)}`),
  ): Promise<T> {
    return new Promise<T>((resolve) => {
      const settle = (value: T): void => {
        this.pending.delete(seq);
        resolve(value);
      };
      this.pending.set(seq, { answer: (answer) => settle(read(answer)), gone: (reason) => settle(gone(reason)), onProgress });
      try {
        this.send(message);
      } catch (error) {
        settle(unsent(error));
      }
    });
  }

  cancel(id: string, reason: string): void {
    void this.use(() => this.send({ type: 'cancel', id, reason }), () => undefined);
  }

  command(command: ActorCommand): void {
    void this.use(() => this.sendCommand(command), () => undefined);
  }

  /**
   * What a client wrote never throws into its relayer when it cannot be copied
   * to the worker (too deep: the copy recurses): a client's answer is replaced
   * by a refusal, which the upstream still waits for; a client's notification
   * (its progress on a relayed request too) is dropped. A throw would reach
   * the session's POST, whose other messages would go unhandled.
   */
  private sendCommand(command: ActorCommand): void {
    try {
      this.send({ type: 'command', command });
    } catch (error) {
      if (command.type === 'answer') return this.send({ type: 'command', command: { type: 'answer', ticket: command.ticket, outcome: unsentAnswer(command.outcome, error) } });
      if (command.type !== 'notify' && command.type !== 'progress') throw error;
    }
  }

  closeSession(session: string): void {
    if (this.sessions.delete(session)) this.command({ type: 'close_session', session });
  }

  private send(message: CallMessage): void {
    this.calls!.postMessage(message);
  }

  /** Shuts the actor down (child stopped), terminates the worker after the deadline. Idempotent. */
  stop(): Promise<void> {
    this.restarter?.stop();
    this.stopping ??= this.shutdown();
    return this.stopping;
  }

  private async shutdown(): Promise<void> {
    if (!(await this.started)) return;
    if (this.exitReason === null) {
      const deadlineMs = this.options.shutdownDeadlineMs ?? DEFAULT_SHUTDOWN_DEADLINE_MS;
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, deadlineMs)));
      await Promise.race([
        this.askShutdown().then((clean) => (this.cleanShutdown = clean)),
        deadline,
        this.exited,
      ]);
      clearTimeout(timer);
      await this.worker!.terminate();
    }
    await this.exited;
    if (!this.cleanShutdown) this.killOrphanedChild();
  }

  /** One OAuth sign-in step (see UpstreamAuth in the actor). */
  oauth(action: OAuthAction): Promise<OAuthOutcome> {
    const gone = (reason: string): OAuthOutcome => ({ ok: false, error: { code: 'UPSTREAM_UNAVAILABLE', message: `${this.name}: ${reason}` } });
    return this.use(() => {
      const seq = this.nextSeq++;
      return this.ask(seq, { type: 'oauth', seq, action }, (answer) => ('oauth' in answer ? answer.oauth : gone(failureOf(answer))), gone);
    }, gone);
  }

  /**
   * The worker's V8 heap, or null when it has none to report: not running, or
   * no answer within `deadlineMs` (a stuck worker must not hold up a scrape).
   */
  heap(deadlineMs: number): Promise<ActorHeap | null> {
    if (!this.worker || this.exitReason !== null) return Promise.resolve(null);
    const seq = this.nextSeq++;
    const timer = setTimeout(() => this.pending.get(seq)?.gone('no heap report in time'), deadlineMs);
    const read = (answer: CallAnswer): ActorHeap | null => ('heap' in answer ? answer.heap : null);
    return this.ask(seq, { type: 'heap', seq }, read, () => null).finally(() => clearTimeout(timer));
  }

  private askShutdown(): Promise<boolean> {
    const seq = this.nextSeq++;
    return this.ask(seq, { type: 'shutdown', seq }, (answer) => 'done' in answer, () => false);
  }

  /** A worker that died or was terminated cannot stop its stdio child; do it from here. */
  private killOrphanedChild(): void {
    const pid = this.lastStatus.pid;
    if (pid !== null) killChild(pid);
  }
}
