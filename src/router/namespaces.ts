// Which namespace each registered server's names are exposed under, and who
// owns which prefix. Read from the registry, not from the actors' config
// copies: a namespace change needs no actor restart.
import type { ServerConfig } from '../protocol/server-config.js';
import { namespaceName } from './namespace.js';
import { DEFAULT_NAME_BUDGET, fitName, ownNameProblem } from './names.js';
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

  constructor(
    private readonly servers: ServerDirectory,
    /** The longest exposed tool or prompt name (a host's own prefix takes the rest of 64). */
    readonly nameBudget = DEFAULT_NAME_BUDGET,
  ) {}

  /** An exposed name as model hosts accept it (names.ts). */
  readonly fit = (name: string): string => fitName(name, this.nameBudget);

  /** The name one tool or prompt of `server` is exposed under (unless an unprefixed name collides: then under the server name). */
  exposedName(server: string, key: string): string {
    const namespace = this.of(server);
    return this.fit(namespace === '' ? key : namespaceName(namespace, key));
  }

  /** Why `name` cannot be the user's own name for a tool or prompt of `server` (names.ts); null when it can. */
  ownNameProblem(server: string, name: string): string | null {
    return ownNameProblem(name, this.of(server), this.nameBudget);
  }

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
