// The downstream lists: each is the upstreams' answers (gathered fail-open by
// the fan-out), merged, namespaced and gated by preference. A merge is kept
// while nothing it was made from changed: the copies' versions, the namespaces
// and the switches key it, so it needs no invalidation of its own.
import { EventEmitter } from 'node:events';
import { IDENTITY_FIELD, type CallKind, type ListKind } from '../protocol/capabilities.js';
import type { UpstreamInstructions } from '../protocol/instructions.js';
import type { UpstreamDirectory } from '../upstreams/upstream.js';
import { FanOut } from './fan-out.js';
import type { CapabilityGate } from './gate.js';
import { mergeLists, type Collision, type Hidden, type Item } from './merge.js';
import type { Namespaced } from './namespace.js';
import { Namespaces, type ServerDirectory } from './namespaces.js';
import { claimant, type ResolverDirectory } from './resolver.js';
import { UpstreamLists } from './upstream-lists.js';

export type { CallKind, ServerDirectory };

/** Per list copy (a new array whenever its content changes): the names or URIs it holds, made on first ask. */
const identities = new WeakMap<readonly Item[], Set<unknown>>();

function identitiesOf(kind: ListKind, items: readonly Item[]): Set<unknown> {
  let found = identities.get(items);
  if (!found) identities.set(items, (found = new Set(items.map((item) => item[IDENTITY_FIELD[kind]]))));
  return found;
}

export interface RouterEvents {
  /** Sessions must be told that a downstream list changed. */
  list_changed: [kind: ListKind];
  /** An upstream was left out of a list answer. */
  degraded: [server: string, kind: ListKind, reason: string];
  /** A left-out upstream answered again. */
  recovered: [server: string, kind: ListKind];
  /** One upstream's part of a client's list (FanOutEvents.listed). */
  listed: [server: string, kind: ListKind, seconds: number | null, cached: boolean];
  deadline_missed: [server: string, kind: ListKind];
  /** An unprefixed name another server already exposes: it is exposed prefixed instead. */
  collision: [collision: Collision];
  /** An unprefixed server lists a name in another registered server's prefix form: it is hidden. */
  hidden: [hidden: Hidden];
}

interface MergedEntry {
  versions: string;
  gateVersion: number;
  /** Which list gathered it (counted in the order lists start). */
  gathered: number;
  items: Item[];
  routes: Map<string, Namespaced>;
}

export class Router extends EventEmitter<RouterEvents> {
  readonly namespaces: Namespaces;
  /** The one main-side source of upstream lists; the management view reads through it too. */
  readonly upstreamLists: UpstreamLists;
  private readonly fanOut: FanOut;
  private merged = new Map<ListKind, MergedEntry>();
  private listsStarted = 0;
  /** Per merged list, the routes made with it: another merge may replace the last one before its caller reads them. */
  private routesByList = new WeakMap<readonly Item[], Map<string, Namespaced>>();
  /** Collisions and hidden items of the last merge, by event and kind, to announce only new ones. */
  private announced = new Map<string, Set<string>>();
  /** What calls resolve exposed names from: the merged lists' routes and the prefix index. */
  readonly directory: ResolverDirectory = {
    // A merge made before a switch or an own name changed may route a name to the tool it no longer names: not used.
    routes: (kind) => {
      const merged = this.merged.get(kind);
      return merged?.gateVersion === this.gate.version ? merged.routes : undefined;
    },
    refresh: async (kind) => (await this.list(kind), this.merged.get(kind)?.routes),
    prefixes: () => this.namespaces.prefixes(),
    original: (server, kind, name) => this.gate.keyOfOwnName(server, kind, name) ?? name,
    serves: (server, kind) => {
      const status = this.upstreams.get(server)?.lastStatus;
      return status?.state === 'ready' && status.serves ? status.serves.includes(kind) : undefined;
    },
    // Through the fan-out: a fresh copy answers at once, else the actor within the list deadline; no answer tells nothing (R8).
    lists: async (server, kind, key) => {
      const upstream = this.upstreams.get(server);
      const [answer] = upstream ? await this.fanOut.gather([upstream], kind) : [];
      return answer ? identitiesOf(kind, answer.items).has(key) : undefined;
    },
  };

  constructor(
    private readonly upstreams: UpstreamDirectory,
    private readonly gate: CapabilityGate,
    servers: ServerDirectory,
    /** The actors' list cache TTL: the copies expire with them. */
    cacheTtlMs: number,
    nameBudget?: number,
  ) {
    super();
    this.namespaces = new Namespaces(servers, nameBudget);
    this.upstreamLists = new UpstreamLists(gate, cacheTtlMs);
    this.fanOut = new FanOut(this.upstreamLists, {
      degraded: (server, kind, reason) => this.emit('degraded', server, kind, reason),
      recovered: (server, kind) => this.emit('recovered', server, kind),
      listAgain: (kind) => this.emit('list_changed', kind),
      listed: (server, kind, seconds, cached) => this.emit('listed', server, kind, seconds, cached),
      deadlineMissed: (server, kind) => this.emit('deadline_missed', server, kind),
    });
  }

