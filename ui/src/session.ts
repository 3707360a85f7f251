// The page's credential. `coffer ui` prints a link with `#login=<one-time code>`;
// the fragment never reaches a server or its logs. The page removes it from the
// address bar before anything else, trades it once for the token and keeps the
// token in sessionStorage (this tab only; gone when the tab closes).
import { LOGIN_PATH } from '../../src/ui/routes.js';
import { apiErrorOf } from './api.js';

const STORAGE_KEY = 'coffer.token';
const LOGIN_FRAGMENT = /^#login=([A-Za-z0-9_-]{1,256})$/;

/** The token of this tab: from a login link in the URL, else from an earlier login. null: none. */
export async function establishSession(): Promise<string | null> {
  const match = LOGIN_FRAGMENT.exec(location.hash);
  if (!match) return sessionStorage.getItem(STORAGE_KEY);
  // Out of the address bar and this history entry at once, whatever happens next.
  history.replaceState(null, '', `${location.pathname}${location.search}#/servers`);
  const response = await fetch(`/api/v1${LOGIN_PATH}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ code: match[1] }),
  });
  if (!response.ok) throw await apiErrorOf(response);
  const { token } = (await response.json()) as { token: string };
  sessionStorage.setItem(STORAGE_KEY, token);
  return token;
}

export function forgetSession(): void {
  sessionStorage.removeItem(STORAGE_KEY);
}
