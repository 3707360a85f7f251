// Create or edit a toolset in a dialog. Rules are typed the way `coffer
// toolset` takes them (whole servers; SERVER/PATTERN includes and excludes);
// the daemon validates, and its message and field errors are shown as they are.
import type { ViewContext } from '../context.js';
import { h } from '../dom.js';
import type { ToolsetInfo } from '../types.js';
import { rulesOf, ruleText } from '../../../src/toolsets/rule-text.js';
import { openFormDialog } from './form-dialog.js';
import { field, lines } from './form-fields.js';

export const toolsetPath = (name: string): string => `/toolsets/${encodeURIComponent(name)}`;

const LIST_LABEL = { include: 'Include', exclude: 'Exclude' } as const;

export function openToolsetForm(context: ViewContext, existing: ToolsetInfo | null): HTMLDialogElement {
  const text = ruleText(existing?.servers ?? []);
  const textarea = (value: string[]) => {
    const input = h('textarea', { rows: 3, class: 'mono' });
    input.value = value.join('\n');
    return input;
  };
  const name = field('name', 'Name', h('input', { type: 'text', value: existing?.name ?? '', disabled: existing !== null, autocomplete: 'off' }), 'the endpoint is /mcp/<name>');
  const description = field('description', 'Description', h('input', { type: 'text', value: existing?.description ?? '' }));
  const mode = field('mode', 'Mode', h('select', {}, h('option', { value: 'full' }, "full: tools/list shows the set's tools"), h('option', { value: 'search' }, 'search: tools/list shows the search meta-tools')));
  mode.input.value = existing?.mode ?? 'full';
  const servers = field('servers', 'Whole servers (one per line)', textarea(text.server), 'every capability of each, unless excluded');
  const include = field('include', 'Include (SERVER/PATTERN per line)', textarea(text.include), 'e.g. fs/tool:read_* — tool:, prompt: or resource:, * any characters, ? one');
  const exclude = field('exclude', 'Exclude (SERVER/PATTERN per line)', textarea(text.exclude), 'wins over include');
  const pinned = field('pinned', 'Pinned in search mode (SERVER/tool:GLOB per line)', textarea(existing?.pinned ?? []));
  const fields = [name, description, mode, servers, include, exclude, pinned];

  const body = (): Record<string, unknown> => {
    const rules = rulesOf({ server: lines(servers.input.value), include: lines(include.input.value), exclude: lines(exclude.input.value) }, (list, problem) => new Error(`${LIST_LABEL[list]} ${problem}`));
    return {
      ...(existing ? {} : { name: name.input.value }),
      description: description.input.value,
      servers: rules ?? [],
      mode: mode.input.value,
      pinned: lines(pinned.input.value),
    };
  };

  return openFormDialog<ToolsetInfo>({
    title: existing ? `Edit toolset ${existing.name}` : 'New toolset',
    kind: 'toolset-form',
    submitLabel: existing ? 'Save' : 'Create toolset',
    body: fields.map((entry) => entry.wrapper),
    fields,
    send: () => (existing ? context.api.patch<ToolsetInfo>(toolsetPath(existing.name), body()) : context.api.post<ToolsetInfo>('/toolsets', body())),
    saved: () => context.toolsets.reload(),
  });
}
