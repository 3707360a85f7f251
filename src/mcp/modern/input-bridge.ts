// The modern era's multi-round-trip calls through coffer. A modern caller's
// tools/call, prompts/get or resources/read runs in a Park: when its upstream
// (of the 2025 era) asks the client something, the caller is answered
// input_required with the questions and a sealed requestState, the upstream
// call stays in flight, and the caller's retry (the state and its
// inputResponses) answers the questions and waits for what comes next —
// another round, or the call's result. A park lives until its call's outcome
// is delivered, PARK_TTL_MS after its last input_required, or until the
// credential that started it goes. An upstream of
// the 2026 era answers input_required itself: that result goes to the caller
// with the upstream's requestState sealed inside coffer's, and the retry is a
// new call to that upstream with the answers and its state; coffer remembers
// each such state it gave out until its retry, so it is used once.
import type { RequestTrace } from '../../ops/tracing.js';
import type { Progress } from '../../protocol/actor.js';
import { JSONRPC } from '../../protocol/errors.js';
import type { ForwardContext } from '../../router/calls.js';
import { inputRequestsOf } from '../../router/input-driver.js';
import type { LogLevel } from '../../router/log-levels.js';
import { RpcError } from '../rpc-error.js';
import { Park, parseInputResponses, type ParkRequest, type ParkStep } from './park.js';
import { RequestStateSeal, type StateBinding, type StateHandle } from './request-state.js';
import { Cancel } from '../../protocol/cancel.js';

/** How long a caller has to retry after an input_required (the SDK's requestState lifetime). */
export const PARK_TTL_MS = 10 * 60_000;
/** Questions asked within this of each other go in one input_required result. */
export const GATHER_MS = 50;
/** Open calls at most; past it the one waiting longest for its caller's retry is given up, and with none waiting a new call is refused. */
export const MAX_PARKS = 1024;
/** A modern upstream's states waiting for their retry at most; past it the oldest is forgotten (its retry is refused). */
export const MAX_WRAP_STATES = 16_384;

export interface BridgeLimits {
  parks: number;
  wrapStates: number;
}

/** Where a parked call's notifications and progress go while a request of its caller waits on it. */
export interface ParkListener {
  notify(method: string, params: Record<string, unknown>): void;
  progress?: (progress: Progress) => void;
}

/** Whether a request's HTTP exchange was closed by its client, and a hook for when it is (an HttpReply is one). */
export interface RequestLife {
  readonly aborted: boolean;
  onAbort(handler: () => void): void;
}

/** One request of a modern caller for a call that may take several rounds. */
export interface BridgedRequest {
  method: string;
  params: Record<string, unknown>;
  requestId: string | number;
  capabilities: Record<string, unknown>;
  /** The caller's credential digest (callerKey): a requestState is only good for the caller it was given to. */
  caller: string;
  /** The id of the credential the request was let in with: a call it starts ends when that credential goes. */
  credential: string;
  /** The HTTP request: its closing means the caller gave up the call. */
  life: RequestLife;
  listener: ParkListener;
  /** The log messages the caller wants (its envelope's level): what a modern upstream is asked for. */
  logLevel?: LogLevel;
  /** The request's spans: a call started by it is traced under it (a retry's request only answers the call). */
  trace?: RequestTrace;
  /** Runs the call (the methods' handler) as this caller id, with this context. */
  run(ctx: Omit<ForwardContext, 'toolset'>): Promise<Record<string, unknown>>;
}

export interface BridgeHooks {
  /** A new caller id for the router (unique, under the modern prefix). */
  callerId(): string;
  /** Whom the router's messages for a caller id reach (null: nobody now). */
  route(callerId: string, listener: ParkListener | null): void;
  /** The call of this caller id is over (its per-session connections can close). */
  ended(callerId: string): void;
  /** Stamps resultType and coffer's identity on a result. */
  stamp(result: Record<string, unknown>): Record<string, unknown>;
}

