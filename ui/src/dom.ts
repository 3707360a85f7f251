// A tiny element builder. Text always goes in as text nodes (never HTML), so
// names and descriptions from upstream servers cannot inject markup.

type Child = Node | string | number | null | undefined | false;
type Handler = (event: Event) => void;
export type Attrs = Record<string, string | number | boolean | Handler | null | undefined>;

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (typeof value === 'function') element.addEventListener(name.slice(2), value);
    else if (name === 'class') element.className = String(value);
    else if (name === 'value' && 'value' in element) (element as HTMLInputElement).value = String(value);
    else if (name === 'checked' && element instanceof HTMLInputElement) element.checked = Boolean(value);
    else element.setAttribute(name, value === true ? '' : String(value));
  }
  append(element, children);
  return element;
}

export function append(parent: Node, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === 'string' || typeof child === 'number' ? document.createTextNode(String(child)) : child);
  }
}

/** Replaces every child of `parent`. */
export function replace(parent: Node, ...children: Child[]): void {
  parent.textContent = '';
  append(parent, children);
}

/** An on/off switch: a checkbox styled as a switch, labelled for screen readers and tests. */
export function toggle(label: string, checked: boolean, onChange: (enabled: boolean, input: HTMLInputElement) => void): HTMLLabelElement {
  const input = h('input', { type: 'checkbox', role: 'switch', 'aria-label': label, checked });
  input.addEventListener('change', () => onChange(input.checked, input));
  return h('label', { class: 'switch' }, input, h('span', { class: 'slider', 'aria-hidden': 'true' }));
}
