// A bound on how many of one kind of work run at once (workers booting, test
// connections): a slot is taken before the work starts and handed, when
// freed, to the longest waiter.
export class Slots {
  private free: number;
  private readonly waiting: Array<() => void> = [];

  constructor(limit: number) {
    this.free = Math.max(1, limit);
  }

  /** Resolves once a slot is free, with the function that frees it again (idempotent). */
  async acquire(): Promise<() => void> {
    if (this.free > 0) this.free -= 1;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    return this.releaser();
  }

  /** As acquire, but gives up after `waitMs` without a slot: null then. */
  async acquireWithin(waitMs: number): Promise<(() => void) | null> {
    if (this.free > 0) {
      this.free -= 1;
      return this.releaser();
    }
    const taken = await new Promise<boolean>((resolve) => {
      const take = (): void => {
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(() => {
        this.waiting.splice(this.waiting.indexOf(take), 1);
        resolve(false);
      }, waitMs);
      this.waiting.push(take);
    });
    return taken ? this.releaser() : null;
  }

  private releaser(): () => void {
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
