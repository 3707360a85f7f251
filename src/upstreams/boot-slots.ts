// Bounds how many actor workers boot at once. A worker's boot is CPU work (a
// V8 isolate, Node's bootstrap, the actor's modules: ~140 ms here); hundreds
// started together share the cores until all of them are ready at about the
// same late moment, and the main thread starves meanwhile (REST answers took
// up to 12 s with 200 at once). In slots, the first upstreams are ready early
// and the main thread keeps answering; the total is the same CPU either way.
export class BootSlots {
  private free: number;
  private readonly waiting: Array<() => void> = [];

  constructor(limit: number) {
    this.free = Math.max(1, limit);
  }

  /** Resolves once a slot is free, with the function that frees it again (idempotent). */
  async acquire(): Promise<() => void> {
    if (this.free > 0) this.free -= 1;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next) next();
      else this.free += 1;
    };
  }
}
