// Capability kinds as the protocol lists them and as preferences key them.

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

/** The identity of one item of a list (R5: the name is the identity). */
export function capabilityKey(kind: ListKind, item: Record<string, unknown>): string {
  switch (kind) {
    case 'tools':
    case 'prompts':
      return String(item.name);
    case 'resources':
      return String(item.uri);
    case 'resourceTemplates':
      return String(item.uriTemplate);
  }
}
