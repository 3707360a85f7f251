// The page a browser lands on after an upstream's authorization server sends
// it back to the daemon: one sentence, escaped, no script.
import type { CallbackPage } from './sign-ins.js';

export const OAUTH_CALLBACK_PATH = '/oauth/callback';

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

export function callbackHtml(page: CallbackPage): string {
  const title = page.ok ? 'Signed in' : 'Sign-in failed';
  return `<!doctype html><html><head><meta charset="utf-8"><title>coffer: ${title}</title></head><body><h1>${title}</h1><p>${escapeHtml(page.message)}</p></body></html>`;
}
