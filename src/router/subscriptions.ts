// Which client sessions subscribed to which upstream resource (pure). Each
// subscriber keeps the URI it subscribed with, so an update reaches it in the
// form it knows, and the toolset it subscribed through, so an update is
// weighed against that toolset as it is when the update comes. In shared mode the upstream sees one subscription per
// resource: the first subscriber subscribes, the last one leaving unsubscribes.
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
  private bySource = new Map<string, { source: Namespaced; subscribers: Map<string, Subscriber> }>();

  /** True when this is the resource's first subscriber. */
  add(source: Namespaced, subscriber: Subscriber): boolean {
    const key = keyOf(source.server, source.original);
    let entry = this.bySource.get(key);
    const first = entry === undefined;
    if (!entry) this.bySource.set(key, (entry = { source, subscribers: new Map() }));
    entry.subscribers.set(subscriber.session, subscriber);
    return first;
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
