// The cancellation of one request or call: what its users read of an
// AbortSignal (aborted, reason, one-shot listeners) without an EventTarget.
// Node 20 makes each AbortSignal an EventTarget whose prototype is set after
// construction, so every signal has a hidden class of its own: making one
// costs microseconds and each read of it misses its inline cache. The main
// thread makes one per routed request, an actor two per call.

/** What the router, sessions and connections read of a signal; an AbortSignal is one too. */
export interface CancelSignal {
  readonly aborted: boolean;
  readonly reason: unknown;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

export class Cancel implements CancelSignal {
  aborted = false;
  reason: unknown = undefined;
  private listeners: Array<() => void> | null = null;

  /** Aborts once; listeners run in the order they were added, as an AbortSignal's do. */
  abort(reason?: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason === undefined ? new DOMException('This operation was aborted', 'AbortError') : reason;
    const listeners = this.listeners;
    this.listeners = null;
    if (listeners) for (const listener of listeners) listener();
  }

  /** A listener added after the abort never runs (the abort event is past), as with an AbortSignal. */
  addEventListener(_type: 'abort', listener: () => void, _options?: { once?: boolean }): void {
    if (!this.aborted) (this.listeners ??= []).push(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const at = this.listeners?.indexOf(listener) ?? -1;
    if (at !== -1) this.listeners!.splice(at, 1);
  }
}
