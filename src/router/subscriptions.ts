// Which client sessions subscribed to which upstream resource. Each
// subscriber keeps the URI it subscribed with, so an update reaches it in the
// form it knows, and the toolset it subscribed through, so an update is
// weighed against that toolset as it is when the update comes. In shared mode the upstream sees one subscription per
// resource: the first subscriber subscribes, the last one leaving unsubscribes.
// A subscriber is answered only once that one subscription stands: one that
// joined while it was under way and then failed (its client cancelled it,
// went away) asks again rather than waiting for updates nobody subscribed to.
import type { Namespaced } from './namespace.js';

/** Resources one session may subscribe to at once. */
export const MAX_SESSION_SUBSCRIPTIONS = 1_024;

const keyOf = (server: string, original: string): string => `${server}\u0000${original}`;

export interface Subscriber {
  session: string;
  /** The URI as the session subscribed with it. */
  uri: string;
  /** The toolset it subscribed through; null: the whole surface. */
  toolset: string | null;
}

export class Subscriptions {
  private bySource = new Map<string, { source: Namespaced; subscribers: Map<string, Subscriber>; upstream?: Promise<void> }>();
  /** Per session, the keys of the resources it subscribes to: what it holds is bounded, and its end touches only those. */
  private bySession = new Map<string, Set<string>>();

  /** Whether the session holds as many subscriptions as it may and `source` is not one of them. */
  full(source: Namespaced, session: string): boolean {
    const held = this.bySession.get(session);
    return held !== undefined && held.size >= MAX_SESSION_SUBSCRIPTIONS && !held.has(keyOf(source.server, source.original));
  }

  add(source: Namespaced, subscriber: Subscriber): void {
    const key = keyOf(source.server, source.original);
    let entry = this.bySource.get(key);
    if (!entry) this.bySource.set(key, (entry = { source, subscribers: new Map() }));
    entry.subscribers.set(subscriber.session, subscriber);
    let held = this.bySession.get(subscriber.session);
    if (!held) this.bySession.set(subscriber.session, (held = new Set()));
    held.add(key);
  }

  /**
   * Shared mode: settles once the upstream subscription of `source` stands,
   * made with `subscribe` unless one stands or is under way. When the one under
   * way fails, a subscriber waiting for it makes its own; its maker gets the error.
   */
  upstream(source: Namespaced, subscribe: () => Promise<unknown>): Promise<void> {
    const entry = this.bySource.get(keyOf(source.server, source.original));
    if (!entry) return Promise.resolve();
    if (entry.upstream) return entry.upstream.catch(() => this.upstream(source, subscribe));
    const made = subscribe().then(() => undefined);
    entry.upstream = made;
    // Registered before any waiter's: the failed attempt is gone by the time a waiter asks again.
    made.catch(() => {
      if (entry.upstream === made) delete entry.upstream;
    });
    return made;
  }

  /** True when the session was the resource's last subscriber. */
  remove(source: Namespaced, session: string): boolean {
    const key = keyOf(source.server, source.original);
    const entry = this.bySource.get(key);
    if (!entry?.subscribers.delete(session)) return false;
    this.forgetKey(session, key);
    if (entry.subscribers.size > 0) return false;
    this.bySource.delete(key);
    return true;
  }

  /** Drops a closed session; returns the resources nobody subscribes to any more. */
  dropSession(session: string): Namespaced[] {
    const orphaned: Namespaced[] = [];
    for (const key of [...(this.bySession.get(session) ?? [])]) {
      const source = this.bySource.get(key)!.source;
      if (this.remove(source, session)) orphaned.push(source);
    }
    return orphaned;
  }

  /** The subscribers of one upstream resource. */
  subscribers(server: string, original: string): Subscriber[] {
    return [...(this.bySource.get(keyOf(server, original))?.subscribers.values() ?? [])];
  }

  /** Forgets a removed server's subscriptions. */
  dropServer(server: string): void {
    for (const [key, entry] of this.bySource) {
      if (entry.source.server !== server) continue;
      for (const session of entry.subscribers.keys()) this.forgetKey(session, key);
      this.bySource.delete(key);
    }
  }

  private forgetKey(session: string, key: string): void {
    const held = this.bySession.get(session);
    if (held?.delete(key) && held.size === 0) this.bySession.delete(session);
  }
}
