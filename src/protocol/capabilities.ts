// Capability kinds as the protocol lists them and as preferences key them.
import type { ErrorBody } from './errors.js';

/** What an actor can list; each maps to one MCP list method. */
export type ListKind = 'tools' | 'resources' | 'resourceTemplates' | 'prompts';

export const LIST_KINDS: readonly ListKind[] = ['tools', 'resources', 'resourceTemplates', 'prompts'];

export const LIST_METHOD: Record<ListKind, string> = {
  tools: 'tools/list',
  resources: 'resources/list',
  resourceTemplates: 'resources/templates/list',
  prompts: 'prompts/list',
};

/** The field of a list result that holds the items. */
export const LIST_RESULT_FIELD: Record<ListKind, string> = {
  tools: 'tools',
  resources: 'resources',
  resourceTemplates: 'resourceTemplates',
  prompts: 'prompts',
};

/** The preference table's capability_type. Resource templates are keyed as resources by their uriTemplate. */
export type CapabilityType = 'tool' | 'resource' | 'prompt';

export const CAPABILITY_TYPE_OF: Record<ListKind, CapabilityType> = {
  tools: 'tool',
  resources: 'resource',
  resourceTemplates: 'resource',
  prompts: 'prompt',
};

/** The field that holds an item's identity, by kind. */
export const IDENTITY_FIELD: Readonly<Record<ListKind, 'name' | 'uri' | 'uriTemplate'>> = { tools: 'name', prompts: 'name', resources: 'uri', resourceTemplates: 'uriTemplate' };

/** The identity of one item of a list (R5: the name is the identity). */
export function capabilityKey(kind: ListKind, item: Record<string, unknown>): string {
  return String(item[IDENTITY_FIELD[kind]]);
}

// The management view of one server's capabilities (GET /servers/{name}/capabilities, refresh).

export type KindState = 'live' | 'unsupported' | 'failed';

export interface CapabilityItem {
  key: string;
  /** false: a known key the upstream no longer offers (no schema or description, R6). */
  live: boolean;
  enabled: boolean;
  first_seen_at: string | null;
  last_seen_at: string | null;
  /** The upstream's own fields when live (name, description, inputSchema, uri, ...). */
  [field: string]: unknown;
}

export interface KindView {
  state: KindState;
  items: CapabilityItem[];
  error?: ErrorBody;
}

export interface CapabilitiesView {
  server: string;
  tools: KindView;
  resources: KindView;
  resource_templates: KindView;
  prompts: KindView;
}
