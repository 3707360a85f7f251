// The user's own words for one tool or prompt, beside the upstream's: the
// name clients see (after the namespace) and the description. Saved through
// the API; a refusal (a name taken, or one model hosts refuse) stays on the
// form with the API's message.
import { escapeControls } from '../../../src/protocol/untrusted-text.js';
import type { TabItem } from '../capability-model.js';
import { h, replace } from '../dom.js';
import type { OwnWords } from '../types.js';

export type SetWords = (item: TabItem, words: OwnWords) => Promise<void>;

/** What the row shows beside the upstream's name: the user's own name, if any. */
export function ownNameBadge(item: TabItem): HTMLElement | null {
  return item.own_name === null ? null : h('span', { class: 'own-name', title: "your name for it; calls still reach the upstream's" }, 'shown as ', h('span', { class: 'mono' }, item.own_name));
}

/** The descriptions: the user's (marked) above the upstream's (muted) when both exist. */
export function descriptions(item: TabItem): HTMLElement[] {
  const upstream = item.description ? h('p', { class: 'description' }, item.own_description === null ? '' : h('span', { class: 'muted' }, 'upstream: '), escapeControls(item.description)) : null;
  if (item.own_description === null) return upstream ? [upstream] : [];
  return [h('p', { class: 'description own-description' }, h('span', { class: 'badge' }, 'yours'), ' ', item.own_description), ...(upstream ? [upstream] : [])];
}

/** An open editor's state: what is typed, which field has the focus, the API's refusal. */
interface Draft {
  name: string;
  description: string;
  focus: 'name' | 'description' | null;
  error: string;
  /** The editor that shows it now, and its refusal line (rows rendered again replace both). */
  shown: Shown;
}

interface Shown {
  details: HTMLDetailsElement;
  error: HTMLElement;
}

/**
 * The open editors of one tab, by item key. Rows are rendered again whenever
 * the server's lists or statuses change; an editor the user has open keeps its
 * text, focus and refusal across that, and is closed only by the user or a save.
 */
export class WordsDrafts {
  private readonly drafts = new Map<string, Draft>();

  editor(item: TabItem, save: SetWords): HTMLElement {
    const draft = this.drafts.get(item.key);
    const name = h('input', { type: 'text', name: 'own-name', 'aria-label': `your name for ${item.key}`, placeholder: escapeControls(item.key), value: draft?.name ?? item.own_name ?? '', maxlength: 64 });
    const description = h('textarea', { name: 'own-description', 'aria-label': `your description for ${item.key}`, placeholder: escapeControls(item.description) || 'the upstream gives none', rows: 3, maxlength: 4096 });
    description.value = draft?.description ?? item.own_description ?? '';
    const error = h('span', { class: 'field-error', role: 'alert' }, draft?.error ?? '');
    const details = h('details', { class: 'words' });
    const own: Shown = { details, error };
    if (draft) draft.shown = own;
    const current = (): Draft | undefined => this.drafts.get(item.key);
    const track = (field: HTMLInputElement | HTMLTextAreaElement, which: 'name' | 'description'): void => {
      field.addEventListener('input', () => {
        const open = current();
        if (open) open[which] = field.value;
      });
      field.addEventListener('focus', () => {
        const open = current();
        if (open) open.focus = which;
      });
      // A field removed by a re-render is not the user leaving it.
      field.addEventListener('blur', () => {
        const open = current();
        if (open && field.isConnected && open.focus === which) open.focus = null;
      });
    };
    track(name, 'name');
    track(description, 'description');
    details.addEventListener('toggle', () => {
      if (!details.open) this.drafts.delete(item.key);
      else if (!current()) this.drafts.set(item.key, { name: name.value, description: description.value, focus: null, error: '', shown: own });
    });
    // The API's answer goes to the editor shown when it comes: the rows may have been rendered again meanwhile.
    const shown = (): Shown => current()?.shown ?? own;
    const submit = (words: OwnWords, button: HTMLButtonElement): void => {
      button.disabled = true;
      replace(error);
      const open = current();
      if (open) open.error = '';
      save(item, words).then(
        () => {
          button.disabled = false;
          const { details: editor } = shown();
          this.drafts.delete(item.key);
          editor.open = false;
        },
        (failure: Error) => {
          button.disabled = false;
          replace(shown().error, failure.message);
          const still = current();
          if (still) still.error = failure.message;
        },
      );
    };
    const saveButton = h('button', { type: 'submit' }, 'Save');
    const resetButton: HTMLButtonElement = h('button', { type: 'button', class: 'secondary', onclick: () => submit({ name: null, description: null }, resetButton) }, "Use the upstream's");
    const form = h(
      'form',
      {
        class: 'words-form',
        onsubmit: (event: Event) => {
          event.preventDefault();
          // Empty fields go back to the upstream's own.
          submit({ name: name.value.trim() || null, description: description.value.trim() || null }, saveButton);
        },
      },
      h('label', {}, 'Name ', name),
      h('label', {}, 'Description ', description),
      h('div', { class: 'actions' }, saveButton, resetButton),
      error,
    );
    details.append(h('summary', {}, 'your words'), form);
    if (draft) {
      details.open = true;
      // Focus moves once the row is in the document.
      const field = draft.focus === 'name' ? name : draft.focus === 'description' ? description : null;
      if (field) queueMicrotask(() => field.isConnected && field.focus());
    }
    return details;
  }
}
