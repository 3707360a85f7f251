// "Sign in" on a server whose health is needs_auth (an HTTP/SSE upstream that
// asks for OAuth), and "Sign out" on one that holds tokens. Sign in starts the
// daemon's sign-in (POST /servers/{name}/oauth), sends a new tab to the
// authorization server's page (the daemon's /oauth/callback ends the flow
// there), and follows the attempt until it ends.
// Health comes live from the admin WebSocket (needs_auth → connecting →
// ready); how an attempt ended is no event, so GET …/oauth is read while one
// waits. Attempts are kept per session, outside the rows: the server list
// rebuilds its rows on every change.
import { serverPath, type Api } from '../api.js';
import type { ViewContext } from '../context.js';
import { h, replace } from '../dom.js';
import { signsInWithOAuth } from '../../../src/protocol/oauth.js';
import { escapeControls } from '../../../src/protocol/untrusted-text.js';
import type { ServerView, SignInStatus } from '../types.js';

const POLL_MS = 1_000;

type Attempt = { phase: 'starting' } | { phase: 'waiting'; link: string } | { phase: 'connecting' } | { phase: 'failed'; message: string };

/**
 * The link as something a tab may be sent to: http(s) only. It comes from the
 * upstream's authorization server metadata, and a javascript: or data: URL
 * would run in a tab that starts out on this page's origin.
 */
function openableLink(url: string): string | null {
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'https:' || parsed.protocol === 'http:' ? parsed.href : null;
  } catch {
    return null;
  }
}

/** What a control says about an attempt. Pure. */
function attemptText(attempt: Attempt | undefined): string {
  switch (attempt?.phase) {
    case undefined:
      return '';
    case 'starting':
      return 'Starting the sign-in…';
    case 'waiting':
      return 'Waiting for the sign-in in the other tab…';
    case 'connecting':
      return 'Signed in: connecting…';
    case 'failed':
      // The authorization server's own words can be in it.
      return `Sign-in failed: ${escapeControls(attempt.message)}`;
  }
}

class SignInFlows {
  private readonly attempts = new Map<string, Attempt>();
  private readonly controls = new Map<string, Set<HTMLElement>>();

  constructor(private readonly context: ViewContext) {
    context.servers.onChange(() => this.forgetSettled());
  }

  control(name: string): HTMLElement | null {
    if (this.context.servers.get(name)?.health.state !== 'needs_auth') return null;
    const element = h('span', { class: 'sign-in', 'data-sign-in': name });
    this.mounted(name).add(element);
    this.draw(name, element);
    return element;
  }

  /** The controls of `name` still in the page: rows are built again on every change, and the old ones are let go. */
  private mounted(name: string): Set<HTMLElement> {
    const mounted = this.controls.get(name) ?? new Set<HTMLElement>();
    for (const element of mounted) if (!element.isConnected) mounted.delete(element);
    this.controls.set(name, mounted);
    return mounted;
  }

  private draw(name: string, element: HTMLElement): void {
    const attempt = this.attempts.get(name);
    const busy = attempt?.phase === 'starting' || attempt?.phase === 'connecting';
    const button = h('button', { type: 'button', class: 'primary', 'data-action': 'sign-in', disabled: busy, onclick: () => void this.start(name) }, 'Sign in');
    const link = attempt?.phase === 'waiting' ? h('a', { href: attempt.link, target: '_blank', rel: 'noopener noreferrer' }, 'open the sign-in page') : null;
    const text = attemptText(attempt);
    const state = text ? h('span', { class: 'sign-in-state', role: attempt?.phase === 'failed' ? 'alert' : 'status' }, text, link ? ' (' : null, link, link ? ')' : null) : null;
    element.dataset.phase = attempt?.phase ?? 'idle';
    replace(element, button, state);
  }

  /**
   * A server out of needs_auth (signed in here or from the CLI): its last attempt no longer applies, even
   * one still waiting (the live health can come before the next read of the attempt; its loop then ends).
   * Only a start still asking the daemon is kept: its answer settles it.
   */
  private forgetSettled(): void {
    for (const [name, attempt] of this.attempts) {
      if (attempt.phase !== 'starting' && this.context.servers.get(name)?.health.state !== 'needs_auth') this.attempts.delete(name);
    }
  }

