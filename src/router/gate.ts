// The router's view of preferences (R10): which capabilities are exposed, and
// the hook through which every successful live list is reconciled (R4).
import type { ListKind } from '../protocol/capabilities.js';
import type { Upstream } from '../upstreams/upstream.js';

export interface CapabilityGate {
  /** Bumped whenever any answer of isEnabled may have changed. */
  readonly version: number;
  isEnabled(server: string, kind: ListKind | 'tools' | 'resources' | 'prompts', key: string): boolean;
  /** Called with every live list before it is merged; resolves once the snapshot covers its keys. */
  observe(upstream: Upstream, kind: ListKind, items: Record<string, unknown>[], version: number): Promise<void>;
}
