// "Add to toolset…" from a server's capability tab: the selected capabilities
// go into an existing toolset's includes (PATCH) or a new toolset of just
// them (POST). The daemon's refusal is shown as it is.
import type { ViewContext } from '../context.js';
import { h } from '../dom.js';
import { patternOf, withCapabilities, type CapabilityRef } from '../toolset-model.js';
import type { ToolsetInfo } from '../types.js';
import { field, showFormErrors } from './form-fields.js';
import { toolsetPath } from './toolset-form.js';

/** The select's value for a new toolset (a toolset name never starts with a space). */
const NEW = ' new';

export function openAddToToolset(context: ViewContext, server: string, items: readonly CapabilityRef[], added: (toolset: string) => void): HTMLDialogElement {
  const toolsets = context.toolsets.toolsets;
  const target = field('toolset', 'Toolset', h('select', {}, ...toolsets.map((toolset) => h('option', { value: toolset.name }, toolset.name)), h('option', { value: NEW }, 'a new toolset…')));
  const name = field('name', 'New toolset name', h('input', { type: 'text', autocomplete: 'off' }), 'the endpoint is /mcp/<name>');
  const showName = (): void => void (name.wrapper.hidden = target.input.value !== NEW);
  target.input.addEventListener('change', showName);
  showName();

  const message = h('div', { class: 'form-message', role: 'alert' });
  const submit = h('button', { type: 'submit', class: 'primary' }, 'Add');
  const title = `Add ${items.length} of ${server} to a toolset`;
  const form = h(
    'form',
    { class: 'add-to-toolset', method: 'dialog' },
    h('h2', {}, title),
    h('ul', { class: 'mono picked' }, ...items.map((item) => h('li', {}, `${server}/${patternOf(item)}`))),
    message,
    target.wrapper,
    name.wrapper,
    h('div', { class: 'actions' }, h('button', { type: 'button', onclick: () => dialog.close() }, 'Cancel'), submit),
  );
  const dialog = h('dialog', { class: 'dialog', 'aria-label': title }, form);

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const existing = toolsets.find((toolset) => toolset.name === target.input.value);
    const toolset = existing?.name ?? name.input.value;
    submit.disabled = true;
    const saved = existing
      ? context.api.patch<ToolsetInfo>(toolsetPath(existing.name), { servers: withCapabilities(existing.servers, server, items) })
      : context.api.post<ToolsetInfo>('/toolsets', { name: toolset, servers: withCapabilities([], server, items) });
    saved
      .then(async () => {
        dialog.close();
        await context.toolsets.reload();
        added(toolset);
      })
      .catch((error: Error) => showFormErrors(message, [target, name], error))
      .finally(() => (submit.disabled = false));
  });
  dialog.addEventListener('close', () => dialog.remove());
  document.body.appendChild(dialog);
  dialog.showModal();
  return dialog;
}
