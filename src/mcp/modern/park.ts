// One modern call (tools/call, prompts/get, resources/read) whose upstream may
// ask its client something mid-call — the 2025 era's server→client requests.
// A modern client cannot be asked on its stream, so the call is kept in flight
// ("parked") while the client is answered input_required with the questions,
// and its retry brings the answers. The park collects the questions under
// keys (the upstream's own hint, else one of coffer's, never reused within the
// call), answers those the current request already carries, refuses those
// whose capability it did not declare (as a 2025 client without it would be),
// and tells its waiting exchange what happened next: the call ended, or
// questions are waiting and none came for a short while (the gather window,
// so questions asked together go in one input_required result).
import type { ForwardOutcome } from '../../protocol/actor.js';
import { requiredCapability } from '../../protocol/client-requests.js';
import { JSONRPC } from '../../protocol/errors.js';
import { isPlainObject, metaOf } from './wire.js';
import type { CancelSignal } from '../../protocol/cancel.js';

/** The _meta key under which an upstream may name its question (the inputRequests key the client sees). */
export const INPUT_KEY_META_KEY = 'coffer/inputKey';

export interface InputRequest {
  method: string;
  params: Record<string, unknown>;
}

/** Questions of one call waiting for its client at most: each holds the upstream's params until the caller's retry. */
export const MAX_OPEN_QUESTIONS = 64;

/** What a waiting exchange is told. */
export type ParkStep =
  | { kind: 'ended'; outcome: { ok: true; result: Record<string, unknown> } | { ok: false; error: unknown } }
  | { kind: 'input'; requests: Record<string, InputRequest> };

/** What the current request of the call brought: its declared capabilities and its inputResponses. */
export interface ParkRequest {
  capabilities: Record<string, unknown>;
  responses: Record<string, Record<string, unknown>>;
}

interface Question extends InputRequest {
  answer(outcome: ForwardOutcome): void;
}

const KEY_PREFIX: Readonly<Record<string, string>> = { 'sampling/createMessage': 'sampling', 'elicitation/create': 'elicitation', 'roots/list': 'roots' };

/** What a call that never asked has refused: nothing (one shared object). */
const NONE_REFUSED: Readonly<Record<string, Record<string, never>>> = Object.freeze({});

/** The questions of one call: made at its upstream's first question, as most calls never ask one. */
class Questions {
  readonly open = new Map<string, Question>();
  /** Every key given in this call, open or answered: an answer is only ever taken for the question it was given to. */
  private readonly used = new Set<string>();
  /** Capabilities the upstream needed and the client had not declared (for -32021 if the call then fails). */
  readonly refused: Record<string, Record<string, never>> = {};
  lastAskedAt = 0;
  private nextKey = 0;
  /** What the request now driving the call declared. */
  private capabilities: Record<string, unknown> = {};
  /** Its answers to questions not asked yet: each is let go once its question takes it (an answer may be megabytes). */
  private readonly early = new Map<string, Record<string, unknown>>();

  constructor(current: ParkRequest) {
    this.drive(current);
  }

  /** The request now driving the call: its answers go to their questions, and are not kept. */
  drive(request: ParkRequest): void {
    this.capabilities = request.capabilities;
    this.early.clear();
    for (const [key, response] of Object.entries(request.responses)) {
      const question = this.open.get(key);
      if (question) question.answer({ ok: true, result: response });
      // A key given already can take no answer any more.
      else if (!this.used.has(key)) this.early.set(key, response);
    }
  }

  /** `held`: the question waits for the caller now. */
  ask(method: string, params: Record<string, unknown>, signal: CancelSignal, held: () => void): Promise<ForwardOutcome> {
    const capability = requiredCapability(method);
    if (capability !== undefined && this.capabilities[capability] === undefined) {
      this.refused[capability] = {};
      return Promise.resolve({ ok: false, error: { code: JSONRPC.METHOD_NOT_FOUND, message: `Method not found: the client did not declare the ${capability} capability` } });
    }
    // Before a key is taken: a refused question leaves nothing behind.
    if (this.open.size >= MAX_OPEN_QUESTIONS) {
      return Promise.resolve({ ok: false, error: { code: JSONRPC.INTERNAL_ERROR, message: `coffer holds at most ${MAX_OPEN_QUESTIONS} questions of one call for its client at once: ask again once these are answered` } });
    }
    const { key, rest } = this.keyOf(method, params);
    const early = this.early.get(key);
    if (early !== undefined) {
      this.early.delete(key);
      return Promise.resolve({ ok: true, result: early });
    }
    return new Promise<ForwardOutcome>((resolve) => {
      const settle = (outcome: ForwardOutcome): void => {
        if (!this.open.delete(key)) return;
        signal.removeEventListener('abort', onAbort);
        resolve(outcome);
      };
      const onAbort = (): void => settle({ ok: false, error: { code: JSONRPC.INTERNAL_ERROR, message: String(signal.reason ?? 'cancelled by the server') } });
      this.open.set(key, { method, params: rest, answer: settle });
      signal.addEventListener('abort', onAbort, { once: true });
      this.lastAskedAt = Date.now();
      held();
    });
  }

  /** Refuses every open question. */
  abandon(reason: string): void {
    if (this.open.size === 0) return;
    for (const question of [...this.open.values()]) question.answer({ ok: false, error: { code: JSONRPC.INTERNAL_ERROR, message: reason } });
  }

  /** The open questions, as an input_required result lists them. */
  requests(): Record<string, InputRequest> {
    return Object.fromEntries([...this.open].map(([key, { method, params }]) => [key, { method, params }]));
  }

