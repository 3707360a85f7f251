// One server: its head (config, health, switch, Test connection, Edit,
// Remove), Refresh with its result, and the Tools / Resources / Prompts tabs.
// The capabilities are read again when the upstream comes back or goes down,
// or announces a list change after a clean load.
import { ApiError, serverPath } from '../api.js';
import { applyPreference, liveCount, loadedCleanly, TABS, tabModel, type Loaded, type Tab } from '../capability-model.js';
import type { View, ViewContext } from '../context.js';
import { h, replace } from '../dom.js';
import { clock } from '../format.js';
import type { CapabilitiesView, KnownKey, OwnWords } from '../types.js';
import { membership } from '../toolset-model.js';
import { openAddToToolset } from './add-to-toolset.js';
import { CapabilityTab, type ToolsetPicks } from './capability-tab.js';
import { ServerHead } from './server-head.js';

const RELOAD_DEBOUNCE_MS = 300;

export interface ServerPageView extends View {
  readonly server: string;
  showTab(tab: Tab): void;
}

/** A capabilities answer or failure as the tabs read it. */
function loadedOf(result: { view: CapabilitiesView } | { error: Error }): Loaded {
  if ('view' in result) return { state: 'view', view: result.view };
  const error = result.error;
  const known = error instanceof ApiError ? (error.details as { known?: KnownKey[] } | undefined)?.known : undefined;
  if (error instanceof ApiError && Array.isArray(known)) return { state: 'unreachable', error, known };
  return { state: 'error', error };
}

export function serverPage(context: ViewContext, name: string, initialTab: Tab): ServerPageView {
  let tab = initialTab;
  let loaded: Loaded = { state: 'loading' };
  /** The last health state other than `connecting`; null until known. */
  let settled: string | null = null;
  let reloadTimer: ReturnType<typeof setTimeout> | undefined;

  const setEnabled = async (item: { type: string; key: string }, enabled: boolean): Promise<void> => {
    await context.api.post(serverPath(name, `/capabilities/${item.type}/${enabled ? 'enable' : 'disable'}`), { key: item.key });
  };
  const setWords = async (item: { type: string; key: string }, words: OwnWords): Promise<void> => {
    await context.api.post(serverPath(name, `/capabilities/${item.type}/words`), { key: item.key, ...words });
  };
  let holding = membership(context.toolsets.toolsets, name);
  const picks: ToolsetPicks = { holding: (item) => holding(item), add: (items, added) => openAddToToolset(context, name, items, added) };
  // Resources are named by their URIs: no words of their own.
  const tabs = Object.fromEntries(TABS.map((kind) => [kind, new CapabilityTab(kind, setEnabled, picks, kind === 'resources' ? null : setWords)])) as Record<Tab, CapabilityTab>;
  const tabLinks = Object.fromEntries(TABS.map((kind) => [kind, h('a', { class: 'tab', role: 'tab', href: `#/servers/${encodeURIComponent(name)}/${kind}` })])) as Record<Tab, HTMLAnchorElement>;
  const tabBody = h('div', { class: 'tab-body', role: 'tabpanel' });
  const refreshResult = h('p', { class: 'result', 'data-result': 'refresh', role: 'status' });

  const renderTabs = (): void => {
    for (const kind of TABS) {
      const model = tabModel(loaded, kind);
      replace(tabLinks[kind], kind[0]!.toUpperCase() + kind.slice(1), model.status === 'loading' ? null : h('span', { class: 'count' }, model.status === 'failed' ? '!' : String(liveCount(model))));
      tabLinks[kind].classList.toggle('active', kind === tab);
      tabLinks[kind].setAttribute('aria-selected', String(kind === tab));
      if (kind === tab) tabs[kind].show(model);
    }
    replace(tabBody, tabs[tab].element);
  };

  /** Answers land in any order: only the last load started may show its answer (a slow earlier one is stale). */
  let loadSeq = 0;
  const load = async (fresh: boolean): Promise<CapabilitiesView | Error> => {
    const seq = ++loadSeq;
    const request = fresh ? context.api.post<CapabilitiesView>(serverPath(name, '/refresh')) : context.api.get<CapabilitiesView>(serverPath(name, '/capabilities'));
    const result = await request.then((view) => ({ view }), (error: Error) => ({ error }));
    if (seq === loadSeq) {
      loaded = loadedOf(result);
      renderTabs();
    }
    return 'view' in result ? result.view : result.error;
  };

  const scheduleLoad = (): void => {
    clearTimeout(reloadTimer);
    reloadTimer = setTimeout(() => void load(false), RELOAD_DEBOUNCE_MS);
  };

  const refresh = async (button: HTMLButtonElement): Promise<void> => {
    button.disabled = true;
    replace(refreshResult, 'Refreshing: dropping the cache and listing live…');
    const outcome = await load(true);
    button.disabled = false;
    replace(
      refreshResult,
      outcome instanceof Error
        ? `Refresh failed: ${outcome.message}`
        : `Refreshed at ${clock(new Date().toISOString())}: ${TABS.map((kind) => `${liveCount(tabModel({ state: 'view', view: outcome }, kind))} ${kind}`).join(', ')}`,
    );
  };

  const head = new ServerHead(context, name, refresh);
  const serverChanged = (): void => {
    const server = context.servers.get(name);
    head.render(server);
    if (!server) return;
    // Coming back (from backoff, failed, stopped) or going down changes what can be listed: read again.
    // A quick reconnect (ready → connecting → ready, e.g. R7's eviction after a failed list) does not,
    // or a failing list would be asked again and again.
    const state = server.health.state;
    if (state === 'connecting') return;
    if (settled !== null && (settled === 'ready') !== (state === 'ready')) scheduleLoad();
    settled = state;
  };

  const stopServers = context.servers.onChange(serverChanged);
  const stopToolsets = context.toolsets.onChange(() => {
    holding = membership(context.toolsets.toolsets, name);
    renderTabs();
  });
  const stopEvents = context.live.onEvent((event) => {
    // Only after a clean load: a failed list evicts the connection (R7), whose reconnect announces a
    // list change, and reading again would fail again — round and round. Failed tabs say "refresh".
    if (event.type === 'list_changed' && event.server === name && loadedCleanly(loaded)) scheduleLoad();
    if (event.type === 'preference' && event.server === name) {
      applyPreference(loaded, event.capability_type, event.capability_key, { enabled: event.enabled });
      renderTabs();
    }
    if (event.type === 'words' && event.server === name) {
      applyPreference(loaded, event.capability_type, event.capability_key, { own_name: event.own_name, own_description: event.own_description });
      renderTabs();
    }
    if (event.type === 'server' && event.server === name && event.action === 'updated') scheduleLoad();
  });

  const element = h(
    'section',
    { class: 'page', 'data-page': 'server', 'data-server': name },
    h('p', { class: 'crumbs' }, h('a', { href: '#/servers' }, '← Servers')),
    head.element,
    refreshResult,
    h('nav', { class: 'tabs', role: 'tablist' }, ...TABS.map((kind) => tabLinks[kind])),
    tabBody,
  );
  serverChanged();
  renderTabs();
  void load(false);

  return {
    element,
    server: name,
    showTab(next) {
      tab = next;
      renderTabs();
    },
    unmount() {
      clearTimeout(reloadTimer);
      loadSeq++;
      stopServers();
      stopToolsets();
      stopEvents();
    },
  };
}