interface Entry {
  id: string;
  park: Park;
  callerId: string;
  /** The credential the call was started with. */
  credential: string;
  abort: Cancel;
  ttl?: NodeJS.Timeout;
  /** A request of the caller is waiting on the park now. */
  attached: ParkListener | null;
}

/** A question whose capability the caller did not declare is never handed to it: the call fails -32021 naming what it lacks. */
function assertDeclared(server: string, result: Record<string, unknown>, capabilities: Record<string, unknown>): void {
  const missing = [...new Set(inputRequestsOf(result).map((request) => request.capability))].filter((capability) => capabilities[capability] === undefined);
  if (missing.length === 0) return;
  throw RpcError.coffer(
    JSONRPC.MISSING_CLIENT_CAPABILITY,
    'MISSING_CLIENT_CAPABILITY',
    `server '${server}' asked for ${missing.join(', ')}, which the request did not declare in its clientCapabilities: declare it to be asked`,
    { requiredCapabilities: Object.fromEntries(missing.map((capability) => [capability, {}])) },
  );
}

const NAME_FIELD: Readonly<Record<string, 'name' | 'uri'>> = { 'tools/call': 'name', 'prompts/get': 'name', 'resources/read': 'uri' };

export class InputBridge {
  private readonly parks = new Map<string, Entry>();
  /** The parks waiting for their caller's retry, longest first: the only ones given up to make room. */
  private readonly waiting = new Set<Entry>();
  /** The calls answered with a modern upstream's input_required whose state was not used yet: when each may be forgotten, oldest first. */
  private readonly wrapStates = new Map<string, number>();

  constructor(
    private readonly hooks: BridgeHooks,
    private readonly seal = new RequestStateSeal(),
    private readonly limits: BridgeLimits = { parks: MAX_PARKS, wrapStates: MAX_WRAP_STATES },
  ) {}

  /** Answers one request: the call's result, or input_required with what it waits for. */
  async serve(request: BridgedRequest): Promise<Record<string, unknown>> {
    const { params } = request;
    const responses = parseInputResponses(params.inputResponses, 'inputResponses' in params);
    if (typeof responses === 'string') throw RpcError.invalidParams(responses);
    const binding: StateBinding = { caller: request.caller, method: request.method, target: String(params[NAME_FIELD[request.method] ?? 'name']) };
    const parkRequest = { capabilities: request.capabilities, responses };
    const handle = params.requestState === undefined ? null : this.seal.open(params.requestState, binding);
    // A modern upstream's own round: a new call to it, with the answers and its state.
    // A first request's own inputResponses answer a 2025 upstream's questions (the park) or go to a modern upstream as they came.
    const unasked = Object.keys(responses).length > 0 ? { inputResponses: responses, requestState: null } : undefined;
    const entry =
      handle === null
        ? this.start(request, parkRequest, binding, unasked)
        : handle.kind === 'wrap'
          ? this.retryUpstream(request, handle, binding, responses)
          : handle.kind === 'park'
            ? this.resume(handle, parkRequest)
            : this.notAState();
    entry.attached = request.listener;
    this.hooks.route(entry.callerId, request.listener);
    const park = entry.park;
    request.life.onAbort(() => park.poke());
    let step: ParkStep | null;
    try {
      step = await park.next(request.life);
    } finally {
      entry.attached = null;
      this.hooks.route(entry.callerId, null);
    }
    if (step === null) {
      this.close(entry, 'the client closed the request');
      throw new RpcError(JSONRPC.INTERNAL_ERROR, 'the client closed the request');
    }
    if (step.kind === 'ended') {
      this.close(entry, null);
      // The call's result was stamped by the methods that ran it.
      return this.outcome(entry.park, step.outcome);
    }
    entry.park.round++;
    this.expireIn(entry);
    const requestState = this.seal.seal({ kind: 'park', park: entry.id, round: entry.park.round }, binding, PARK_TTL_MS);
    return this.hooks.stamp({ resultType: 'input_required', inputRequests: step.requests, requestState });
  }

