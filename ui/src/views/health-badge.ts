// A server's health at a glance: its state, and degraded (left out of lists).
import { h } from '../dom.js';
import { healthLabel } from '../format.js';
import type { ServerView } from '../types.js';

export function healthBadge(server: ServerView): HTMLElement {
  const label = healthLabel(server.health);
  return h(
    'span',
    { class: 'health' },
    h('span', { class: `badge badge-${label.tone}`, 'data-health': server.health.state }, label.text),
    server.health.degraded ? h('span', { class: 'badge badge-bad', 'data-degraded': 'true', title: 'missed the list deadline: left out of client lists' }, 'degraded') : null,
  );
}
