// "Add to toolset…" from a server's capability tab: the selected capabilities
// go into an existing toolset's includes (PATCH) or a new toolset of just
// them (POST). The daemon's refusal is shown as it is.
import type { ViewContext } from '../context.js';
import { h } from '../dom.js';
import { patternOf, withCapabilities, type CapabilityRef } from '../toolset-model.js';
import type { ToolsetInfo } from '../types.js';
import { openFormDialog } from './form-dialog.js';
import { field } from './form-fields.js';
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

  const chosen = (): ToolsetInfo | undefined => toolsets.find((toolset) => toolset.name === target.input.value);
  return openFormDialog<ToolsetInfo>({
    title: `Add ${items.length} of ${server} to a toolset`,
    kind: 'add-to-toolset',
    submitLabel: 'Add',
    body: [h('ul', { class: 'mono picked' }, ...items.map((item) => h('li', {}, `${server}/${patternOf(item)}`))), target.wrapper, name.wrapper],
    fields: [target, name],
    send: () => {
      const existing = chosen();
      return existing
        ? context.api.patch<ToolsetInfo>(toolsetPath(existing.name), { servers: withCapabilities(existing.servers, server, items) })
        : context.api.post<ToolsetInfo>('/toolsets', { name: name.input.value, servers: withCapabilities([], server, items) });
    },
    saved: async (toolset) => {
      await context.toolsets.reload();
      added(toolset.name);
    },
  });
}
