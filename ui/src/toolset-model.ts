// Toolsets as the capability tabs read them: which sets hold a capability,
// and the rules that add capabilities to a set. Pure.
import { ToolsetView } from '../../src/toolsets/view.js';
import type { CapabilityType, ToolsetInfo, ToolsetServerRule } from './types.js';

export interface CapabilityRef {
  type: CapabilityType;
  key: string;
}

/**
 * The pattern naming one capability: its key as a glob. A key holding `*` or
 * `?` also matches its look-alikes (patterns have no escape).
 */
export const patternOf = (item: CapabilityRef): string => `${item.type}:${item.key}`;

/** Which toolsets hold each capability of one server, by the daemon's own matcher. */
export function membership(toolsets: readonly ToolsetInfo[], server: string): (item: CapabilityRef) => string[] {
  const views = toolsets.map((toolset) => new ToolsetView(toolset));
  return (item) => views.filter((view) => view.includes(server, item.type, item.key)).map((view) => view.name);
}

/**
 * A set's rules with these capabilities of `server` added: named in its
 * includes (a server taken whole has them already) and no longer excluded
 * by exactly their own pattern.
 */
export function withCapabilities(rules: readonly ToolsetServerRule[], server: string, items: readonly CapabilityRef[]): ToolsetServerRule[] {
  const added = items.map(patternOf);
  const rule = rules.find((entry) => entry.server === server);
  if (!rule) return [...rules, { server, include: added }];
  const include = rule.include && [...rule.include, ...added.filter((pattern) => !rule.include!.includes(pattern))];
  const exclude = rule.exclude?.filter((pattern) => !added.includes(pattern));
  const changed: ToolsetServerRule = { server, ...(include ? { include } : {}), ...(exclude && exclude.length > 0 ? { exclude } : {}) };
  return rules.map((entry) => (entry === rule ? changed : entry));
}
