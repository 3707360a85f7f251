// The invocation log's main-thread half: the router's records are buffered and
// handed to the DB writer in batches, off the call's hot path. add() never waits
// and never grows memory without bound: with the writer down or slow, the oldest
// records are dropped (and counted) once the buffer is full.
import type { DbWriterCalls } from '../db/writer-handle.js';
import type { InvocationRecord } from '../protocol/events.js';

/** How long a record waits for its batch to fill, unless told otherwise. */
export const DEFAULT_FLUSH_MS = 500;

export interface InvocationLogOptions {
  /** Records per recordInvocations call (default 200). */
  maxBatch?: number;
  /** How long a record may wait for its batch to fill (default DEFAULT_FLUSH_MS). */
  flushMs?: number;
  /** Records held while the writer is down or slow; beyond it the oldest go (default 10 000). */
  maxBuffered?: number;
  /** Longest wait between two attempts while the writer keeps failing (default 30 s). */
  maxRetryMs?: number;
}

/** A fixed-capacity ring: push at the back, take and give back at the front, all O(1). */
class Ring<T> {
  private readonly items: (T | undefined)[];
  private head = 0;
  size = 0;

  constructor(readonly capacity: number) {
    this.items = new Array<T | undefined>(capacity);
  }

  /** Answers false (nothing stored) when full. */
  push(item: T): boolean {
    if (this.size === this.capacity) return false;
    this.items[(this.head + this.size) % this.capacity] = item;
    this.size++;
    return true;
  }

  /** Back at the front, as the oldest; false when full. */
  unshift(item: T): boolean {
    if (this.size === this.capacity) return false;
    this.head = (this.head - 1 + this.capacity) % this.capacity;
    this.items[this.head] = item;
    this.size++;
    return true;
  }

  shift(): T | undefined {
    if (this.size === 0) return undefined;
    const item = this.items[this.head];
    this.items[this.head] = undefined;
    this.head = (this.head + 1) % this.capacity;
    this.size--;
    return item;
  }
}

export class InvocationLog {
  private readonly maxBatch: number;
  private readonly flushMs: number;
  private readonly maxRetryMs: number;
  private readonly buffer: Ring<InvocationRecord>;
  private timer: NodeJS.Timeout | null = null;
  /** The running flush; flushes never overlap, so batches reach the writer in order. */
  private flushing: Promise<void> | null = null;
  /** Records dropped and not reported yet. */
  private dropped = 0;
  private failures = 0;
  private closed = false;

  constructor(
    private readonly writer: Pick<DbWriterCalls, 'recordInvocations'>,
    options: InvocationLogOptions = {},
    private readonly onError: (error: Error) => void = () => {},
  ) {
    this.maxBatch = Math.max(1, Math.floor(options.maxBatch ?? 200));
    this.flushMs = Math.max(0, options.flushMs ?? DEFAULT_FLUSH_MS);
    this.maxRetryMs = Math.max(this.flushMs, options.maxRetryMs ?? 30_000);
    this.buffer = new Ring(Math.max(this.maxBatch, Math.floor(options.maxBuffered ?? 10_000)));
  }

  /** Records waiting for the writer (tests, status). */
  get pending(): number {
    return this.buffer.size;
  }

  /** O(1); never waits. After close() records are not kept. */
  add(record: InvocationRecord): void {
    if (this.closed) return;
    if (!this.buffer.push(record)) {
      this.buffer.shift();
      this.dropped++;
      this.buffer.push(record);
    }
    if (this.flushing) return;
    // A full batch goes at once (unless the writer is failing: then the retry timer decides).
    if (this.buffer.size >= this.maxBatch && this.failures === 0) this.schedule(0);
    else this.schedule(this.flushMs);
  }

  /** Hands every record buffered now to the writer, batch by batch. Never rejects: failures go to onError. */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const previous = this.flushing ?? Promise.resolve();
    const run = previous.then(() => this.drain());
    const flushing = run.finally(() => {
      if (this.flushing !== flushing) return;
      this.flushing = null;
      if (this.buffer.size > 0 && !this.closed) this.schedule(this.retryDelay());
    });
    this.flushing = flushing;
    return flushing;
  }

  /** Flushes what is buffered (one attempt), then takes no more records. */
  async close(): Promise<void> {
    if (this.closed) return this.flushing ?? undefined;
    this.closed = true;
    await this.flush();
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.buffer.size > 0) {
      const lost = this.buffer.size;
      while (this.buffer.shift() !== undefined);
      this.report(new Error(`invocation log closed with ${lost} records the DB writer did not take: they are lost`));
    }
  }

  private schedule(delayMs: number): void {
    if (this.timer) {
      if (delayMs > 0) return;
      clearTimeout(this.timer);
    }
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.flush();
    }, delayMs);
    this.timer.unref();
  }

  /** Doubles per consecutive failure, up to maxRetryMs: a dead writer is not hammered. */
  private retryDelay(): number {
    if (this.failures === 0) return this.buffer.size >= this.maxBatch ? 0 : this.flushMs;
    return Math.min(this.maxRetryMs, Math.max(this.flushMs, 50) * 2 ** Math.min(this.failures - 1, 16));
  }

  private async drain(): Promise<void> {
    // Only what is buffered now: a steady stream of new records cannot keep one flush going forever.
    let budget = this.buffer.size;
    let failure: Error | null = null;
    while (budget > 0 && this.buffer.size > 0) {
      const batch: InvocationRecord[] = [];
      while (batch.length < this.maxBatch && budget > 0) {
        const record = this.buffer.shift();
        if (record === undefined) break;
        batch.push(record);
        budget--;
      }
      try {
        await this.writer.recordInvocations(batch);
        this.failures = 0;
      } catch (error) {
        this.failures++;
        failure = error instanceof Error ? error : new Error(String(error));
        // Back at the front, oldest first; whatever no longer fits is the oldest, so it is dropped.
        for (let i = batch.length - 1; i >= 0; i--) {
          if (!this.buffer.unshift(batch[i]!)) {
            this.dropped += i + 1;
            break;
          }
        }
        break;
      }
    }
    if (failure || this.dropped > 0) {
      const parts: string[] = [];
      if (failure) parts.push(`the DB writer did not take ${this.buffer.size} invocation records (kept, retrying): ${failure.message}`);
      if (this.dropped > 0) parts.push(`${this.dropped} invocation records were dropped (buffer of ${this.buffer.capacity} full)`);
      this.dropped = 0;
      this.report(new Error(parts.join('; ')));
    }
  }

  private report(error: Error): void {
    try {
      this.onError(error);
    } catch {
      // A failing error listener must not break the log (or leave a flush rejected).
    }
  }
}
