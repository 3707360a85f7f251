// A form in a modal dialog: its title, the message line, the fields, Cancel
// and the submit button. On submit it makes the form's one call; a refusal
// lands on the form (the daemon's words), success closes it.
import { h } from '../dom.js';
import { showFormErrors, type Field } from './form-fields.js';

export interface FormDialog<T> {
  title: string;
  /** The form's CSS class. */
  kind: string;
  submitLabel: string;
  /** What goes between the message line and the buttons. */
  body: Node[];
  /** The inputs refusals are shown on. */
  fields: readonly Field[];
  /** The call to make; null: nothing to send, the dialog just closes. A throw is the form's own syntax error. */
  send(): Promise<T> | null;
  /** After the dialog closed on success. */
  saved(answer: T): unknown;
}

export function openFormDialog<T>(spec: FormDialog<T>): HTMLDialogElement {
  const message = h('div', { class: 'form-message', role: 'alert' });
  const submit = h('button', { type: 'submit', class: 'primary' }, spec.submitLabel);
  const form = h(
    'form',
    { class: `dialog-form ${spec.kind}`, method: 'dialog' },
    h('h2', {}, spec.title),
    message,
    ...spec.body,
    h('div', { class: 'actions' }, h('button', { type: 'button', onclick: () => dialog.close() }, 'Cancel'), submit),
  );
  const dialog = h('dialog', { class: 'dialog', 'aria-label': spec.title }, form);
  const refused = (error: Error): void => showFormErrors(message, spec.fields, error);

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    let sending: Promise<T> | null;
    try {
      sending = spec.send();
    } catch (error) {
      return refused(error as Error);
    }
    if (!sending) return dialog.close();
    submit.disabled = true;
    sending
      .then(async (answer) => {
        dialog.close();
        await spec.saved(answer);
      })
      .catch(refused)
      .finally(() => (submit.disabled = false));
  });
  dialog.addEventListener('close', () => dialog.remove());
  document.body.appendChild(dialog);
  dialog.showModal();
  return dialog;
}