  /** The upstream's own key when it named one not used in this call, else coffer's; the hint is not passed on. */
  private keyOf(method: string, params: Record<string, unknown>): { key: string; rest: Record<string, unknown> } {
    const meta = metaOf(params);
    const hint = meta?.[INPUT_KEY_META_KEY];
    let rest = params;
    if (meta && hint !== undefined) {
      const { [INPUT_KEY_META_KEY]: _hint, ...others } = meta;
      rest = Object.keys(others).length === 0 ? withoutMeta(params) : { ...params, _meta: others };
    }
    let key = typeof hint === 'string' && hint.length > 0 && hint.length <= 128 && !this.used.has(hint) ? hint : undefined;
    // An upstream's key may be one coffer would make: coffer's skips it.
    while (key === undefined || this.used.has(key)) key = `${KEY_PREFIX[method] ?? 'input'}-${++this.nextKey}`;
    this.used.add(key);
    return { key, rest };
  }
}

/** A request waiting on its call's park. */
interface Waiter {
  request: { readonly aborted: boolean };
  resolve(step: ParkStep | null): void;
  /** The end of the gather window, while questions are open. */
  timer: NodeJS.Timeout | undefined;
}

export class Park {
  /** The round the next requestState names; a retry must name the current one. */
  round = 0;
  /** Made at the first question: every modern call has a park, few ever ask. */
  private questions: Questions | null = null;
  /** The request now driving the call, until the first question hands it to the questions (which let its answers go once taken). */
  private current: ParkRequest | null;
  private ended: Extract<ParkStep, { kind: 'ended' }> | null = null;
  /** The request waiting on the park now, if any. */
  private waiter: Waiter | null = null;

  constructor(
    first: ParkRequest,
    private readonly gatherMs: number,
  ) {
    this.current = first;
  }

  /** The request now driving the call (its first, or a retry): its answers go to their questions, and are not kept. */
  drive(request: ParkRequest): void {
    if (this.questions) this.questions.drive(request);
    else this.current = request;
  }

  /** Capabilities the upstream needed and the client had not declared (for -32021 if the call then fails). */
  get refused(): Readonly<Record<string, Record<string, never>>> {
    return this.questions?.refused ?? NONE_REFUSED;
  }

  /** The call's outcome, once. */
  end(outcome: Extract<ParkStep, { kind: 'ended' }>['outcome']): void {
    this.ended = { kind: 'ended', outcome };
    this.look();
  }

  get isEnded(): boolean {
    return this.ended !== null;
  }

  /** The upstream asks the client something during the call: answered now, refused, or held until a retry answers it. */
  ask(method: string, params: Record<string, unknown>, signal: CancelSignal): Promise<ForwardOutcome> {
    if (!this.questions) {
      this.questions = new Questions(this.current!);
      this.current = null;
    }
    return this.questions.ask(method, params, signal, () => this.look());
  }

  /**
   * Waits for what the caller must hear next: the call's end, or its open
   * questions once the gather window passed; null once `request` is aborted
   * (whoever aborts it calls poke()). A flag and one promise per wait, not an
   * AbortSignal or an async loop: this wait is on every modern call's path,
   * and most calls end without a question.
   */
  next(request: { readonly aborted: boolean }): Promise<ParkStep | null> {
    const step = this.stepFor(request);
    if (step !== undefined) return Promise.resolve(step);
    return new Promise((resolve) => {
      const waiter: Waiter = { request, resolve, timer: undefined };
      this.waiter = waiter;
      this.gatherUntil(waiter);
    });
  }

  /** Makes the waiting next() look again (its request was aborted). */
  poke(): void {
    this.look();
  }

  /** What `request` hears now; undefined while it must wait. */
  private stepFor(request: { readonly aborted: boolean }): ParkStep | null | undefined {
    if (this.ended) return this.ended;
    if (request.aborted) return null;
    const questions = this.questions;
    if (questions === null || questions.open.size === 0 || questions.lastAskedAt + this.gatherMs > Date.now()) return undefined;
    return { kind: 'input', requests: questions.requests() };
  }

  /** Something changed: the waiting request hears what it has to hear now, or waits on. */
  private look(): void {
    const waiter = this.waiter;
    if (waiter === null) return;
    clearTimeout(waiter.timer);
    const step = this.stepFor(waiter.request);
    if (step === undefined) return this.gatherUntil(waiter);
    this.waiter = null;
    waiter.resolve(step);
  }

  /** With questions open, the waiting request looks again when the gather window ends. */
  private gatherUntil(waiter: Waiter): void {
    const questions = this.questions;
    if (questions === null || questions.open.size === 0) return;
    waiter.timer = setTimeout(() => this.look(), Math.max(0, questions.lastAskedAt + this.gatherMs - Date.now()));
  }

  /** Refuses every open question (the call is over, or being given up). */
  abandon(reason: string): void {
    this.questions?.abandon(reason);
  }
}

function withoutMeta(params: Record<string, unknown>): Record<string, unknown> {
  const { _meta: _dropped, ...rest } = params;
  return rest;
}

/** What a request without inputResponses answers (nearly every request): one shared object, never changed. */
const NO_RESPONSES = Object.freeze({}) as Record<string, Record<string, unknown>>;

/** inputResponses as a request carries them: absent, or an object of objects; anything else is a protocol error (null included). */
export function parseInputResponses(value: unknown, present: boolean): Record<string, Record<string, unknown>> | string {
  if (!present) return NO_RESPONSES;
  if (!isPlainObject(value)) return 'inputResponses must be an object keyed by the inputRequests keys';
  for (const [key, response] of Object.entries(value)) {
    if (!isPlainObject(response)) return `inputResponses.${key.slice(0, 64)} must be an object (the client's result for that request)`;
  }
  return value as Record<string, Record<string, unknown>>;
}
