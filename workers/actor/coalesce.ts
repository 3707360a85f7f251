// Coalesces bursts of a repeated signal per key: the first passes at once,
// any more within `windowMs` become one trailing delivery (with the latest
// payload) at the window's end. Used for list_changed: ten in a row mean the
// same as one, and an upstream sending thousands a second must not make
// every client re-list thousands of times.
export class Coalescer<T> {
  private readonly open = new Map<string, { pending: { payload: T } | null; timer: NodeJS.Timeout }>();

  constructor(
    private readonly windowMs: number,
    private readonly deliver: (key: string, payload: T) => void,
  ) {}

  push(key: string, payload: T): void {
    const window = this.open.get(key);
    if (window) {
      window.pending = { payload };
      return;
    }
    this.deliver(key, payload);
    this.start(key);
  }

  private start(key: string): void {
    const window = {
      pending: null as { payload: T } | null,
      timer: setTimeout(() => {
        this.open.delete(key);
        if (window.pending) {
          this.deliver(key, window.pending.payload);
          this.start(key);
        }
      }, this.windowMs),
    };
    window.timer.unref();
    this.open.set(key, window);
  }

  /** Drops whatever is pending (the session it belonged to ended). */
  clear(): void {
    for (const window of this.open.values()) clearTimeout(window.timer);
    this.open.clear();
  }
}
