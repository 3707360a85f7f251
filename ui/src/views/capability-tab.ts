// One capability tab: its state line (failed vs empty, R8), then every item
// with its switch, description and schema when live, or "not live" and when
// it was last seen (R6). Thousands of items are paged and searchable.
import type { TabItem, TabModel, Tab } from '../capability-model.js';
import { h, replace, toggle } from '../dom.js';
import { ago } from '../format.js';
import { PagedList } from './paged-list.js';

const PAGE_SIZE = 100;

const COULD_NOT_LOAD = 'could not load — test the connection or refresh';
const noneDiscovered = (tab: Tab): string => `no ${tab} discovered`;

export type SetEnabled = (item: TabItem, enabled: boolean) => Promise<void>;

export class CapabilityTab {
  readonly element: HTMLElement;
  private readonly state = h('div', { class: 'tab-state', role: 'status' });
  private readonly list: PagedList<TabItem>;

  constructor(
    private readonly tab: Tab,
    private readonly setEnabled: SetEnabled,
  ) {
    this.list = new PagedList<TabItem>({
      label: `Search ${tab}`,
      pageSize: PAGE_SIZE,
      container: h('div', { class: 'rows capability-rows' }),
      searchText: (item) => `${item.key} ${item.description}`.toLowerCase(),
      renderRow: (item) => this.row(item),
      noMatch: `No ${tab} match the search.`,
    });
    this.element = h('div', { class: 'capability-tab', 'data-tab': tab }, this.state, this.list.element);
  }

  show(model: TabModel): void {
    this.element.dataset.status = model.status;
    switch (model.status) {
      case 'loading':
        replace(this.state, h('p', { class: 'muted' }, `Loading ${this.tab}…`));
        break;
      case 'failed':
        replace(this.state, h('div', { class: 'state-failed' }, h('strong', {}, COULD_NOT_LOAD), h('p', { class: 'error-text' }, model.error ?? '')));
        break;
      case 'empty':
        replace(this.state, h('p', { class: 'state-empty' }, noneDiscovered(this.tab), h('span', { class: 'muted' }, ' — the upstream answered and offers none.')));
        break;
      case 'live':
        replace(this.state);
        break;
    }
    if (model.items.some((item) => !item.live)) {
      this.state.append(h('p', { class: 'muted' }, 'Items marked "not live" are known from earlier: their switch applies when the upstream offers them again.'));
    }
    this.list.setItems(model.items);
  }

  private row(item: TabItem): HTMLElement {
    const error = h('span', { class: 'field-error' });
    const sw = toggle(`enable ${item.type} ${item.key}`, item.enabled, (enabled, input) => {
      input.disabled = true;
      replace(error);
      this.setEnabled(item, enabled)
        .then(() => (item.enabled = enabled))
        .catch((failure: Error) => {
          input.checked = !enabled;
          replace(error, failure.message);
        })
        .finally(() => (input.disabled = false));
    });
    const schema = item.schema === undefined ? null : h('details', { class: 'schema' }, h('summary', {}, 'schema'), h('pre', { class: 'mono' }, JSON.stringify(item.schema, null, 2)));
    return h(
      'div',
      { class: `row capability-row${item.live ? '' : ' not-live'}`, 'data-key': item.key },
      sw,
      h(
        'div',
        { class: 'capability-main' },
        h('span', { class: 'mono key' }, item.key),
        item.live ? null : h('span', { class: 'badge badge-off' }, 'not live'),
        item.live ? null : h('span', { class: 'muted last-seen', title: item.last_seen_at ?? '' }, `last seen ${ago(item.last_seen_at)}`),
        item.description ? h('p', { class: 'description' }, item.description) : null,
        schema,
        error,
      ),
    );
  }
}
