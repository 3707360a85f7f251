// The user's own words for one tool or prompt, beside the upstream's: the
// name clients see (after the namespace) and the description. Saved through
// the API; a refusal (a name taken, or one model hosts refuse) stays on the
// form with the API's message.
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
  const upstream = item.description ? h('p', { class: 'description' }, item.own_description === null ? '' : h('span', { class: 'muted' }, 'upstream: '), item.description) : null;
  if (item.own_description === null) return upstream ? [upstream] : [];
  return [h('p', { class: 'description own-description' }, h('span', { class: 'badge' }, 'yours'), ' ', item.own_description), ...(upstream ? [upstream] : [])];
}

export function wordsEditor(item: TabItem, save: SetWords): HTMLElement {
  const name = h('input', { type: 'text', name: 'own-name', 'aria-label': `your name for ${item.key}`, placeholder: item.key, value: item.own_name ?? '', maxlength: 64 });
  const description = h('textarea', { name: 'own-description', 'aria-label': `your description for ${item.key}`, placeholder: item.description || 'the upstream gives none', rows: 3, maxlength: 4096 });
  description.value = item.own_description ?? '';
  const error = h('span', { class: 'field-error', role: 'alert' });
  const submit = (words: OwnWords, button: HTMLButtonElement): void => {
    button.disabled = true;
    replace(error);
    save(item, words).then(
      () => (button.disabled = false),
      (failure: Error) => {
        button.disabled = false;
        replace(error, failure.message);
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
  return h('details', { class: 'words' }, h('summary', {}, 'your words'), form);
}