  /** The merged, namespaced, gated list of one kind. */
  async list(kind: ListKind): Promise<Item[]> {
    const gathered = ++this.listsStarted;
    const answers = await this.fanOut.gather(this.upstreams.active(), kind);
    const lists = answers.map((answer) => ({ ...answer, namespace: this.namespaces.of(answer.server) }));
    // The namespace is part of the key: a renamed prefix must re-merge even when the new actor counts versions from the same number.
    const versions = `${this.namespaces.generation}|${lists.map((list) => `${list.server}:${list.namespace}:${list.version}`).join(',')}`;
    const cached = this.merged.get(kind);
    if (cached && cached.versions === versions && cached.gateVersion === this.gate.version) return cached.items;
    const prefixes = this.namespaces.prefixes();
    const merged = mergeLists(
      kind,
      lists,
      (server, itemKind, key) => this.gate.isEnabled(server, itemKind, key),
      (itemKind, exposed) => claimant(prefixes, itemKind, exposed),
      this.namespaces.fit,
      (server, itemKind, key) => this.gate.ownWords(server, itemKind, key),
    );
    this.routesByList.set(merged.items, merged.routes);
    // A list gathered before an upstream changed may be answered after one gathered since: its merge is not the last one.
    if (cached && cached.gathered > gathered) return merged.items;
    this.merged.set(kind, { versions, gateVersion: this.gate.version, gathered, items: merged.items, routes: merged.routes });
    for (const collision of this.unannounced('collision', kind, merged.collisions)) this.emit('collision', collision);
    for (const hidden of this.unannounced('hidden', kind, merged.hidden)) this.emit('hidden', hidden);
    return merged.items;
  }

  /** The items not in the last merge's announcement of this event and kind. */
  private unannounced<T extends Namespaced>(event: 'collision' | 'hidden', kind: ListKind, items: T[]): T[] {
    const marker = `${event}\u0000${kind}`;
    const before = this.announced.get(marker) ?? new Set<string>();
    const now = new Set(items.map((item) => `${item.server}\u0000${item.original}`));
    this.announced.set(marker, now);
    return items.filter((item) => !before.has(`${item.server}\u0000${item.original}`));
  }

  /** What the items of the last merged list of this kind are exposed under: each exposed name or URI → its server and original. */
  routes(kind: ListKind): Map<string, Namespaced> | undefined {
    return this.merged.get(kind)?.routes;
  }

  /** What the items of a list this router merged, or of a part of one (partOf), are exposed under, whatever was merged since. */
  routesOf(items: readonly Item[]): Map<string, Namespaced> | undefined {
    return this.routesByList.get(items);
  }

  /** `part` holds some of the items of `items`, a list this router merged (a toolset's share of it): its routes are that list's. */
  partOf(items: readonly Item[], part: readonly Item[]): void {
    const routes = this.routesByList.get(items);
    if (routes) this.routesByList.set(part, routes);
  }

  /**
   * The last merged list of this kind (a fresh one only when there is none): what a call is checked against, as its name is routed.
   * Not a promise when there is one, so a modern call's checks do not wait a turn for it.
   */
  lastList(kind: ListKind): Item[] | Promise<Item[]> {
    return this.merged.get(kind)?.items ?? this.list(kind);
  }

  /** R3, the one main-side path: an upstream's list changed or was refreshed; without a kind, the server itself changed. */
  changed(server: string, kind?: ListKind): void {
    this.upstreamLists.changed(server, kind);
    if (kind === undefined) this.namespaces.changed();
  }

  /** A server was removed or disabled. */
  forgetServer(server: string): void {
    this.fanOut.forget(server);
    this.changed(server);
  }

  /** An upstream became ready: every kind it was left out of may now have items. */
  upstreamReady(server: string): void {
    this.fanOut.upstreamReady(server);
  }

  /** Names of upstreams currently left out of some list. */
  degradedServers(): string[] {
    return this.fanOut.degradedServers();
  }

  /** The extensions the connected, enabled upstreams declare (what coffer can route to one of them). */
  upstreamExtensions(): Set<string> {
    const found = new Set<string>();
    for (const upstream of this.upstreams.active()) {
      const { state, extensions } = upstream.lastStatus;
      if (state === 'ready') for (const id of extensions ?? []) found.add(id);
    }
    return found;
  }

  /** The instructions of the enabled upstreams connected now (of those `view` covers, if given), each with the namespace its names are exposed under. */
  upstreamInstructions(view?: { covers(server: string): boolean } | null): UpstreamInstructions[] {
    const found: UpstreamInstructions[] = [];
    for (const upstream of this.upstreams.active()) {
      if (view && !view.covers(upstream.name)) continue;
      const { state, instructions } = upstream.lastStatus;
      if (state === 'ready' && instructions) found.push({ server: upstream.name, namespace: this.namespaces.of(upstream.name), text: instructions });
    }
    return found;
  }
}
