// The one `subscriptions/listen` stream coffer keeps open to a 2026-07-28-era
// upstream: it asks for the list changes the upstream can announce and for
// updates of the resources coffer's clients subscribed to. Its notifications
// arrive through the connection like any other (list_changed ⇒ R3). A stream
// that ends or breaks is opened again with backoff; one that comes back after
// a drop may have missed notifications, so the caller is told (onReopened).
export interface ListenFilter {
  toolsListChanged?: true;
  promptsListChanged?: true;
  resourcesListChanged?: true;
}

/** Opens one listen with these `notifications`; settles when the stream ends. `signal` closes it. */
export type OpenListen = (notifications: Record<string, unknown>, signal: AbortSignal) => Promise<unknown>;

const RETRY_INITIAL_MS = 500;
const RETRY_MAX_MS = 30_000;

/** The delay before the `failures`-th reopen in a row (1-based): doubling, capped. Pure. */
export function listenRetryMs(failures: number): number {
  return Math.min(RETRY_MAX_MS, RETRY_INITIAL_MS * 2 ** Math.max(0, failures - 1));
}

export class UpstreamListener {
  private readonly resources = new Set<string>();
  private current: AbortController | null = null;
  private failures = 0;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly open: OpenListen,
    private readonly filter: ListenFilter,
    private readonly note: (text: string) => void,
    private readonly onReopened: () => void,
  ) {}

  start(): void {
    if (Object.keys(this.filter).length > 0 || this.resources.size > 0) this.openNow();
  }

  subscribe(uri: string): void {
    if (this.resources.has(uri)) return;
    this.resources.add(uri);
    this.reopen();
  }

  unsubscribe(uri: string): void {
    if (this.resources.delete(uri)) this.reopen();
  }

  /** The upstream acknowledged the stream: it is up, the backoff starts afresh; after a drop, something may have been missed. */
  acknowledged(): void {
    if (this.failures > 0) this.onReopened();
    this.failures = 0;
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.current?.abort();
    this.current = null;
  }

  /** The subscribed set changed: the stream is replaced (a listen's filter is fixed when it opens). */
  private reopen(): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.current?.abort();
    this.openNow();
  }

  private openNow(): void {
    const abort = new AbortController();
    this.current = abort;
    const notifications = { ...this.filter, ...(this.resources.size > 0 ? { resourceSubscriptions: [...this.resources] } : {}) };
    this.open(notifications, abort.signal).then(
      () => this.ended(abort, 'the upstream ended it'),
      (error: unknown) => this.ended(abort, error instanceof Error ? error.message : String(error)),
    );
  }

  private ended(abort: AbortController, why: string): void {
    // Closed on purpose (stopped, or replaced by a stream with another filter).
    if (this.stopped || abort !== this.current || abort.signal.aborted) return;
    this.current = null;
    this.failures += 1;
    const delayMs = listenRetryMs(this.failures);
    this.note(`subscriptions/listen stream closed (${why}); reopening in ${delayMs} ms`);
    this.timer = setTimeout(() => this.openNow(), delayMs);
    this.timer.unref();
  }
}
