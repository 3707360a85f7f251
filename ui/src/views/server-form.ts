// Add or edit a server in a dialog. The form only turns fields into the API's
// JSON; the daemon validates, and its message and field errors are shown as
// they are (the same words as `coffer mcp add` and the REST API).
import { serverPath } from '../api.js';
import type { ViewContext } from '../context.js';
import { h, replace } from '../dom.js';
import { PROTOCOL_TEXT, PROTOCOLS, SESSION_MODE_TEXT } from '../format.js';
import type { ProtocolSetting } from '../types.js';
import { field } from './form-fields.js';
import { openFormDialog } from './form-dialog.js';
import type { ServerView, SessionMode, TransportConfig } from '../types.js';

type TransportType = TransportConfig['type'];

/** `KEY=VALUE` lines → an object; a line without `=` is the form's own syntax error. */
function parsePairs(text: string, what: string): Record<string, string> {
  const pairs: Record<string, string> = {};
  for (const [index, line] of text.split('\n').entries()) {
    if (line.trim() === '') continue;
    const at = line.indexOf('=');
    if (at <= 0) throw new Error(`${what} line ${index + 1}: write KEY=VALUE`);
    pairs[line.slice(0, at).trim()] = line.slice(at + 1);
  }
  return pairs;
}

const pairsText = (map: Record<string, string>): string =>
  Object.entries(map)
    .map(([key, value]) => `${key}=${value}`)
    .join('\n');

/** A number field: empty is "default", anything else goes to the daemon as typed (it says what is wrong). */
function timeoutValue(raw: string): number | string | undefined {
  const text = raw.trim();
  if (text === '') return undefined;
  return /^-?\d+(\.\d+)?$/.test(text) ? Number(text) : text;
}

/**
 * An edit sends only what changed: each top-level field whose value differs
 * from the one the form opened with (transport and timeouts as a whole; the
 * API merges them over the stored ones).
 */
function changedFields(before: Record<string, unknown>, after: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(after).filter(([key, value]) => JSON.stringify(value) !== JSON.stringify(before[key])));
}

