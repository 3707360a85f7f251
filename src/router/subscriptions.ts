// Which client sessions subscribed to which upstream resource. Each
// subscriber keeps the URI it subscribed with, so an update reaches it in the
// form it knows, and the toolset it subscribed through, so an update is
// weighed against that toolset as it is when the update comes. In shared mode the upstream sees one subscription per
// resource: the first subscriber subscribes, the last one leaving unsubscribes.
// A subscriber is answered only once that one subscription stands: one that
// joined while it was under way and then failed (its client cancelled it,
// went away) asks again rather than waiting for updates nobody subscribed to.
import type { Namespaced } from './namespace.js';

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

  /** True when this is the resource's first subscriber. */
  add(source: Namespaced, subscriber: Subscriber): boolean {
    const key = keyOf(source.server, source.original);
    let entry = this.bySource.get(key);
    const first = entry === undefined;
    if (!entry) this.bySource.set(key, (entry = { source, subscribers: new Map() }));
    entry.subscribers.set(subscriber.session, subscriber);
    return first;
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
    if (entry.subscribers.size > 0) return false;
    this.bySource.delete(key);
    return true;
  }

  /** Drops a closed session; returns the resources nobody subscribes to any more. */
  dropSession(session: string): Namespaced[] {
    const orphaned: Namespaced[] = [];
    for (const entry of [...this.bySource.values()]) {
      if (this.remove(entry.source, session)) orphaned.push(entry.source);
    }
    return orphaned;
  }

  /** The subscribers of one upstream resource. */
  subscribers(server: string, original: string): Subscriber[] {
    return [...(this.bySource.get(keyOf(server, original))?.subscribers.values() ?? [])];
  }

  /** Forgets a removed server's subscriptions. */
  dropServer(server: string): void {
    for (const [key, entry] of this.bySource) if (entry.source.server === server) this.bySource.delete(key);
  }
}
