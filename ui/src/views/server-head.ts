// The top of a server's page: its config and live health, the enabled switch,
// and the actions that concern the server as a whole — Test connection (R9,
// a temporary connection of its own) with its result, Edit and Remove. The
// page supplies Refresh, which reloads its tabs.
import { escapeControls } from '../../../src/protocol/untrusted-text.js';
import { serverPath } from '../api.js';
import type { ViewContext } from '../context.js';
import { h, replace } from '../dom.js';
import { namespaceSummary, PROTOCOL_TEXT, protocolSummary, SESSION_MODE_TEXT, transportSummary } from '../format.js';
import type { ServerView, TestReport } from '../types.js';
import { healthBadge } from './health-badge.js';
import { openServerForm } from './server-form.js';
import { serverSwitch } from './servers-page.js';
import { signInControl, signOutControl } from './sign-in.js';

/** Quotes the upstream (its name, version, error): escaped. */
function testReportText(report: TestReport): string {
  if (!report.ok) return escapeControls(`Connection failed: ${report.error?.message ?? 'no reason given'}`);
  const info = report.server_info ? `${report.server_info.name} ${report.server_info.version}` : 'the upstream';
  const counts = Object.entries(report.capabilities ?? {})
    .filter(([, count]) => count !== null)
    .map(([kind, count]) => `${count} ${kind}`);
  return escapeControls(`Connection ok in ${report.latency_ms} ms: ${info}, protocol ${report.protocol_version ?? 'unknown'}${counts.length ? `; first page lists ${counts.join(', ')}` : ''}`);
}

/** The fields of a server the head shows; other changes (health.since, timeouts, env) leave it as it is. */
function shownFields(server: ServerView): unknown[] {
  const { name, description, transport, namespace, session_mode, protocol, enabled, health } = server;
  return [name, description, transport.type, transportSummary(transport), namespace, session_mode, protocol, health.protocol_version, enabled, health.state, health.degraded, health.last_error];
}

export class ServerHead {
  readonly element: HTMLElement;
  private readonly top = h('div', { class: 'server-head' });
  private readonly notice = h('p', { class: 'notice', role: 'status' });
  private readonly testResult = h('p', { class: 'result', 'data-result': 'test', role: 'status' });

  constructor(
    private readonly context: ViewContext,
    private readonly name: string,
    private readonly refresh: (button: HTMLButtonElement) => Promise<void>,
  ) {
    this.element = h('div', {}, this.top, this.notice, this.testResult);
  }

  /** What the head shows, as of its last build: it is built again only when this changes. */
  private shown: string | null = null;

  render(server: ServerView | undefined): void {
    const shown = JSON.stringify(server ? shownFields(server) : { loaded: this.context.servers.loaded });
    if (shown === this.shown) return;
    this.shown = shown;
    if (!server) {
      replace(this.top, h('h1', {}, this.name), h('p', { class: 'muted' }, this.context.servers.loaded ? 'No such server (removed?).' : 'Loading…'));
      return;
    }
    const button = (label: string, action: (button: HTMLButtonElement) => unknown, extra = {}) =>
      h('button', { type: 'button', ...extra, onclick: (event: Event) => void action(event.currentTarget as HTMLButtonElement) }, label);
    replace(
      this.top,
      h('div', { class: 'page-head' }, h('h1', {}, server.name), healthBadge(server), signInControl(this.context, server.name)),
      server.description ? h('p', { class: 'description' }, server.description) : null,
      h('p', { class: 'transport' }, h('span', { class: 'tag' }, server.transport.type), ' ', h('span', { class: 'mono' }, transportSummary(server.transport))),
      h(
        'p',
        { class: 'transport', 'data-namespace': server.namespace, 'data-session-mode': server.session_mode },
        h('span', { class: 'tag' }, 'namespace'),
        ' ',
        h('span', { class: 'mono' }, namespaceSummary(server.namespace)),
        ' ',
        h('span', { class: 'tag' }, 'sessions'),
        ' ',
        h('span', { class: 'session-mode', title: SESSION_MODE_TEXT[server.session_mode] }, server.session_mode === 'per_session' ? 'per session' : 'shared'),
        ' ',
        h('span', { class: 'tag' }, 'protocol'),
        ' ',
        h('span', { class: 'protocol', 'data-protocol': server.protocol, 'data-era': server.health.era ?? '', title: PROTOCOL_TEXT[server.protocol] }, protocolSummary(server.protocol, server.health)),
      ),
      server.health.last_error ? h('p', { class: 'last-error' }, `Last error: ${server.health.last_error}`) : null,
      h(
        'div',
        { class: 'actions' },
        h('span', { class: 'switch-label' }, serverSwitch(this.context, server, this.notice), server.enabled ? ' Enabled' : ' Disabled'),
        button('Refresh', this.refresh),
        button('Test connection', (target) => this.test(target)),
        signOutControl(this.context, server),
        // The config as it is now: fields the head does not show (timeouts, env) may have changed since it was built.
        button('Edit', () => openServerForm(this.context, this.context.servers.get(this.name) ?? server)),
        button('Remove', () => this.remove(), { class: 'danger' }),
      ),
    );
  }

  private async test(button: HTMLButtonElement): Promise<void> {
    button.disabled = true;
    replace(this.testResult, 'Testing: opening a temporary connection…');
    delete this.testResult.dataset.ok;
    try {
      const report = await this.context.api.post<TestReport>(serverPath(this.name, '/test'));
      replace(this.testResult, testReportText(report));
      this.testResult.dataset.ok = String(report.ok);
    } catch (error) {
      replace(this.testResult, `Test failed: ${(error as Error).message}`);
      this.testResult.dataset.ok = 'false';
    } finally {
      button.disabled = false;
    }
  }

  private async remove(): Promise<void> {
    if (!confirm(`Remove '${this.name}'? Its capability switches are removed with it.`)) return;
    try {
      await this.context.api.delete(serverPath(this.name));
      await this.context.servers.reload();
      location.hash = '#/servers';
    } catch (error) {
      replace(this.notice, (error as Error).message);
    }
  }
}
