// The time limit of one forwarded call, which does not run while the upstream
// waits on the client: a sampling or elicitation request during the call is
// bounded by its own limit (the client's answer), and the call gets its full
// time again once the client has answered. A modern client's answer may come
// minutes later, as the retry of an input_required result.
export class Deadline {
  private timer: NodeJS.Timeout | undefined;
  private holds = 0;
  private expire: (() => void) | null = null;
  private ms = 0;

  /** Starts the limit (unless something holds it); `onExpire` runs once it passes. */
  arm(ms: number, onExpire: () => void): void {
    this.ms = ms;
    this.expire = onExpire;
    if (this.holds === 0) this.start();
  }

  /** Stops the clock until the returned release is called (each release counts once). */
  hold(): () => void {
    this.holds++;
    clearTimeout(this.timer);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (--this.holds === 0 && this.expire) this.start();
    };
  }

  disarm(): void {
    clearTimeout(this.timer);
    this.expire = null;
  }

  private start(): void {
    clearTimeout(this.timer);
    const expire = this.expire!;
    this.timer = setTimeout(() => {
      this.expire = null;
      expire();
    }, this.ms);
  }
}
