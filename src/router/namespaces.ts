// Which namespace each registered server's names are exposed under, and who
// owns which prefix. Read from the registry, not from the actors' config
// copies: a namespace change needs no actor restart.
import type { ServerConfig } from '../protocol/server-config.js';
import { prefixIndex, type PrefixIndex } from './resolver.js';

/** The registered servers, enabled or not (the registry). */
export interface ServerDirectory {
  config(name: string): ServerConfig | undefined;
  all(): ServerConfig[];
}

export class Namespaces {
  private index: PrefixIndex | null = null;
  /** Bumped with every change: which names are hidden depends on the index, so merges keyed by it are redone. */
  generation = 0;

  constructor(private readonly servers: ServerDirectory) {}

  /** Built on first use after a change. */
  prefixes(): PrefixIndex {
    return (this.index ??= prefixIndex(this.servers.all()));
  }

  of(server: string): string {
    return this.prefixes().namespaces.get(server) ?? server;
  }

  /** A server was added, changed or removed. */
  changed(): void {
    this.index = null;
    this.generation++;
  }
}
