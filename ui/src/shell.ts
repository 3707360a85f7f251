// The page frame: header with navigation, the current view, the activity
// panel. Switches views on hash changes (a tab change within one server
// keeps its page and its loaded capabilities).
import type { View, ViewContext } from './context.js';
import { h, replace } from './dom.js';
import { parseRoute, type Route } from './routes.js';
import { activityPanel } from './views/activity-panel.js';
import { invocationsPage } from './views/invocations-page.js';
import { serverPage, type ServerPageView } from './views/server-page.js';
import { serversPage } from './views/servers-page.js';
import { toolsetsPage } from './views/toolsets-page.js';

function viewFor(context: ViewContext, route: Route): View {
  switch (route.page) {
    case 'servers':
      return serversPage(context);
    case 'server':
      return serverPage(context, route.name, route.tab);
    case 'invocations':
      return invocationsPage(context);
    case 'toolsets':
      return toolsetsPage(context);
  }
}

export function mountShell(root: HTMLElement, context: ViewContext): void {
  const main = h('main', { class: 'main' });
  const nav = {
    servers: h('a', { href: '#/servers' }, 'Servers'),
    toolsets: h('a', { href: '#/toolsets' }, 'Toolsets'),
    invocations: h('a', { href: '#/invocations' }, 'Invocations'),
  };
  replace(root, h('header', { class: 'top' }, h('a', { class: 'brand', href: '#/servers' }, 'coffer'), h('nav', { class: 'nav' }, nav.servers, nav.toolsets, nav.invocations)), h('div', { class: 'layout' }, main, activityPanel(context)));

  let current: View | null = null;
  const show = (): void => {
    const route = parseRoute(location.hash);
    nav.servers.classList.toggle('active', route.page === 'servers' || route.page === 'server');
    nav.toolsets.classList.toggle('active', route.page === 'toolsets');
    nav.invocations.classList.toggle('active', route.page === 'invocations');
    if (route.page === 'server' && (current as ServerPageView | null)?.server === route.name) return (current as ServerPageView).showTab(route.tab);
    current?.unmount();
    current = viewFor(context, route);
    replace(main, current.element);
  };
  window.addEventListener('hashchange', show);
  show();
}
