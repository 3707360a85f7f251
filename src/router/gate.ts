// The router's view of preferences (R10): which capabilities are exposed, and
// the hook through which every successful live list is reconciled (R4).
import type { ListKind } from '../protocol/capabilities.js';
import type { Upstream } from '../upstreams/upstream.js';
import type { ResourceSwitch } from './uri-rule.js';

/** What decides whether a resource URI may be read: a switch, or the server's policy when no switch applies. */
export type ResourceDecision = ResourceSwitch | { by: 'policy'; enabled: boolean };

/** The user's words for one tool or prompt (null: the upstream's own). */
export interface OwnWordsOf {
  name: string | null;
  description: string | null;
}

export interface CapabilityGate {
  /** Bumped whenever any answer of isEnabled may have changed. */
  readonly version: number;
  isEnabled(server: string, kind: ListKind, key: string): boolean;
  /** The user's words for a tool or prompt, if any (bumps `version` when they change, like a switch). */
  ownWords(server: string, kind: ListKind, key: string): OwnWordsOf | undefined;
  /** The key whose own name is `name`, if any: the exposed own name is routed to the upstream's. */
  keyOfOwnName(server: string, kind: ListKind, name: string): string | undefined;
  /** The rule for a URI (or a template's own key): its resource switch, else its templates' switches, else the policy. */
  resourceDecision(server: string, uri: string): ResourceDecision;
  /** The same rule with `holds` in place of the switches (a toolset's patterns); null when no known key governs the URI. */
  resourceRule(server: string, uri: string, holds: (key: string) => boolean): ResourceSwitch | null;
  /** Called with every live list before it is merged (its resource keys govern URIs at once); resolves once the writer's rows for its keys are in the snapshot. */
  observe(upstream: Upstream, kind: ListKind, items: Record<string, unknown>[], version: number): Promise<void>;
}
