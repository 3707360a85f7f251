// Which client credential uses which toolset, and binding one: PATCH
// /clients/{name}. The daemon closes the client's open sessions on a change
// (so they reconnect to the new set), and the result line says so.
import type { ViewContext } from '../context.js';
import { h, replace } from '../dom.js';
import type { ClientInfo } from '../types.js';

/** The select's value for "the whole surface" (a toolset name never starts with a space). */
const WHOLE = ' whole';

const boundText = (client: string, toolset: string | null): string =>
  `${client} now sees ${toolset === null ? 'the whole surface' : `toolset ${toolset} only`}; its open sessions were closed, so its MCP client reconnects to that.`;

export function clientBindings(context: ViewContext, result: HTMLElement): HTMLElement {
  const { clients, toolsets } = context.toolsets;
  if (clients.length === 0) return h('p', { class: 'muted' }, "No client credentials yet: 'coffer client add NAME' makes one.");
  const row = (client: ClientInfo): HTMLElement => {
    const select = h(
      'select',
      { 'aria-label': `toolset of ${client.name}` },
      h('option', { value: WHOLE }, 'the whole surface (/mcp)'),
      ...toolsets.map((toolset) => h('option', { value: toolset.name }, toolset.name)),
    );
    select.value = client.toolset ?? WHOLE;
    select.addEventListener('change', () => {
      const toolset = select.value === WHOLE ? null : select.value;
      select.disabled = true;
      context.api
        .patch(`/clients/${encodeURIComponent(client.name)}`, { toolset })
        .then(
          () => replace(result, boundText(client.name, toolset)),
          (error: Error) => {
            select.value = client.toolset ?? WHOLE;
            replace(result, error.message);
          },
        )
        .finally(() => (select.disabled = false));
    });
    return h('div', { class: 'row client-row', 'data-client': client.name }, h('span', { class: 'mono name' }, client.name), select);
  };
  return h('div', { class: 'rows client-rows' }, ...clients.map(row));
}
