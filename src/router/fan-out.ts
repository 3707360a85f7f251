// The fail-open policy of a list: every upstream is asked with a deadline
// counted from the client's list, and one that misses it or fails is left out
// of the answer (degraded) until one of its lists answers again (recovered).
// A list still out after its deadline is not waited for again: its late
// answer fills the caches and tells the sessions to list again.
import type { ListKind } from '../protocol/capabilities.js';
import type { Upstream } from '../upstreams/upstream.js';
import type { Item } from './merge.js';
import type { UpstreamLists } from './upstream-lists.js';

/** One upstream's part of a list. */
export interface UpstreamAnswer {
  server: string;
  items: Item[];
  /** The actor's version of this list. */
  version: number;
}

export interface FanOutEvents {
  degraded(server: string, kind: ListKind, reason: string): void;
  recovered(server: string, kind: ListKind): void;
  /** Sessions must list this kind again: a left-out upstream may have items now. */
  listAgain(kind: ListKind): void;
  /** One upstream's part of a client's list: from a fresh copy (`seconds` null) or asked of its actor. */
  listed?(server: string, kind: ListKind, seconds: number | null, cached: boolean): void;
  deadlineMissed?(server: string, kind: ListKind): void;
}

const MISSED = Symbol('missed');

export class FanOut {
  /** Upstreams left out of an answer, per kind, until they answer again. */
  private missed = new Map<string, Set<ListKind>>();
  /** Lists (server, kind) that missed their deadline and have not answered yet. */
  private late = new Set<string>();
  /** Per server, how often it was forgotten: a list out across that says nothing of the server as it is now. */
  private forgotten = new Map<string, number>();

  constructor(
    private readonly lists: UpstreamLists,
    private readonly events: FanOutEvents,
  ) {}

  /** The answers of the upstreams that have one in time; those whose copy is fresh are not asked. */
  async gather(upstreams: readonly Upstream[], kind: ListKind): Promise<UpstreamAnswer[]> {
    const now = Date.now();
    // Every deadline counts from here, not from when its upstream's request went out: posting to hundreds of actors
    // (and a GC pause on the way) must not push the last ones' deadlines later.
    const started = performance.now();
    const answers = await Promise.all(
      upstreams.map((upstream) => {
        const copy = this.lists.cached(upstream.name, kind, now);
        if (!copy) return this.withDeadline(upstream, kind, started);
        this.events.listed?.(upstream.name, kind, null, true);
        return { server: upstream.name, items: copy.items, version: copy.version };
      }),
    );
    return answers.filter((answer): answer is UpstreamAnswer => answer !== null);
  }

  private async withDeadline(upstream: Upstream, kind: ListKind, started: number): Promise<UpstreamAnswer | null> {
    const key = `${upstream.name}\u0000${kind}`;
    // Its last list missed the deadline and is still out: waiting again would only add the deadline to this answer.
    // The actor shares that in-flight request, and its arrival tells every session to list again.
    if (this.late.has(key)) return null;
    const deadlineMs = upstream.config.timeouts.list_deadline_ms;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<typeof MISSED>((resolve) => {
      timer = setTimeout(() => resolve(MISSED), Math.max(0, started + deadlineMs - performance.now()));
    });
    const asked = performance.now();
    const forgotten = this.forgotten.get(upstream.name);
    const pending = this.lists.fetch(upstream, kind, false);
    const fetched = await Promise.race([pending, deadline]);
    clearTimeout(timer);
    // Removed or disabled meanwhile (its actor stopping fails the list): not left out of anything, nor in the answer.
    if (this.forgotten.get(upstream.name) !== forgotten) return null;
    if (fetched === MISSED) {
      this.events.deadlineMissed?.(upstream.name, kind);
      this.markMissed(upstream.name, kind, `no answer within ${deadlineMs} ms`);
      this.late.add(key);
      pending
        .then(({ answer }) => answer.ok && this.markAnswered(upstream.name, kind))
        .catch(() => undefined)
        .finally(() => this.late.delete(key));
      return null;
    }
    const { answer } = fetched;
    this.events.listed?.(upstream.name, kind, (performance.now() - asked) / 1000, answer.ok && answer.cached === true);
    if (!answer.ok) {
      this.markMissed(upstream.name, kind, `${answer.error.code}: ${answer.error.message}`);
      return null;
    }
    this.markAnswered(upstream.name, kind);
    return { server: upstream.name, items: answer.state === 'live' ? answer.items : [], version: answer.version };
  }

  private markMissed(server: string, kind: ListKind, reason: string): void {
    let kinds = this.missed.get(server);
    if (!kinds) this.missed.set(server, (kinds = new Set()));
    kinds.add(kind);
    this.events.degraded(server, kind, reason);
  }

  private markAnswered(server: string, kind: ListKind): void {
    const kinds = this.missed.get(server);
    if (!kinds?.delete(kind)) return;
    if (kinds.size === 0) this.missed.delete(server);
    this.events.recovered(server, kind);
    this.events.listAgain(kind);
  }

  /** An upstream became ready: clients list again; it stays degraded until one of those lists answers (ready is not "lists work"). */
  upstreamReady(server: string): void {
    for (const kind of this.missed.get(server) ?? []) this.events.listAgain(kind);
  }

  /** Names of upstreams currently left out of some list. */
  degradedServers(): string[] {
    return [...this.missed.keys()];
  }

  /** A server was removed or disabled: it is no longer left out of anything. */
  forget(server: string): void {
    this.missed.delete(server);
    this.forgotten.set(server, (this.forgotten.get(server) ?? 0) + 1);
  }
}