  /** The credential was revoked, rotated out or bound to another view: its calls are given up, parked or not (a retry of one is refused). */
  closeCredential(credential: string): void {
    for (const entry of [...this.parks.values()]) if (entry.credential === credential) this.close(entry, "the client's credential was revoked or bound to another view");
  }

  /** Daemon shutdown: every parked call is given up. */
  closeAll(): void {
    for (const entry of [...this.parks.values()]) this.close(entry, 'coffer is shutting down');
  }

  private start(request: BridgedRequest, first: ParkRequest, binding: StateBinding, retry?: ForwardContext['retry']): Entry {
    this.makeRoom();
    const park = new Park(first, GATHER_MS);
    // The caller id is unique for the daemon's life, and a requestState naming it is sealed with a key of that life only.
    const callerId = this.hooks.callerId();
    const entry: Entry = { id: callerId, park, callerId, credential: request.credential, abort: new Cancel(), attached: null };
    this.parks.set(entry.id, entry);
    const wantsProgress = (request.params._meta as { progressToken?: unknown } | undefined)?.progressToken !== undefined;
    const ctx: Omit<ForwardContext, 'toolset'> = {
      sessionId: entry.callerId,
      caller: request.caller,
      answerTimeoutMs: PARK_TTL_MS,
      requestId: request.requestId,
      capabilities: request.capabilities,
      signal: entry.abort,
      ask: (method, params, signal) => park.ask(method, params, signal),
      onInputRequired: (server, key, result) => this.wrap(server, key, result, binding, entry.id, request.capabilities),
    };
    // Set one by one: spreads of conditional literals cost a temporary object and a slow literal each, on every modern call.
    if (retry) ctx.retry = retry;
    if (request.trace) ctx.trace = request.trace;
    if (request.logLevel) ctx.logLevel = request.logLevel;
    if (wantsProgress) ctx.onProgress = (progress: Progress) => entry.attached?.progress?.(progress);
    request
      .run(ctx)
      .then(
        (result) => park.end({ ok: true, result }),
        (error: unknown) => park.end({ ok: false, error }),
      );
    return entry;
  }

  /** A modern upstream's input_required, made the caller's: its requests as they are (each one the caller may be asked), its state inside coffer's. */
  private wrap(server: string, key: string, result: Record<string, unknown>, binding: StateBinding, call: string, capabilities: Record<string, unknown>): Record<string, unknown> {
    assertDeclared(server, result, capabilities);
    const upstream = typeof result.requestState === 'string' ? result.requestState : null;
    const requestState = this.seal.seal({ kind: 'wrap', server, key, upstream, call }, binding, PARK_TTL_MS);
    this.rememberWrap(call);
    return { resultType: 'input_required', ...(result.inputRequests === undefined ? {} : { inputRequests: result.inputRequests }), requestState };
  }

  /** Kept no longer than the state is valid, and within the bound: forgetting a state only makes its retry refused. */
  private rememberWrap(call: string): void {
    const now = Date.now();
    for (const [oldest, until] of this.wrapStates) {
      if (until > now && this.wrapStates.size < this.limits.wrapStates) break;
      this.wrapStates.delete(oldest);
    }
    // Taken after sealing, so it outlives the state's own expiry.
    this.wrapStates.set(call, now + PARK_TTL_MS);
  }

  /** The retry of a modern upstream's input_required: a new call to it with the answers and its state, once per state. */
  private retryUpstream(request: BridgedRequest, handle: Extract<StateHandle, { kind: 'wrap' }>, binding: StateBinding, responses: ParkRequest['responses']): Entry {
    // Before the state is taken: a retry refused for want of room can be sent again.
    this.makeRoom();
    if (!this.wrapStates.delete(handle.call)) {
      throw RpcError.coffer(
        JSONRPC.INVALID_PARAMS,
        'REQUEST_STATE_INVALID',
        `this requestState was already used, or forgotten as the oldest of more than ${this.limits.wrapStates} waiting: retry with the requestState of the latest input_required result, or call again without requestState and inputResponses`,
      );
    }
    return this.start(request, { capabilities: request.capabilities, responses: {} }, binding, { server: handle.server, key: handle.key, inputResponses: responses, requestState: handle.upstream });
  }

