// The router's view of preferences (R10): which capabilities are exposed, and
// the hook through which every successful live list is reconciled (R4).
import type { ListKind } from '../protocol/capabilities.js';
import type { Upstream } from '../upstreams/upstream.js';
import type { ResourceSwitch } from './uri-rule.js';

/** What decides whether a resource URI may be read: a switch, or the server's policy when no switch applies. */
export type ResourceDecision = ResourceSwitch | { by: 'policy'; enabled: boolean };

export interface CapabilityGate {
  /** Bumped whenever any answer of isEnabled may have changed. */
  readonly version: number;
  isEnabled(server: string, kind: ListKind, key: string): boolean;
  /** The rule for a URI (or a template's own key): its resource switch, else its templates' switches, else the policy. */
  resourceDecision(server: string, uri: string): ResourceDecision;
  /** Called with every live list before it is merged; resolves once the snapshot covers its keys. */
  observe(upstream: Upstream, kind: ListKind, items: Record<string, unknown>[], version: number): Promise<void>;
}
