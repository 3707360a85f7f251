// Capability kinds as the protocol lists them and as preferences key them.
import type { ErrorBody } from './errors.js';

/** What an actor can list; each maps to one MCP list method. */
export type ListKind = 'tools' | 'resources' | 'resourceTemplates' | 'prompts';

/** The preference table's capability_type. Resource templates are keyed as resources by their uriTemplate. */
export type CapabilityType = 'tool' | 'resource' | 'prompt';

/** The server capability (initialize) that advertises a kind. */
export type CapabilityFlag = 'tools' | 'resources' | 'prompts';

/** The kinds with a callMethod: their items are used by a request routed by identity. */
export type CallKind = 'tools' | 'resources' | 'prompts';

/** Everything coffer knows about one capability kind; every surface reads it from here, so a new kind is one record. */
export interface KindSpec {
  /** The MCP method that lists it (paginated by nextCursor). */
  listMethod: string;
  /** The field of a list result that holds the items. */
  resultField: string;
  /** The field that holds an item's identity (R5: the name is the identity). */
  identityField: 'name' | 'uri' | 'uriTemplate';
  /** The notification that says the list changed; kinds sharing one are dropped and announced together. */
  listChanged: string;
  /** The initialize capability that covers it: an upstream without it has none of this kind. */
  capability: CapabilityFlag;
  /** How its preferences (switches) are keyed. */
  preferenceType: CapabilityType;
  /** One item, in messages ("tool 'x' is disabled"). */
  label: string;
  /** The key of this kind in the management view (GET /servers/{name}/capabilities), in the API's snake_case. */
  viewField: 'tools' | 'resources' | 'resource_templates' | 'prompts';
  /** The request that uses one item (routed by its identity), when the kind has one. */
  callMethod?: string;
}

export const KINDS: Readonly<Record<ListKind, Readonly<KindSpec>>> = {
  tools: { listMethod: 'tools/list', resultField: 'tools', identityField: 'name', listChanged: 'notifications/tools/list_changed', capability: 'tools', preferenceType: 'tool', label: 'tool', viewField: 'tools', callMethod: 'tools/call' },
  resources: { listMethod: 'resources/list', resultField: 'resources', identityField: 'uri', listChanged: 'notifications/resources/list_changed', capability: 'resources', preferenceType: 'resource', label: 'resource', viewField: 'resources', callMethod: 'resources/read' },
  resourceTemplates: { listMethod: 'resources/templates/list', resultField: 'resourceTemplates', identityField: 'uriTemplate', listChanged: 'notifications/resources/list_changed', capability: 'resources', preferenceType: 'resource', label: 'resource template', viewField: 'resource_templates' },
  prompts: { listMethod: 'prompts/list', resultField: 'prompts', identityField: 'name', listChanged: 'notifications/prompts/list_changed', capability: 'prompts', preferenceType: 'prompt', label: 'prompt', viewField: 'prompts', callMethod: 'prompts/get' },
};

export const LIST_KINDS: readonly ListKind[] = Object.keys(KINDS) as ListKind[];

// Lookups derived from KINDS, for the surfaces that index by one property.

function project<P extends keyof KindSpec>(property: P): Readonly<Record<ListKind, KindSpec[P]>> {
  return Object.fromEntries(LIST_KINDS.map((kind) => [kind, KINDS[kind][property]])) as Record<ListKind, KindSpec[P]>;
}

export const LIST_METHOD = project('listMethod');
export const LIST_RESULT_FIELD = project('resultField');
export const IDENTITY_FIELD = project('identityField');
export const CAPABILITY_TYPE_OF = project('preferenceType');
export const CAPABILITY_FLAG = project('capability');
export const LIST_CHANGED_METHOD = project('listChanged');

/** The kinds a server advertises as a capability of their own; the others (templates) ride on one of them and are announced with it. */
export function isPrimary(kind: ListKind): kind is ListKind & CapabilityFlag {
  return KINDS[kind].capability === kind;
}

export const PRIMARY_KINDS: ReadonlyArray<ListKind & CapabilityFlag> = LIST_KINDS.filter(isPrimary);

/** The preference types, in table order. */
export const CAPABILITY_TYPES: readonly CapabilityType[] = [...new Set(LIST_KINDS.map((kind) => KINDS[kind].preferenceType))];

/** Which kinds a list_changed notification covers. */
export const KINDS_CHANGED_BY: Readonly<Record<string, ListKind[]>> = Object.fromEntries(
  [...new Set(LIST_KINDS.map((kind) => KINDS[kind].listChanged))].map((method) => [method, LIST_KINDS.filter((kind) => KINDS[kind].listChanged === method)]),
);

/** The kinds whose lists change with this one (they share a list_changed notification), itself included. */
export function kindsChangedWith(kind: ListKind): ListKind[] {
  return KINDS_CHANGED_BY[KINDS[kind].listChanged]!;
}

/** The kinds of one preference type: a switch of that type can change each of their lists. */
export function kindsOfType(type: CapabilityType): ListKind[] {
  return LIST_KINDS.filter((kind) => KINDS[kind].preferenceType === type);
}

/** By list method and by call method: how the downstream endpoint routes a request to a kind. */
export const KIND_BY_LIST_METHOD: ReadonlyMap<string, ListKind> = new Map(LIST_KINDS.map((kind) => [KINDS[kind].listMethod, kind]));
export const KIND_BY_CALL_METHOD: ReadonlyMap<string, CallKind> = new Map(LIST_KINDS.flatMap((kind) => (KINDS[kind].callMethod ? [[KINDS[kind].callMethod!, kind as CallKind] as const] : [])));

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
