// The per-session list cache of one upstream (R2, R3): one entry per kind with
// a TTL, a version that moves only when the content changes, and one shared
// in-flight fetch per kind. Time comes from `now` so tests need no sleeping.
import { LIST_KINDS, type ListKind } from '../../src/protocol/capabilities.js';
import { sameList, type EncodedList } from '../../src/protocol/list-codec.js';

/** `ttlMs`: the upstream's own cache lifetime for the list (2026-07-28 era), if it gave one. */
export type FetchedList = ({ state: 'live'; list: EncodedList } | { state: 'unsupported' }) & { ttlMs?: number };

/**
 * An upstream's `ttlMs` can shorten a list's life in the cache, never below
 * this: an upstream answering `ttlMs: 0` (the v2 SDK's default) would otherwise
 * turn every client's list into an upstream request. Concurrent lists share
 * one fetch anyway (shared()).
 */
export const MIN_REFETCH_MS = 1_000;

export type CachedList = FetchedList & { version: number; fetchedAt: number };

function sameContent(a: FetchedList, b: FetchedList): boolean {
  if (a.state !== 'live' || b.state !== 'live') return a.state === b.state;
  return sameList(a.list, b.list);
}

export class ListCache {
  /** The last list stored per kind, kept after a drop so the next store can tell whether it changed. */
  private readonly latest = new Map<ListKind, CachedList>();
  private readonly valid = new Set<ListKind>();
  private readonly inFlight = new Map<ListKind, Promise<unknown>>();
  /** Bumped on every drop, so a fetch that started before the drop does not refill the cache. */
  private readonly generations = new Map<ListKind, number>();
  private nextVersion = 1;

  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** The cached list, or undefined when absent, dropped or older than the TTL. */
  get(kind: ListKind): CachedList | undefined {
    const entry = this.latest.get(kind);
    if (!entry || !this.valid.has(kind)) return undefined;
    if (this.now() >= this.expiresAt(entry)) {
      this.valid.delete(kind);
      return undefined;
    }
    return entry;
  }

  /** When an entry goes stale: coffer's TTL, or the upstream's ttlMs when shorter (but not below MIN_REFETCH_MS). */
  expiresAt(entry: CachedList): number {
    return entry.fetchedAt + Math.min(this.ttlMs, Math.max(MIN_REFETCH_MS, entry.ttlMs ?? Infinity));
  }

  generation(kind: ListKind): number {
    return this.generations.get(kind) ?? 0;
  }

  /** Records a fetch started at `generation`; it serves later calls only if nothing dropped the kind meanwhile. */
  store(kind: ListKind, fetched: FetchedList, generation: number): CachedList {
    const previous = this.latest.get(kind);
    const version = previous && sameContent(previous, fetched) ? previous.version : this.nextVersion++;
    const entry: CachedList = { ...fetched, version, fetchedAt: this.now() };
    this.latest.set(kind, entry);
    if (generation === this.generation(kind)) this.valid.add(kind);
    return entry;
  }

  /** Returns whether the kind had a cached list. */
  drop(kind: ListKind): boolean {
    this.generations.set(kind, this.generation(kind) + 1);
    this.inFlight.delete(kind);
    const had = this.get(kind) !== undefined;
    this.valid.delete(kind);
    return had;
  }

  /** Drops every kind; returns those that had been cached. */
  dropAll(): ListKind[] {
    return LIST_KINDS.filter((kind) => this.drop(kind));
  }

  /** Concurrent callers for one kind share the fetch already running. */
  shared<T>(kind: ListKind, fetch: () => Promise<T>): Promise<T> {
    const running = this.inFlight.get(kind) as Promise<T> | undefined;
    if (running) return running;
    const started = fetch().finally(() => {
      if (this.inFlight.get(kind) === started) this.inFlight.delete(kind);
    });
    this.inFlight.set(kind, started);
    return started;
  }
}
