// A searchable, paged list: only one page of rows is ever in the DOM, so
// thousands of servers or tools stay fast. The caller renders a row; this
// keeps the search text and the page across re-renders.
import { h, replace } from '../dom.js';

export interface PagedListOptions<T> {
  /** Placeholder of the search box, e.g. "Search 5000 tools". */
  label: string;
  pageSize: number;
  /** Lower-case text a search matches against. */
  searchText(item: T): string;
  renderRow(item: T): HTMLElement;
  /** The element rows go into (a tbody or a ul). */
  container: HTMLElement;
  /** Shown when nothing matches a non-empty search. */
  noMatch?: string;
  /** Column titles, between the search box and the rows. */
  header?: HTMLElement;
}

export class PagedList<T> {
  readonly element: HTMLElement;
  private items: T[] = [];
  private query = '';
  private page = 0;
  private readonly search: HTMLInputElement;
  private readonly pager: HTMLElement;

  constructor(private readonly options: PagedListOptions<T>) {
    this.search = h('input', { type: 'search', class: 'search', placeholder: options.label, 'aria-label': options.label });
    this.search.addEventListener('input', () => {
      this.query = this.search.value.trim().toLowerCase();
      this.page = 0;
      this.render();
    });
    this.pager = h('nav', { class: 'pager', 'aria-label': 'pages' });
    this.element = h('div', { class: 'paged-list' }, this.search, options.header, options.container, this.pager);
  }

  /** New items; the search and (when still in range) the page are kept. */
  setItems(items: T[]): void {
    this.items = items;
    this.render();
  }

  private render(): void {
    const matching = this.query === '' ? this.items : this.items.filter((item) => this.options.searchText(item).includes(this.query));
    const pages = Math.max(1, Math.ceil(matching.length / this.options.pageSize));
    this.page = Math.min(this.page, pages - 1);
    const start = this.page * this.options.pageSize;
    const rows = matching.slice(start, start + this.options.pageSize).map((item) => this.options.renderRow(item));
    replace(this.options.container, ...rows);
    if (matching.length === 0 && this.query !== '') replace(this.options.container, h('p', { class: 'empty' }, this.options.noMatch ?? 'Nothing matches the search.'));
    // Nothing to search or head: an empty list is said by the caller (e.g. "no prompts discovered").
    this.search.hidden = this.items.length === 0;
    if (this.options.header) this.options.header.hidden = matching.length === 0;
    // One page needs no pager.
    this.pager.hidden = pages === 1;
    const go = (page: number) => () => {
      this.page = page;
      this.render();
    };
    replace(
      this.pager,
      h('button', { type: 'button', disabled: this.page === 0, onclick: go(this.page - 1) }, '‹ Previous'),
      h('span', { class: 'page-info' }, `${matching.length === 0 ? 0 : start + 1}–${start + rows.length} of ${matching.length}`),
      h('button', { type: 'button', disabled: this.page >= pages - 1, onclick: go(this.page + 1) }, 'Next ›'),
    );
  }
}
