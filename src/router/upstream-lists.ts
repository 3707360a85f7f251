// The main thread's one source of upstream lists. Every list the router, the
// management view or a refresh gets from an actor comes through fetch(), which
// reconciles live answers (R4, the only place that starts it) and keeps a copy,
// so a warm downstream list needs no round trip to N actors.
//
// Who drops what (R3): the actor drops its own cache on its triggers (the
// upstream's list_changed, reconnect, session end, refresh). Here, changed()
// is the only way a copy goes: it is called for every list_changed an actor
// announces and for every server change, and fetch(fresh) calls it itself. A
// copy lives no longer than the actor's entry (same fetch time and TTL, R2),
// and an answer that was in flight when its list changed is not kept. The
// merged lists derive from the copies' versions, so nothing else is dropped.
import { kindsChangedWith, LIST_KINDS, type ListKind } from '../protocol/capabilities.js';
import type { ListAnswer, Upstream } from '../upstreams/upstream.js';
import type { CapabilityGate } from './gate.js';
import type { Item } from './merge.js';

export interface UpstreamListCopy {
  /** The actor's version of this list: changes whenever its content does. */
  version: number;
  /** Empty for an unsupported kind. */
  items: Item[];
  expiresAt: number;
}

export interface Fetched {
  answer: ListAnswer;
  /** Settles once the preference snapshot covers a live answer's keys; until then unknown keys follow the server's policy. */
  reconciled: Promise<void>;
}

const keyOf = (server: string, kind: ListKind): string => `${server}\u0000${kind}`;
const NOTHING_TO_RECONCILE = Promise.resolve();

export class UpstreamLists {
  private copies = new Map<string, UpstreamListCopy>();
  /** Bumped by every drop: an answer fetched under an older generation is stale and not kept. */
  private generations = new Map<string, number>();

  constructor(
    private readonly gate: Pick<CapabilityGate, 'observe'>,
    /** The actors' list cache TTL. */
    private readonly ttlMs: number,
  ) {}

  /** The copy of a list, while it is fresh. */
  cached(server: string, kind: ListKind, now = Date.now()): UpstreamListCopy | undefined {
    const copy = this.copies.get(keyOf(server, kind));
    return copy && copy.expiresAt > now ? copy : undefined;
  }

  /** Asks the actor (which answers from its cache unless `fresh`); the request is posted before this returns. */
  async fetch(upstream: Upstream, kind: ListKind, fresh: boolean): Promise<Fetched> {
    const key = keyOf(upstream.name, kind);
    if (fresh) this.drop(key);
    const generation = this.generations.get(key) ?? 0;
    const answer = await upstream.list(kind, fresh);
    if (!answer.ok) return { answer, reconciled: NOTHING_TO_RECONCILE };
    const items = answer.state === 'live' ? answer.items : [];
    const reconciled = answer.state === 'live' ? this.gate.observe(upstream, kind, items, answer.version) : NOTHING_TO_RECONCILE;
    const expiresAt = Math.min(answer.fetchedAt + this.ttlMs, answer.expiresAt ?? Infinity);
    if ((this.generations.get(key) ?? 0) === generation) this.copies.set(key, { version: answer.version, items, expiresAt });
    return { answer, reconciled };
  }

  /** R3: an upstream's list of this kind (and those announced with it) changed; without a kind, the whole server did. */
  changed(server: string, kind?: ListKind): void {
    for (const changed of kind === undefined ? LIST_KINDS : kindsChangedWith(kind)) this.drop(keyOf(server, changed));
  }

  private drop(key: string): void {
    this.copies.delete(key);
    this.generations.set(key, (this.generations.get(key) ?? 0) + 1);
  }
}