export function openServerForm(context: ViewContext, existing: ServerView | null): HTMLDialogElement {
  const transport = existing?.transport;
  const stdio = transport?.type === 'stdio' ? transport : null;
  const network = transport && transport.type !== 'stdio' ? transport : null;

  const name = field('name', 'Name', h('input', { type: 'text', value: existing?.name ?? '', disabled: existing !== null, autocomplete: 'off' }), 'letters, digits, _ . -; no "__"');
  const description = field('description', 'Description', h('input', { type: 'text', value: existing?.description ?? '' }));
  const type = field('transport.type', 'Transport', h('select', {}, h('option', { value: 'stdio' }, 'stdio (a local command)'), h('option', { value: 'http' }, 'Streamable HTTP'), h('option', { value: 'sse' }, 'SSE (legacy HTTP)')));
  (type.input as HTMLSelectElement).value = transport?.type ?? 'stdio';
  const command = field('transport.command', 'Command', h('input', { type: 'text', value: stdio?.command ?? '', class: 'mono' }));
  const args = field('transport.args', 'Arguments (one per line)', h('textarea', { rows: 3, class: 'mono' }));
  args.input.value = stdio?.args.join('\n') ?? '';
  const env = field('transport.env', 'Environment (KEY=VALUE per line)', h('textarea', { rows: 2, class: 'mono' }), existing ? '"[redacted]" keeps the stored value' : '');
  env.input.value = stdio ? pairsText(stdio.env) : '';
  const cwd = field('transport.cwd', 'Working folder (absolute; empty: inherit)', h('input', { type: 'text', value: stdio?.cwd ?? '', class: 'mono' }));
  const url = field('transport.url', 'URL', h('input', { type: 'text', value: network?.url ?? '', class: 'mono', placeholder: 'http://127.0.0.1:3001/mcp' }));
  const headers = field('transport.headers', 'Headers (Name=value per line)', h('textarea', { rows: 2, class: 'mono' }), existing ? '"[redacted]" keeps the stored value' : '');
  headers.input.value = network ? pairsText(network.headers) : '';
  const connectMs = field('timeouts.connect_ms', 'Connect timeout (ms)', h('input', { type: 'text', inputmode: 'numeric', value: existing?.timeouts.connect_ms ?? '', placeholder: '30000' }));
  const requestMs = field('timeouts.request_ms', 'Request timeout (ms)', h('input', { type: 'text', inputmode: 'numeric', value: existing?.timeouts.request_ms ?? '', placeholder: '120000' }));
  const deadlineMs = field('timeouts.list_deadline_ms', 'List deadline (ms)', h('input', { type: 'text', inputmode: 'numeric', value: existing?.timeouts.list_deadline_ms ?? '', placeholder: '2000' }));
  const autoEnable = h('input', { type: 'checkbox', checked: existing?.auto_enable_new_capabilities ?? true, name: 'auto_enable_new_capabilities' });
  // Namespace: empty is the default (the server name), the box is "" (no prefix); a custom one is shown as stored.
  const customNamespace = existing && existing.namespace !== '' && existing.namespace !== existing.name ? existing.namespace : '';
  const namespace = field('namespace', 'Namespace (prefix of its tool, prompt and resource names)', h('input', { type: 'text', value: customNamespace, autocomplete: 'off', placeholder: existing?.name ?? 'the server name' }), 'empty: the server name; same characters as names');
  const unprefixed = h('input', { type: 'checkbox', checked: existing?.namespace === '', name: 'namespace.none' });
  namespace.wrapper.insertBefore(h('label', { class: 'check' }, unprefixed, ' No prefix: pass names and URIs through unprefixed'), namespace.error);
  const showNamespace = (): void => {
    namespace.input.disabled = unprefixed.checked;
    if (!existing) namespace.input.setAttribute('placeholder', name.input.value.trim() || 'the server name');
  };
  unprefixed.addEventListener('change', showNamespace);
  name.input.addEventListener('input', showNamespace);
  showNamespace();
  const sessionMode = field('session_mode', 'Session mode', h('select', {}, h('option', { value: 'shared' }, 'shared'), h('option', { value: 'per_session' }, 'per session')), SESSION_MODE_TEXT[existing?.session_mode ?? 'shared']);
  sessionMode.input.value = existing?.session_mode ?? 'shared';
  sessionMode.input.addEventListener('change', () => replace(sessionMode.wrapper.querySelector('.hint')!, SESSION_MODE_TEXT[sessionMode.input.value as SessionMode]));
  const protocol = field('protocol', 'Protocol (the MCP era spoken to this upstream)', h('select', {}, ...PROTOCOLS.map((value) => h('option', { value }, value))), PROTOCOL_TEXT[existing?.protocol ?? 'auto']);
  protocol.input.value = existing?.protocol ?? 'auto';
  protocol.input.addEventListener('change', () => replace(protocol.wrapper.querySelector('.hint')!, PROTOCOL_TEXT[protocol.input.value as ProtocolSetting] ?? ''));
  const fields = [name, description, type, command, args, env, cwd, url, headers, connectMs, requestMs, deadlineMs, namespace, sessionMode, protocol];

  const stdioFields = h('div', { class: 'field-group' }, command.wrapper, args.wrapper, env.wrapper, cwd.wrapper);
  const networkFields = h('div', { class: 'field-group' }, url.wrapper, headers.wrapper);
  const showTransport = (): void => {
    const isStdio = type.input.value === 'stdio';
    stdioFields.hidden = !isStdio;
    networkFields.hidden = isStdio;
  };
  type.input.addEventListener('change', showTransport);
  showTransport();

  const body = (): Record<string, unknown> => {
    const kind = type.input.value as TransportType;
    const transportBody: Record<string, unknown> =
      kind === 'stdio'
        ? { type: kind, command: command.input.value, args: args.input.value.split('\n').filter((line) => line !== ''), env: parsePairs(env.input.value, 'Environment'), cwd: cwd.input.value.trim() === '' ? null : cwd.input.value }
        : { type: kind, url: url.input.value, headers: parsePairs(headers.input.value, 'Headers') };
    const timeouts: Record<string, unknown> = {};
    for (const [key, input] of [['connect_ms', connectMs], ['request_ms', requestMs], ['list_deadline_ms', deadlineMs]] as const) {
      const value = timeoutValue(input.input.value);
      if (value !== undefined) timeouts[key] = value;
    }
    // Absent is the default; an edit says the default by name (absent there keeps the stored one).
    const typed = namespace.input.value.trim();
    const prefix = unprefixed.checked ? '' : typed !== '' ? namespace.input.value : existing?.name;
    return {
      ...(existing ? {} : { name: name.input.value }),
      description: description.input.value,
      transport: transportBody,
      auto_enable_new_capabilities: autoEnable.checked,
      timeouts,
      ...(prefix === undefined ? {} : { namespace: prefix }),
      session_mode: sessionMode.input.value,
      protocol: protocol.input.value,
    };
  };
  // What the form opened with, to send only what changed (the form is valid here: it shows stored values).
  const opened = existing ? body() : {};

  return openFormDialog<ServerView>({
    title: existing ? `Edit ${existing.name}` : 'Add a server',
    kind: 'server-form',
    submitLabel: existing ? 'Save' : 'Add server',
    body: [
      name.wrapper,
      description.wrapper,
      type.wrapper,
      stdioFields,
      networkFields,
      namespace.wrapper,
      sessionMode.wrapper,
      protocol.wrapper,
      h('div', { class: 'field-row' }, connectMs.wrapper, requestMs.wrapper, deadlineMs.wrapper),
      h('label', { class: 'check' }, autoEnable, ' Enable new capabilities when first seen'),
    ],
    fields,
    send: () => {
      const request = body();
      if (!existing) return context.api.post<ServerView>('/servers', request);
      const changed = changedFields(opened, request);
      return Object.keys(changed).length === 0 ? null : context.api.patch<ServerView>(serverPath(existing.name), changed);
    },
    saved: async (server) => {
      await context.servers.reload();
      location.hash = `#/servers/${encodeURIComponent(server.name)}/tools`;
    },
  });
}