  /** A sealed value of coffer's that is not a requestState (a taskId is bound to no method of these, so this is only reached by a coding error). */
  private notAState(): never {
    throw RpcError.coffer(JSONRPC.INVALID_PARAMS, 'REQUEST_STATE_INVALID', 'requestState is not a requestState of coffer\'s: call again without requestState and inputResponses');
  }

  private resume(handle: Extract<StateHandle, { kind: 'park' }>, request: ParkRequest): Entry {
    const entry = this.parks.get(handle.park);
    if (!entry) {
      throw RpcError.coffer(JSONRPC.INVALID_PARAMS, 'REQUEST_STATE_EXPIRED', 'the call this requestState continues is over (its answer was given, it waited too long, its credential was revoked, or coffer restarted): call again without requestState and inputResponses');
    }
    if (entry.park.round !== handle.round || entry.attached) {
      throw RpcError.coffer(JSONRPC.INVALID_PARAMS, 'REQUEST_STATE_INVALID', 'this requestState was already used: retry with the requestState of the latest input_required result');
    }
    clearTimeout(entry.ttl);
    this.waiting.delete(entry);
    entry.park.drive(request);
    return entry;
  }

  /** The call's outcome for the caller; a failure after the upstream needed a capability the caller lacks is -32021. */
  private outcome(park: Park, outcome: Extract<ParkStep, { kind: 'ended' }>['outcome']): Record<string, unknown> {
    const failed = !outcome.ok || outcome.result.isError === true;
    if (!failed) return outcome.result;
    const missing = Object.keys(park.refused);
    if (missing.length > 0) {
      const why = outcome.ok ? 'the call failed' : `the call failed: ${outcome.error instanceof Error ? outcome.error.message : String(outcome.error)}`;
      throw RpcError.coffer(JSONRPC.MISSING_CLIENT_CAPABILITY, 'MISSING_CLIENT_CAPABILITY', `the upstream asked for ${missing.join(', ')}, which the request did not declare in its clientCapabilities, and ${why}`, {
        requiredCapabilities: park.refused,
      });
    }
    if (!outcome.ok) throw outcome.error;
    return outcome.result;
  }

  /** Room for one more call: a park waiting for its caller is given up, never a call someone is waiting on. */
  private makeRoom(): void {
    if (this.parks.size < this.limits.parks) return;
    const idle = this.waiting.values().next().value;
    if (idle === undefined) {
      throw RpcError.coffer(JSONRPC.UPSTREAM_BUSY, 'UPSTREAM_BUSY', `coffer has ${this.limits.parks} calls of 2026-07-28 clients running, its limit: retry when fewer are in flight`);
    }
    this.close(idle, `more than ${this.limits.parks} calls were open, and this one had waited longest for its client's retry`);
  }

  private expireIn(entry: Entry): void {
    this.waiting.add(entry);
    entry.ttl = setTimeout(() => this.close(entry, `the client did not retry within ${PARK_TTL_MS} ms of its input_required result`), PARK_TTL_MS);
    entry.ttl.unref();
  }

  /** Ends a park: its call is cancelled unless it is over (`reason` null: its outcome was delivered). */
  private close(entry: Entry, reason: string | null): void {
    if (!this.parks.delete(entry.id)) return;
    clearTimeout(entry.ttl);
    this.waiting.delete(entry);
    // A question still open now can never be answered (a retry finds the call over): its upstream hears so at once, over or not.
    entry.park.abandon(reason ?? 'the call ended before its client answered this request');
    if (reason !== null && !entry.park.isEnded) entry.abort.abort(reason);
    this.hooks.ended(entry.callerId);
  }
}
