// The toolsets page: every toolset as a card, New toolset, and the client
// credentials with the toolset each is held to. Kept current by the toolset
// store (admin WebSocket `toolset` and `client_bound` events).
import type { View, ViewContext } from '../context.js';
import { h, replace } from '../dom.js';
import { clientBindings } from './client-bindings.js';
import { toolsetCard } from './toolset-card.js';
import { openToolsetForm } from './toolset-form.js';

export function toolsetsPage(context: ViewContext): View {
  const notice = h('p', { class: 'notice', role: 'status' });
  const cards = h('div', { class: 'toolset-cards' });
  const clients = h('div', { class: 'client-bindings' });
  const bindResult = h('p', { class: 'result', 'data-result': 'bind', role: 'status' });

  const render = (): void => {
    const { toolsets, loadError } = context.toolsets;
    replace(notice, loadError?.message);
    replace(cards, ...(toolsets.length === 0 ? [h('p', { class: 'muted' }, 'No toolsets yet: create one, or pick capabilities on a server page and "Add to toolset…".')] : toolsets.map((toolset) => toolsetCard(context, toolset))));
    replace(clients, clientBindings(context, bindResult));
  };

  const element = h(
    'section',
    { class: 'page', 'data-page': 'toolsets' },
    h('div', { class: 'page-head' }, h('h1', {}, 'Toolsets'), h('button', { type: 'button', class: 'primary', onclick: () => openToolsetForm(context, null) }, 'New toolset')),
    h('p', { class: 'muted' }, 'A toolset is one endpoint, /mcp/<name>, that shows a client only the capabilities it needs. The switches still rule inside it.'),
    notice,
    cards,
    h('h2', {}, 'Clients'),
    bindResult,
    clients,
  );
  const stop = context.toolsets.onChange(render);
  render();
  // Clients added since the page loaded announce no event: read both lists afresh.
  void context.toolsets.reload();
  return { element, unmount: stop };
}
