// One capability tab: its state line (failed vs empty, R8), then every item
// with its switch, description and schema when live, or "not live" and when
// it was last seen (R6). Tools and prompts show the user's own name and
// description beside the upstream's, editable. Each row names the toolsets
// holding it; rows picked with their box go to a toolset with "Add to
// toolset…". Thousands of items are paged and searchable. The upstream's
// words show their controls and bidi marks as \xNN / \uNNNN text, as the CLI
// does: a name with U+202E would otherwise read reordered.
import { escapeControls } from '../../../src/protocol/untrusted-text.js';
import type { TabItem, TabModel, Tab } from '../capability-model.js';
import { h, replace, toggle } from '../dom.js';
import { ago } from '../format.js';
import { PagedList } from './paged-list.js';
import { descriptions, ownNameBadge, WordsDrafts, type SetWords } from './words-editor.js';

const PAGE_SIZE = 100;

const COULD_NOT_LOAD = 'could not load — test the connection or refresh';
const noneDiscovered = (tab: Tab): string => `no ${tab} discovered`;

export type SetEnabled = (item: TabItem, enabled: boolean) => Promise<void>;

/** The toolsets side of a tab: which sets hold an item, and adding picked items to one. */
export interface ToolsetPicks {
  holding(item: TabItem): string[];
  /** Opens "Add to toolset…"; `added` runs once they are in the named toolset. */
  add(items: TabItem[], added: (toolset: string) => void): void;
}

export class CapabilityTab {
  readonly element: HTMLElement;
  private readonly state = h('div', { class: 'tab-state', role: 'status' });
  private readonly list: PagedList<TabItem>;
  /** Picked rows by key, kept across searches, pages and reloads. */
  private readonly picked = new Map<string, TabItem>();
  private readonly addButton = h('button', { type: 'button', class: 'add-to-toolset', disabled: true, onclick: () => this.addPicked() }, 'Add to toolset…');
  private readonly pickResult = h('span', { class: 'muted pick-result', role: 'status' });

  constructor(
    private readonly tab: Tab,
    private readonly setEnabled: SetEnabled,
    private readonly toolsets: ToolsetPicks,
    /** Null where items have no words of their own (resources). */
    private readonly setWords: SetWords | null = null,
  ) {
    this.list = new PagedList<TabItem>({
      label: `Search ${tab}`,
      pageSize: PAGE_SIZE,
      container: h('div', { class: 'rows capability-rows' }),
      searchText: (item) => `${item.key} ${item.own_name ?? ''} ${item.description} ${item.own_description ?? ''}`.toLowerCase(),
      renderRow: (item) => this.row(item),
      noMatch: `No ${tab} match the search.`,
    });
    this.element = h('div', { class: 'capability-tab', 'data-tab': tab }, this.state, h('div', { class: 'tab-tools' }, this.addButton, this.pickResult), this.list.element);
  }

  show(model: TabModel): void {
    this.element.dataset.status = model.status;
    switch (model.status) {
      case 'loading':
        replace(this.state, h('p', { class: 'muted' }, `Loading ${this.tab}…`));
        break;
      case 'failed':
        replace(this.state, h('div', { class: 'state-failed' }, h('strong', {}, COULD_NOT_LOAD), h('p', { class: 'error-text' }, escapeControls(model.error ?? ''))));
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

  /** A switch waiting for the API (its asked value) and the API's refusal, per item: rows re-rendered meanwhile show them. */
  private readonly pending = new Map<string, boolean>();
  private readonly refusals = new Map<string, string>();
  private readonly words = new WordsDrafts();

  private row(item: TabItem): HTMLElement {
    const id = itemId(item);
    const asked = this.pending.get(id);
    const error = h('span', { class: 'field-error', 'data-error-for': 'switch' }, this.refusals.get(id));
    const sw = toggle(`enable ${item.type} ${item.key}`, asked ?? item.enabled, (enabled) => this.switchTo(item, enabled));
    sw.querySelector('input')!.disabled = asked !== undefined;
    const pick = h('input', { type: 'checkbox', class: 'pick', 'aria-label': `pick ${item.type} ${item.key}`, checked: this.picked.has(item.key) });
    pick.addEventListener('change', () => this.setPicked(item, pick.checked));
    const holding = this.toolsets.holding(item);
    const schema = item.schema === undefined ? null : h('details', { class: 'schema' }, h('summary', {}, 'schema'), h('pre', { class: 'mono' }, escapeControls(JSON.stringify(item.schema, null, 2))));
    return h(
      'div',
      { class: `row capability-row${item.live ? '' : ' not-live'}`, 'data-key': item.key },
      pick,
      sw,
      h(
        'div',
        { class: 'capability-main' },
        h('span', { class: 'mono key' }, escapeControls(item.key)),
        ownNameBadge(item),
        item.live ? null : h('span', { class: 'badge badge-off' }, 'not live'),
        item.live ? null : h('span', { class: 'muted last-seen', title: item.last_seen_at ?? '' }, `last seen ${ago(item.last_seen_at)}`),
        holding.length === 0 ? null : h('span', { class: 'in-toolsets', 'data-toolsets': holding.join(' ') }, ...holding.map((toolset) => h('a', { class: 'badge badge-toolset', href: '#/toolsets', title: `in toolset ${toolset}` }, toolset))),
        ...descriptions(item),
        schema,
        this.setWords ? this.words.editor(item, this.setWords) : null,
        error,
      ),
    );
  }

  private setPicked(item: TabItem, picked: boolean): void {
    if (picked) this.picked.set(item.key, item);
    else this.picked.delete(item.key);
    this.addButton.disabled = this.picked.size === 0;
    replace(this.pickResult, this.picked.size === 0 ? '' : `${this.picked.size} picked`);
  }

  private addPicked(): void {
    this.toolsets.add([...this.picked.values()], (toolset) => {
      this.picked.clear();
      this.addButton.disabled = true;
      for (const box of this.element.querySelectorAll<HTMLInputElement>('input.pick')) box.checked = false;
      replace(this.pickResult, `Added to toolset ${toolset}.`);
    });
  }

  /** A switch flipped here: on a refusal that switch, and only it, goes back, with the API's message. */
  private switchTo(item: TabItem, enabled: boolean): void {
    const id = itemId(item);
    this.pending.set(id, enabled);
    this.refusals.delete(id);
    this.showSwitch(item, enabled, true, '');
    this.setEnabled(item, enabled).then(
      () => {
        this.pending.delete(id);
        item.enabled = enabled;
        this.showSwitch(item, enabled, false, '');
      },
      (failure: Error) => {
        this.pending.delete(id);
        this.refusals.set(id, failure.message);
        this.showSwitch(item, !enabled, false, failure.message);
      },
    );
  }

  /** The item's row as it is now (the rows may have been rendered again since the click); none when paged or searched away. */
  private showSwitch(item: TabItem, checked: boolean, busy: boolean, message: string): void {
    const row = [...this.element.querySelectorAll<HTMLElement>('.capability-row')].find((candidate) => candidate.dataset.key === item.key);
    if (!row) return;
    const input = row.querySelector<HTMLInputElement>('input[role="switch"]')!;
    input.checked = checked;
    input.disabled = busy;
    // The switch's own message: a row holds other fields' errors too (its words editor).
    replace(row.querySelector('.field-error[data-error-for="switch"]')!, message);
  }
}

const itemId = (item: TabItem): string => `${item.type}:${item.key}`;
