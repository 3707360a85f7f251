// The in-memory preference snapshot (R10) and the reconciliation hook (R4):
// every new live list is reconciled by the DB writer, and the writer's answer
// updates the snapshot. Lists are merged without waiting for it: a key with no
// row yet follows the server's auto-enable policy, as the writer will record
// it. A resource or template key governs the URIs it names from the moment a
// live list shows it, so a read right after the first list is decided by the
// same key as every later one.
import { CAPABILITY_TYPE_OF, capabilityKey, type CapabilityType, type ListKind } from '../protocol/capabilities.js';
import type { DbWriterApi, PreferenceRow } from '../protocol/db.js';
import type { Logger } from '../log.js';
import type { Upstream } from '../upstreams/upstream.js';
import type { CapabilityGate, OwnWordsOf, ResourceDecision } from './gate.js';
import { ResourceKeys, type ResourceSwitch } from './uri-rule.js';

const keyOf = (server: string, type: CapabilityType, key: string): string => `${server}\u0000${type}\u0000${key}`;

export class PreferenceGate implements CapabilityGate {
  version = 0;
  private enabled = new Map<string, boolean>();
  /** Only keys with words of their own; `byOwnName` is its reverse for names. */
  private words = new Map<string, OwnWordsOf>();
  private byOwnName = new Map<string, string>();
  /** Last actor list version reconciled, per server and kind: cached lists are not reconciled again. */
  private reconciled = new Map<string, number>();
  private reconciling = new Map<string, { version: number; done: Promise<void> }>();
  /** Resource and template keys a live list showed whose rows are not loaded yet. */
  private unreconciled = new Set<string>();
  /** Bumped when `unreconciled` gains a key: the resource keys are built again, the answers of isEnabled are unchanged. */
  private keysSeen = 0;
  /** Per server, built on first use after a change (the versions say which change it saw). */
  private resourceKeys = new Map<string, { version: number; keysSeen: number; keys: ResourceKeys }>();

  constructor(
    private readonly writer: Pick<DbWriterApi, 'reconcile'>,
    private readonly autoEnable: (server: string) => boolean,
    private readonly log: Logger,
  ) {}

  load(rows: PreferenceRow[]): void {
    let changed = false;
    for (const row of rows) {
      const key = keyOf(row.server, row.capability_type, row.capability_key);
      this.unreconciled.delete(key);
      if (this.enabled.get(key) !== row.enabled) {
        this.enabled.set(key, row.enabled);
        changed = true;
      }
      if (this.loadWords(key, row)) changed = true;
    }
    if (changed) this.version++;
  }

  /** Whether the row's own words differ from the snapshot's (they are taken over if so). */
  private loadWords(key: string, row: PreferenceRow): boolean {
    const before = this.words.get(key);
    const name = row.own_name ?? null;
    const description = row.own_description ?? null;
    if ((before?.name ?? null) === name && (before?.description ?? null) === description) return false;
    if (before?.name != null) this.byOwnName.delete(keyOf(row.server, row.capability_type, before.name));
    if (name === null && description === null) this.words.delete(key);
    else this.words.set(key, { name, description });
    if (name !== null) this.byOwnName.set(keyOf(row.server, row.capability_type, name), row.capability_key);
    return true;
  }

  /** A server was removed or replaced: forget its snapshot. */
  forget(server: string): void {
    const prefix = `${server}\u0000`;
    for (const map of [this.enabled, this.words, this.byOwnName, this.reconciled]) for (const key of map.keys()) if (key.startsWith(prefix)) map.delete(key);
    for (const key of this.unreconciled) if (key.startsWith(prefix)) this.unreconciled.delete(key);
    this.resourceKeys.delete(server);
    this.version++;
  }

  isEnabled(server: string, kind: ListKind, key: string): boolean {
    return this.enabled.get(keyOf(server, CAPABILITY_TYPE_OF[kind], key)) ?? this.autoEnable(server);
  }

  ownWords(server: string, kind: ListKind, key: string): OwnWordsOf | undefined {
    return this.words.get(keyOf(server, CAPABILITY_TYPE_OF[kind], key));
  }

  keyOfOwnName(server: string, kind: ListKind, name: string): string | undefined {
    return this.byOwnName.get(keyOf(server, CAPABILITY_TYPE_OF[kind], name));
  }

  resourceDecision(server: string, uri: string): ResourceDecision {
    return this.resourceRule(server, uri, (key) => this.isEnabled(server, 'resources', key)) ?? { by: 'policy', enabled: this.autoEnable(server) };
  }

  resourceRule(server: string, uri: string, holds: (key: string) => boolean): ResourceSwitch | null {
    return this.resourceKeysOf(server).governing(uri, holds);
  }

  private resourceKeysOf(server: string): ResourceKeys {
    const cached = this.resourceKeys.get(server);
    if (cached?.version === this.version && cached.keysSeen === this.keysSeen) return cached.keys;
    const prefix = keyOf(server, 'resource', '');
    const known = [...this.enabled.keys(), ...this.unreconciled].filter((key) => key.startsWith(prefix));
    const keys = new ResourceKeys(known.map((key) => key.slice(prefix.length)));
    this.resourceKeys.set(server, { version: this.version, keysSeen: this.keysSeen, keys });
    return keys;
  }

  /** Concurrent observers of the same list version share one writer call. */
  observe(upstream: Upstream, kind: ListKind, items: Record<string, unknown>[], version: number): Promise<void> {
    const marker = `${upstream.name}\u0000${kind}`;
    if (this.reconciled.get(marker) === version) return Promise.resolve();
    const running = this.reconciling.get(marker);
    if (running?.version === version) return running.done;
    const keys = items.map((item) => capabilityKey(kind, item));
    if (CAPABILITY_TYPE_OF[kind] === 'resource') this.seeResourceKeys(upstream.name, keys);
    const done = this.reconcile(upstream, kind, keys, version, marker).finally(() => {
      if (this.reconciling.get(marker)?.done === done) this.reconciling.delete(marker);
    });
    this.reconciling.set(marker, { version, done });
    return done;
  }

  private seeResourceKeys(server: string, keys: string[]): void {
    for (const key of keys) {
      const known = keyOf(server, 'resource', key);
      if (this.enabled.has(known) || this.unreconciled.has(known)) continue;
      this.unreconciled.add(known);
      this.keysSeen++;
    }
  }

  private async reconcile(upstream: Upstream, kind: ListKind, keys: string[], version: number, marker: string): Promise<void> {
    const result = await this.writer.reconcile(upstream.name, CAPABILITY_TYPE_OF[kind], keys, upstream.config.auto_enable_new_capabilities);
    if (!result.ok) {
      // The list is still served (unknown keys follow the policy); the next new version retries.
      this.log.error('reconcile failed', { server: upstream.name, kind, error: result.error.message });
      return;
    }
    this.load(result.value);
    this.reconciled.set(marker, version);
  }
}
