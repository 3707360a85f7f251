// A toolset compiled for the hot path: whether one capability of one server is
// in the set, and the merged list narrowed to it. A toolset only narrows: it is
// applied to lists and calls after the switches (R10), never instead of them.
// Pure.
import { capabilityKey, CAPABILITY_TYPE_OF, type ListKind, type CapabilityType } from '../protocol/capabilities.js';
import type { Namespaced } from '../router/namespace.js';
import type { ToolsetSpec } from '../protocol/toolsets.js';
import { globMatcher, parsePattern, type Glob } from './patterns.js';

type Matchers = Partial<Record<CapabilityType, Glob[]>>;

interface CompiledRule {
  /** null: every capability of the server. */
  include: Matchers | null;
  exclude: Matchers;
}

function compile(patterns: readonly string[]): Matchers {
  const matchers: Matchers = {};
  for (const text of patterns) {
    const parsed = parsePattern(text);
    if (parsed) (matchers[parsed.type] ??= []).push(globMatcher(parsed.glob));
  }
  return matchers;
}

const matches = (matchers: Matchers, type: CapabilityType, key: string): boolean => matchers[type]?.some((match) => match(key)) ?? false;

export class ToolsetView {
  private readonly rules: Map<string, CompiledRule>;

  constructor(readonly spec: ToolsetSpec) {
    this.rules = new Map(spec.servers.map((rule) => [rule.server, { include: rule.include ? compile(rule.include) : null, exclude: compile(rule.exclude ?? []) }]));
  }

  get name(): string {
    return this.spec.name;
  }

  /** Whether the set has a rule for this server (its messages that belong to no call concern the set's clients). */
  covers(server: string): boolean {
    return this.rules.has(server);
  }

  /** Whether the set holds this capability (its switch is a separate question). */
  includes(server: string, type: CapabilityType, key: string): boolean {
    const rule = this.rules.get(server);
    if (!rule) return false;
    if (rule.include && !matches(rule.include, type, key)) return false;
    return !matches(rule.exclude, type, key);
  }

  /** The merged items of this set; `routes` maps each exposed identity back to its server and key. */
  narrow<T extends Record<string, unknown>>(kind: ListKind, items: readonly T[], routes: ReadonlyMap<string, Namespaced> | undefined): T[] {
    const type = CAPABILITY_TYPE_OF[kind];
    return items.filter((item) => {
      const route = routes?.get(capabilityKey(kind, item));
      return route !== undefined && this.includes(route.server, type, route.original);
    });
  }
}