  private set(name: string, attempt: Attempt | null): void {
    if (attempt) this.attempts.set(name, attempt);
    else this.attempts.delete(name);
    for (const element of this.mounted(name)) this.draw(name, element);
  }

  private async start(name: string): Promise<void> {
    // Opened now, while the click still counts as the person's (a tab opened once the daemon has answered
    // may be blocked), and cut from this page: the authorization server's page gets no handle on it.
    const tab = window.open('', '_blank');
    if (tab) tab.opener = null;
    const attempt: Attempt = { phase: 'starting' };
    this.set(name, attempt);
    let status: SignInStatus;
    try {
      status = await this.context.api.post<SignInStatus>(serverPath(name, '/oauth'));
    } catch (error) {
      tab?.close();
      return this.set(name, { phase: 'failed', message: (error as Error).message });
    }
    if (status.status !== 'pending') {
      tab?.close();
      return this.settle(name, status);
    }
    const link = openableLink(status.url);
    if (tab && link) tab.location.href = link;
    else tab?.close();
    if (!link) return this.set(name, { phase: 'failed', message: 'the authorization server gave a sign-in link that is not http(s): refused' });
    const waiting: Attempt = { phase: 'waiting', link };
    this.set(name, waiting);
    await this.follow(name, waiting);
  }

  /** Reads how the attempt went until it ends, or another attempt replaces it. */
  private async follow(name: string, attempt: Attempt): Promise<void> {
    while (this.attempts.get(name) === attempt) {
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      let status: SignInStatus;
      try {
        status = await this.context.api.get<SignInStatus>(serverPath(name, '/oauth'));
      } catch (error) {
        if (this.attempts.get(name) === attempt) this.set(name, { phase: 'failed', message: (error as Error).message });
        return;
      }
      if (this.attempts.get(name) !== attempt) return;
      if (status.status !== 'pending') return this.settle(name, status);
    }
  }

  private settle(name: string, status: SignInStatus): void {
    if (status.status === 'signed_in') {
      this.set(name, { phase: 'connecting' });
      this.forgetSettled();
    }
    else if (status.status === 'failed') this.set(name, { phase: 'failed', message: status.error.message });
    else this.set(name, null);
  }
}

/**
 * Sign out of a server that holds tokens (GET …/oauth says signed_in), for its
 * page: the tokens are forgotten and its health turns needs_auth (live).
 * Empty while that is asked, and when it cannot be told.
 */
export function signOutControl(context: ViewContext, server: ServerView): HTMLElement | null {
  if (!signsInWithOAuth(server.transport) || server.health.state === 'needs_auth') return null;
  const element = h('span', { class: 'sign-out', 'data-sign-out': server.name });
  const path = serverPath(server.name, '/oauth');
  const signOut = async (button: HTMLButtonElement): Promise<void> => {
    if (!confirm(`Sign out of '${server.name}'? Its tokens are forgotten: it needs a sign-in again.`)) return;
    button.disabled = true;
    try {
      await context.api.delete(path);
    } catch (error) {
      button.disabled = false;
      replace(element, button, h('span', { class: 'sign-in-state', role: 'alert' }, `Sign-out failed: ${(error as Error).message}`));
    }
  };
  context.api.get<SignInStatus>(path).then(
    (status) => {
      if (status.status === 'signed_in') replace(element, h('button', { type: 'button', 'data-action': 'sign-out', onclick: (event: Event) => void signOut(event.currentTarget as HTMLButtonElement) }, 'Sign out'));
    },
    // Not offered then: the CLI's --logout remains.
    () => undefined,
  );
  return element;
}

const flows = new WeakMap<Api, SignInFlows>();

/** The Sign in control of a server in needs_auth (null otherwise); it keeps itself current. */
export function signInControl(context: ViewContext, name: string): HTMLElement | null {
  let mine = flows.get(context.api);
  if (!mine) flows.set(context.api, (mine = new SignInFlows(context)));
  return mine.control(name);
}
