// The invocation log: every call through the gateway (never arguments or
// results), filtered by server, status and age; new calls that match the
// filters appear as they happen.
import { escapeControls } from '../../../src/protocol/untrusted-text.js';
import type { View, ViewContext } from '../context.js';
import { h, replace } from '../dom.js';
import { clock } from '../format.js';
import type { InvocationRecord, InvocationRow } from '../types.js';

const SINCE_CHOICES: Array<[string, number | null]> = [
  ['any time', null],
  ['last 15 minutes', 15 * 60_000],
  ['last hour', 3_600_000],
  ['last 24 hours', 86_400_000],
  ['last 7 days', 7 * 86_400_000],
];

export function invocationsPage(context: ViewContext): View {
  const server = h('input', { type: 'text', list: 'server-names', placeholder: 'all servers', 'aria-label': 'server', name: 'server' });
  const names = h('datalist', { id: 'server-names' }, ...context.servers.all().map((entry) => h('option', { value: entry.name })));
  const status = h('select', { 'aria-label': 'status', name: 'status' }, h('option', { value: '' }, 'any status'), ...['ok', 'error', 'timeout', 'denied'].map((value) => h('option', { value }, value)));
  const since = h('select', { 'aria-label': 'since', name: 'since' }, ...SINCE_CHOICES.map(([label], index) => h('option', { value: String(index) }, label)));
  const limit = h('select', { 'aria-label': 'limit', name: 'limit' }, ...['100', '500', '1000'].map((value) => h('option', { value }, `${value} rows`)));
  const notice = h('p', { class: 'notice', role: 'status' });
  const rows = h('tbody');

  const row = (entry: InvocationRecord | InvocationRow, fresh = false): HTMLElement =>
    h(
      'tr',
      { class: `${entry.status === 'ok' ? '' : 'row-bad'}${fresh ? ' fresh' : ''}`, 'data-status': entry.status },
      h('td', {}, h('time', { datetime: entry.at }, clock(entry.at))),
      h('td', {}, entry.server),
      h('td', {}, entry.kind),
      h('td', { class: 'mono' }, escapeControls(entry.key)),
      h('td', { class: 'num' }, `${entry.duration_ms} ms`),
      h('td', {}, h('span', { class: `badge badge-${entry.status === 'ok' ? 'ok' : 'bad'}` }, entry.status)),
      h('td', { class: 'mono' }, entry.error_code === null ? '' : String(entry.error_code)),
    );

  /** Filters change faster than answers come: only the last load started may fill the table. */
  let loadSeq = 0;
  const load = async (): Promise<void> => {
    const seq = ++loadSeq;
    const query = new URLSearchParams({ limit: limit.value });
    if (server.value.trim() !== '') query.set('server', server.value.trim());
    if (status.value !== '') query.set('status', status.value);
    const age = SINCE_CHOICES[Number(since.value)]![1];
    const sinceIso = age === null ? null : new Date(Date.now() - age).toISOString();
    if (sinceIso) query.set('since', sinceIso);
    try {
      const { invocations } = await context.api.get<{ invocations: InvocationRow[] }>(`/invocations?${query}`);
      if (seq !== loadSeq) return;
      replace(rows, ...invocations.map((entry) => row(entry)));
      replace(notice, invocations.length === 0 ? 'No calls match these filters.' : `${invocations.length} calls, newest first.`);
    } catch (error) {
      if (seq === loadSeq) replace(notice, (error as Error).message);
    }
  };

  const matches = (entry: InvocationRecord): boolean =>
    (server.value.trim() === '' || entry.server === server.value.trim()) && (status.value === '' || entry.status === status.value);

  const stop = context.live.onEvent((event) => {
    if (event.type !== 'invocation' || !matches(event.invocation)) return;
    rows.prepend(row(event.invocation, true));
    while (rows.childElementCount > Number(limit.value)) rows.lastElementChild!.remove();
  });

  for (const control of [status, since, limit]) control.addEventListener('change', () => void load());
  server.addEventListener('change', () => void load());
  const element = h(
    'section',
    { class: 'page', 'data-page': 'invocations' },
    h('div', { class: 'page-head' }, h('h1', {}, 'Invocations')),
    h('form', { class: 'filters', onsubmit: (event: Event) => (event.preventDefault(), void load()) }, server, names, status, since, limit, h('button', { type: 'submit' }, 'Apply')),
    notice,
    h('table', { class: 'table' }, h('thead', {}, h('tr', {}, ...['Time', 'Server', 'Kind', 'Key', 'Duration', 'Status', 'Error'].map((title) => h('th', {}, title)))), rows),
  );
  void load();
  return { element, unmount: stop };
}
