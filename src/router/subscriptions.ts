// Which client sessions subscribed to which upstream resource (pure). Each
// subscriber keeps the URI it subscribed with, so an update reaches it in the
// form it knows. In shared mode the upstream sees one subscription per
// resource: the first subscriber subscribes, the last one leaving unsubscribes.
import type { Namespaced } from './namespace.js';

const keyOf = (server: string, original: string): string => `${server}\u0000${original}`;

export class Subscriptions {
  private bySource = new Map<string, { source: Namespaced; subscribers: Map<string, string> }>();

  /** True when this is the resource's first subscriber. */
  add(source: Namespaced, session: string, exposedUri: string): boolean {
    const key = keyOf(source.server, source.original);
    let entry = this.bySource.get(key);
    const first = entry === undefined;
    if (!entry) this.bySource.set(key, (entry = { source, subscribers: new Map() }));
    entry.subscribers.set(session, exposedUri);
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

  /** [session, the URI it subscribed with] for one upstream resource. */
  subscribers(server: string, original: string): Array<[string, string]> {
    return [...(this.bySource.get(keyOf(server, original))?.subscribers ?? [])];
  }

  /** Forgets a removed server's subscriptions. */
  dropServer(server: string): void {
    for (const [key, entry] of this.bySource) if (entry.source.server === server) this.bySource.delete(key);
  }
}
