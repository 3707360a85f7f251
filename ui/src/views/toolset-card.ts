// One toolset: its description, mode, endpoint (copyable), rules and the
// clients bound to it; Edit and Delete. A refusal (a delete while a client is
// bound) is shown on the card in the API's own words.
import type { ViewContext } from '../context.js';
import { h, replace } from '../dom.js';
import type { ToolsetInfo } from '../types.js';
import { openToolsetForm, toolsetPath } from './toolset-form.js';

/** The endpoint as a client is configured with it: this daemon's origin plus /mcp/<name>. */
const endpointUrl = (toolset: ToolsetInfo): string => `${location.origin}${toolset.endpoint}`;

function copyButton(text: string, done: HTMLElement): HTMLButtonElement {
  const copy = (): void =>
    // No clipboard outside a secure context (a page not on loopback): a refusal, not a throw.
    void Promise.resolve()
      .then(() => navigator.clipboard.writeText(text))
      .then(
        () => replace(done, 'copied'),
        () => replace(done, 'copy it by hand: the browser refused the clipboard'),
      );
  return h('button', { type: 'button', onclick: copy }, 'Copy');
}

function rulesTable(toolset: ToolsetInfo): HTMLElement {
  if (toolset.servers.length === 0) return h('p', { class: 'muted' }, 'No servers: the set is empty.');
  const cell = (patterns: string[] | undefined, none: string) => h('td', { class: 'mono' }, patterns && patterns.length > 0 ? patterns.join(' ') : none);
  return h(
    'table',
    { class: 'rules' },
    h('thead', {}, h('tr', {}, h('th', {}, 'Server'), h('th', {}, 'Include'), h('th', {}, 'Exclude'))),
    h('tbody', {}, ...toolset.servers.map((rule) => h('tr', { 'data-rule': rule.server }, h('td', { class: 'mono' }, rule.server), cell(rule.include, rule.include ? '(nothing)' : '(all)'), cell(rule.exclude, '')))),
  );
}

export function toolsetCard(context: ViewContext, toolset: ToolsetInfo): HTMLElement {
  const refusal = h('p', { class: 'field-error', role: 'alert', 'data-error-for': 'delete' });
  const copied = h('span', { class: 'muted copied', role: 'status' });
  const remove = async (): Promise<void> => {
    if (!confirm(`Delete toolset '${toolset.name}'? Clients of ${toolset.endpoint} lose it.`)) return;
    replace(refusal);
    try {
      await context.api.delete(toolsetPath(toolset.name));
      await context.toolsets.reload();
    } catch (error) {
      replace(refusal, (error as Error).message);
    }
  };
  return h(
    'article',
    { class: 'card toolset-card', 'data-toolset': toolset.name },
    h(
      'div',
      { class: 'page-head' },
      h('h2', { class: 'mono' }, toolset.name),
      h('span', { class: 'badge badge-off', 'data-mode': toolset.mode ?? 'full' }, `mode: ${toolset.mode ?? 'full'}`),
      h('button', { type: 'button', onclick: () => openToolsetForm(context, context.toolsets.get(toolset.name) ?? toolset) }, 'Edit'),
      h('button', { type: 'button', class: 'danger', onclick: () => void remove() }, 'Delete'),
    ),
    toolset.description ? h('p', { class: 'description' }, toolset.description) : null,
    h('p', { class: 'endpoint' }, h('span', { class: 'tag' }, 'endpoint'), ' ', h('code', { class: 'mono endpoint-url' }, endpointUrl(toolset)), ' ', copyButton(endpointUrl(toolset), copied), ' ', copied),
    toolset.pinned?.length ? h('p', {}, h('span', { class: 'tag' }, 'pinned'), ' ', h('span', { class: 'mono' }, toolset.pinned.join(' '))) : null,
    rulesTable(toolset),
    h('p', { class: 'bound-clients' }, h('span', { class: 'tag' }, 'clients'), ' ', toolset.clients.length === 0 ? h('span', { class: 'muted' }, 'no client bound') : toolset.clients.join(', ')),
    refusal,
  );
}
