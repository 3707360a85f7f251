// Entry point of the web UI: log in (from a one-time link or this tab's
// earlier login), connect the live events, load the servers and toolsets,
// show the page.
import { Api } from './api.js';
import { h, replace } from './dom.js';
import { LiveEvents } from './live.js';
import { ServerStore } from './server-store.js';
import { establishSession, forgetSession } from './session.js';
import { mountShell } from './shell.js';
import { ToolsetStore } from './toolset-store.js';

const root = document.getElementById('app')!;

function loggedOut(reason: string): void {
  forgetSession();
  replace(
    root,
    h(
      'section',
      { class: 'login', 'data-page': 'login' },
      h('h1', {}, 'coffer'),
      h('p', { class: 'notice' }, reason),
      h('p', {}, 'Run this on the machine the daemon runs on, then open the link it prints (it works once, for 2 minutes):'),
      h('pre', { class: 'mono' }, 'coffer ui'),
    ),
  );
}

async function boot(): Promise<void> {
  let token: string | null;
  try {
    token = await establishSession();
  } catch (error) {
    return loggedOut((error as Error).message);
  }
  if (token === null) return loggedOut('Not logged in.');
  let ended = false;
  const expired = (): void => {
    if (ended) return;
    ended = true;
    // No reconnecting with a token the daemon no longer takes.
    live.stop();
    loggedOut("The session ended (the daemon's token was rotated, or the daemon restarted).");
  };
  const api = new Api(token, expired);
  const live = new LiveEvents(token, expired);
  const servers = new ServerStore(api, live);
  const toolsets = new ToolsetStore(api, live);
  live.start();
  await Promise.all([servers.reload(), toolsets.reload()]);
  if (!ended) mountShell(root, { api, live, servers, toolsets });
}

void boot();
