// The servers page: every server with its transport, enabled switch, live
// health, degraded / backing-off state and last error; search, pages, and
// the add-server form.
import { serverPath } from '../api.js';
import type { View, ViewContext } from '../context.js';
import { h, replace, toggle } from '../dom.js';
import { transportSummary } from '../format.js';
import type { ServerView } from '../types.js';
import { healthBadge } from './health-badge.js';
import { PagedList } from './paged-list.js';
import { openServerForm } from './server-form.js';
import { signInControl } from './sign-in.js';

const PAGE_SIZE = 50;

async function setServerEnabled(context: ViewContext, name: string, enabled: boolean): Promise<void> {
  await context.api.post(serverPath(name, enabled ? '/enable' : '/disable'));
  await context.servers.reload();
}

/** A server's enabled switch (list row and server page): on a refusal it goes back, usable, and `notice` says why. */
export function serverSwitch(context: ViewContext, server: ServerView, notice: HTMLElement): HTMLLabelElement {
  return toggle(`enable ${server.name}`, server.enabled, (enabled, input) => {
    input.disabled = true;
    setServerEnabled(context, server.name, enabled).catch((error: Error) => {
      input.checked = !enabled;
      input.disabled = false;
      replace(notice, error.message);
    });
  });
}

export function serversPage(context: ViewContext): View {
  const notice = h('p', { class: 'notice', role: 'status' });
  const summary = h('p', { class: 'muted summary' });
  const rows = h('div', { class: 'rows servers-rows' });

  const row = (server: ServerView): HTMLElement =>
    h(
      'div',
      { class: 'row server-row', 'data-server': server.name },
      serverSwitch(context, server, notice),
      h('a', { class: 'name', href: `#/servers/${encodeURIComponent(server.name)}/tools` }, server.name),
      h('span', { class: 'transport' }, h('span', { class: 'tag' }, server.transport.type), h('span', { class: 'mono ellipsis', title: transportSummary(server.transport) }, transportSummary(server.transport))),
      h('span', { class: 'health-cell' }, healthBadge(server), signInControl(context, server.name)),
      h('span', { class: 'last-error ellipsis', title: server.health.last_error ?? '' }, server.health.last_error ?? ''),
    );

  const columns = h('div', { class: 'row head server-row', 'aria-hidden': 'true' }, h('span', {}, 'On'), h('span', {}, 'Name'), h('span', {}, 'Transport'), h('span', {}, 'Health'), h('span', {}, 'Last error'));
  const list = new PagedList<ServerView>({
    header: columns,
    label: 'Search servers',
    pageSize: PAGE_SIZE,
    container: rows,
    searchText: (server) => `${server.name} ${server.description} ${transportSummary(server.transport)} ${server.health.state}`.toLowerCase(),
    renderRow: row,
    noMatch: 'No server matches the search.',
  });

  const render = (): void => {
    if (context.servers.loadError) replace(notice, context.servers.loadError.message);
    const servers = context.servers.all().sort((a, b) => a.name.localeCompare(b.name));
    const healthy = servers.filter((server) => server.health.state === 'ready').length;
    const degraded = servers.filter((server) => server.health.degraded).length;
    replace(summary, servers.length === 0 ? 'No servers yet: add one.' : `${servers.length} servers · ${healthy} ready · ${degraded} degraded`);
    list.setItems(servers);
  };

  const header = h(
    'div',
    { class: 'page-head' },
    h('h1', {}, 'Servers'),
    h('button', { type: 'button', class: 'primary', onclick: () => openServerForm(context, null) }, 'Add server'),
  );
  const element = h('section', { class: 'page', 'data-page': 'servers' }, header, summary, notice, list.element);
  const stop = context.servers.onChange(render);
  render();
  return { element, unmount: stop };
}
