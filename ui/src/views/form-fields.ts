// The fields of a dialog form and how a refusal lands on them: the message
// as the daemon wrote it, and each field error beside the input it is about.
import { ApiError } from '../api.js';
import { h, replace } from '../dom.js';

export interface Field {
  /** The API field path this input answers for (errors on it and below it show here). */
  path: string;
  input: HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement;
  error: HTMLElement;
  wrapper: HTMLElement;
}

export function field(path: string, label: string, input: Field['input'], hint = ''): Field {
  const error = h('span', { class: 'field-error', 'data-error-for': path });
  input.setAttribute('name', path);
  const wrapper = h('label', { class: 'field' }, h('span', { class: 'field-label' }, label), input, hint ? h('span', { class: 'muted hint' }, hint) : null, error);
  return { path, input, error, wrapper };
}

/** A refusal (the API's, or the form's own syntax error) shown on the form: its message, and each field's errors. */
export function showFormErrors(message: HTMLElement, fields: readonly Field[], error: Error): void {
  replace(message, error.message);
  message.classList.add('shown');
  const fieldErrors = error instanceof ApiError ? error.fieldErrors : [];
  for (const candidate of fields) {
    const mine = fieldErrors.filter((entry) => entry.field === candidate.path || entry.field.startsWith(`${candidate.path}.`) || entry.field.startsWith(`${candidate.path}[`));
    replace(candidate.error, mine.map((entry) => `${entry.field}: ${entry.message}`).join('; '));
    candidate.wrapper.classList.toggle('invalid', mine.length > 0);
  }
}

/** A textarea's non-empty lines, trimmed. */
export const lines = (text: string): string[] =>
  text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');
