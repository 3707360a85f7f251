// The router's copy of each upstream's last list, so a warm downstream list
// needs no round trip to N actors. It lives exactly as long as the actor's own
// cache entry (R2: same fetch time and TTL) and is dropped on the same
// triggers (R3: list_changed, refresh, reconnect, server change).
import type { ListKind } from '../protocol/capabilities.js';
import type { Item } from './merge.js';

export interface UpstreamListCopy {
  /** The actor's version of this list: changes whenever its content does. */
  version: number;
  /** Empty for an unsupported kind. */
  items: Item[];
  expiresAt: number;
}

const keyOf = (server: string, kind: ListKind): string => `${server}\u0000${kind}`;

export class UpstreamLists {
  private copies = new Map<string, UpstreamListCopy>();

  constructor(private readonly ttlMs: number) {}

  get(server: string, kind: ListKind, now = Date.now()): UpstreamListCopy | undefined {
    const copy = this.copies.get(keyOf(server, kind));
    return copy && copy.expiresAt > now ? copy : undefined;
  }

  set(server: string, kind: ListKind, version: number, items: Item[], fetchedAt: number): UpstreamListCopy {
    const copy = { version, items, expiresAt: fetchedAt + this.ttlMs };
    this.copies.set(keyOf(server, kind), copy);
    return copy;
  }

  forgetKind(server: string, kind: ListKind): void {
    this.copies.delete(keyOf(server, kind));
  }

  forget(server: string): void {
    const prefix = `${server}\u0000`;
    for (const key of this.copies.keys()) if (key.startsWith(prefix)) this.copies.delete(key);
  }
}
