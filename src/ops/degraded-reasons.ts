// Why each degraded upstream was left out, from the router's degraded and
// recovered events: the router keeps which lists an upstream is missing from,
// readiness also wants the words. The router's set stays the authority on who
// is degraded (a removed server is forgotten there).
import type { ListKind } from '../protocol/capabilities.js';

export class DegradedReasons {
  private readonly byServer = new Map<string, { kinds: Set<ListKind>; reason: string }>();

  degraded(server: string, kind: ListKind, reason: string): void {
    const entry = this.byServer.get(server);
    if (entry) {
      entry.kinds.add(kind);
      entry.reason = reason;
    } else this.byServer.set(server, { kinds: new Set([kind]), reason });
  }

  recovered(server: string, kind: ListKind): void {
    const entry = this.byServer.get(server);
    if (entry?.kinds.delete(kind) && entry.kinds.size === 0) this.byServer.delete(server);
  }

  forget(server: string): void {
    this.byServer.delete(server);
  }

  of(server: string): { kinds: ListKind[]; reason: string } | undefined {
    const entry = this.byServer.get(server);
    return entry && { kinds: [...entry.kinds], reason: entry.reason };
  }
}
