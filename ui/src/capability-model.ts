// What one tab (Tools, Resources, Prompts) shows, from the capabilities
// answer. Pure. The distinctions of ADR-004 live here: a tab that could not
// be loaded is `failed` (R8), never `empty`; an `empty` tab is an upstream
// that really has none; known keys that are not offered now (R6) are items
// with `live: false`, their switch and when they were last seen.
import type { ApiError } from './api.js';
import type { CapabilitiesView, CapabilityItem, CapabilityType, KindView, KnownKey } from './types.js';

export type Tab = 'tools' | 'resources' | 'prompts';
export const TABS: readonly Tab[] = ['tools', 'resources', 'prompts'];
const TYPE_OF_TAB: Record<Tab, CapabilityType> = { tools: 'tool', resources: 'resource', prompts: 'prompt' };

/** The page's last answer for the server's capabilities. */
export type Loaded =
  | { state: 'loading' }
  | { state: 'view'; view: CapabilitiesView }
  /** 503 / 504: the upstream gave nothing; details.known carries the keys (R6). */
  | { state: 'unreachable'; error: ApiError; known: KnownKey[] }
  | { state: 'error'; error: Error };

export interface TabItem {
  type: CapabilityType;
  key: string;
  live: boolean;
  enabled: boolean;
  last_seen_at: string | null;
  /** The upstream's own description ('' when none or not live). */
  description: string;
  /** The user's own name and description for a tool or prompt (null: the upstream's). */
  own_name: string | null;
  own_description: string | null;
  /** What to show as the schema when live: inputSchema, prompt arguments, resource fields. */
  schema: unknown;
}

export interface TabModel {
  status: 'loading' | 'live' | 'empty' | 'failed';
  /** The reason when failed. */
  error: string | null;
  items: TabItem[];
}

function schemaOf(tab: Tab, item: CapabilityItem): unknown {
  if (!item.live) return undefined;
  if (tab === 'tools') return item.inputSchema;
  if (tab === 'prompts') return item.arguments;
  const { uri, uriTemplate, mimeType, name } = item;
  return { name, uri, uriTemplate, mimeType };
}

function itemOf(tab: Tab, item: CapabilityItem): TabItem {
  return {
    type: TYPE_OF_TAB[tab],
    key: item.key,
    live: item.live,
    enabled: item.enabled,
    last_seen_at: item.last_seen_at,
    description: typeof item.description === 'string' ? item.description : '',
    own_name: typeof item.own_name === 'string' ? item.own_name : null,
    own_description: typeof item.own_description === 'string' ? item.own_description : null,
    schema: schemaOf(tab, item),
  };
}

function kindsOf(view: CapabilitiesView, tab: Tab): KindView[] {
  if (tab === 'tools') return [view.tools];
  if (tab === 'prompts') return [view.prompts];
  return [view.resources, view.resource_templates];
}

export function tabModel(loaded: Loaded, tab: Tab): TabModel {
  switch (loaded.state) {
    case 'loading':
      return { status: 'loading', error: null, items: [] };
    case 'error':
      return { status: 'failed', error: loaded.error.message, items: [] };
    case 'unreachable': {
      const type = TYPE_OF_TAB[tab];
      const items = loaded.known
        .filter((row) => row.capability_type === type)
        .map((row) => ({
          type,
          key: row.capability_key,
          live: false,
          enabled: row.enabled,
          last_seen_at: row.last_seen_at,
          description: '',
          own_name: row.own_name ?? null,
          own_description: row.own_description ?? null,
          schema: undefined,
        }));
      return { status: 'failed', error: loaded.error.message, items };
    }
    case 'view': {
      const kinds = kindsOf(loaded.view, tab);
      const items = kinds.flatMap((kind) => kind.items.map((item) => itemOf(tab, item)));
      const failed = kinds.find((kind) => kind.state === 'failed');
      if (failed) return { status: 'failed', error: failed.error?.message ?? 'the upstream did not answer this list', items };
      return { status: items.some((item) => item.live) ? 'live' : 'empty', error: null, items };
    }
  }
}

/** The items of a tab the upstream offers now (its count on the tab, and after a refresh). */
export const liveCount = (model: TabModel): number => model.items.filter((item) => item.live).length;

/** A switch or the user's words changed (here or by another client): patched into the loaded answer in place. */
export function applyPreference(loaded: Loaded, type: string, key: string, change: { enabled: boolean } | { own_name: string | null; own_description: string | null }): void {
  if (loaded.state === 'unreachable') {
    for (const row of loaded.known) if (row.capability_type === type && row.capability_key === key) Object.assign(row, change);
  } else if (loaded.state === 'view') {
    for (const tab of TABS) {
      if (TYPE_OF_TAB[tab] !== type) continue;
      for (const kind of kindsOf(loaded.view, tab)) for (const item of kind.items) if (item.key === key) Object.assign(item, change);
    }
  }
}

/** Every kind answered (live or none): nothing failed. */
export function loadedCleanly(loaded: Loaded): boolean {
  return loaded.state === 'view' && TABS.every((tab) => kindsOf(loaded.view, tab).every((kind) => kind.state !== 'failed'));
}
