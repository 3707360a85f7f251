// The activity panel: the admin WebSocket's events as they happen, newest
// first (discovery, list changes, health, switches, calls), plus whether the
// live link itself is up. A line quotes upstreams and clients (names, keys,
// reasons): its controls and bidi marks show as text.
import { escapeControls } from '../../../src/protocol/untrusted-text.js';
import type { ViewContext } from '../context.js';
import { h, replace } from '../dom.js';
import { eventLine } from '../event-text.js';
import { clock } from '../format.js';
import type { LinkState } from '../live.js';

const MAX_LINES = 200;

const LINK_TEXT: Record<LinkState, string> = { connecting: 'connecting…', live: 'live', offline: 'offline — reconnecting' };

export function activityPanel(context: ViewContext): HTMLElement {
  const link = h('span', { class: 'link-state', 'data-link': context.live.state });
  const lines = h('ol', { class: 'activity-lines', 'aria-live': 'polite' });
  const showLink = (state: LinkState): void => {
    link.dataset.link = state;
    replace(link, LINK_TEXT[state]);
  };
  showLink(context.live.state);
  context.live.onState(showLink);
  context.live.onEvent((event) => {
    const line = eventLine(event);
    lines.prepend(
      h(
        'li',
        { class: `activity tone-${line.tone}`, 'data-type': event.type },
        h('time', { datetime: line.at }, clock(line.at)),
        h('span', { class: 'label' }, line.label),
        line.server ? h('a', { class: 'server', href: `#/servers/${encodeURIComponent(line.server)}/tools` }, line.server) : null,
        h('span', { class: 'text' }, escapeControls(line.text)),
      ),
    );
    while (lines.childElementCount > MAX_LINES) lines.lastElementChild!.remove();
  });
  return h('aside', { class: 'activity-panel', 'aria-label': 'Activity' }, h('div', { class: 'panel-head' }, h('h2', {}, 'Activity'), link), lines);
}
