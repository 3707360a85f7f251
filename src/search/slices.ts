// Long work on the router's thread, done in slices: between two, whatever else
// waits on the thread (requests, answers, timers) gets its turn, so indexing
// tens of thousands of tools never holds it for more than a few milliseconds.
import { setImmediate as nextTurn } from 'node:timers/promises';

/** The longest one slice holds the thread. */
export const SLICE_MS = 8;

export class Slices {
  private started = performance.now();

  /** Lets the thread's other work run once this slice has had its time; call it between two small steps. */
  async pause(): Promise<void> {
    if (performance.now() - this.started < SLICE_MS) return;
    await nextTurn();
    this.started = performance.now();
  }
}
