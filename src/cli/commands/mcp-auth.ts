// `coffer mcp auth NAME [--logout]`: signs an HTTP/SSE upstream in with OAuth.
// The daemon makes the link; this prints it (and opens it where a browser can
// be opened), then waits until the daemon's callback got the answer.
import { spawn } from 'node:child_process';
import type { SignInStatus } from '../../oauth/sign-ins.js';
import { expectPositionals } from '../args.js';
import { defineAction } from '../command.js';
import { EXIT } from '../exit-codes.js';
import { CliError, printJson, printLine, printMessage } from '../output.js';
import { serverPath } from './mcp-shared.js';

const POLL_MS = 500;

/** How the link is opened: a program and its arguments, a refusal to print, or null where no browser can be opened. */
export type LinkOpener = { command: string; args: string[] } | { refused: string } | null;

/**
 * The link comes from the authorization server's metadata, so it is handed to a program that
 * only opens URLs, never to a shell (cmd.exe would split it at '&' and run the rest), and only
 * when it is http(s): another scheme could start a local program. A browser can be opened on
 * macOS and Windows, and on Linux/BSD under a graphical session.
 */
export function browserCommand(url: string, platform: NodeJS.Platform = process.platform, env: NodeJS.ProcessEnv = process.env): LinkOpener {
  const link = URL.canParse(url) ? new URL(url) : null;
  if (!link || (link.protocol !== 'https:' && link.protocol !== 'http:')) {
    return { refused: 'LINK_NOT_OPENED: the sign-in link is not an http(s) link, so it is not opened: check it and open it yourself only if you trust it' };
  }
  // href is percent-encoded: no space or quote, so each program gets it as one argument.
  if (platform === 'darwin') return { command: 'open', args: [link.href] };
  if (platform === 'win32') return { command: 'rundll32', args: ['url.dll,FileProtocolHandler', link.href] };
  return env.DISPLAY || env.WAYLAND_DISPLAY ? { command: 'xdg-open', args: [link.href] } : null;
}

function openBrowser(url: string): boolean {
  const opener = browserCommand(url);
  if (!opener) return false;
  if ('refused' in opener) {
    printMessage(`warning: ${opener.refused}`);
    return false;
  }
  try {
    const child = spawn(opener.command, opener.args, { detached: true, stdio: 'ignore' });
    child.on('error', () => undefined);
    child.unref();
    return true;
  } catch {
    return false;
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export const authAction = defineAction(
  'auth',
  `auth NAME [--logout] [--no-browser] [--json]
      Sign in to an HTTP/SSE server that asks for OAuth: prints the link (and
      opens it in a browser where one can be opened), waits until the sign-in
      is done. --logout forgets the server's tokens.`,
  { logout: { type: 'boolean' }, 'no-browser': { type: 'boolean' }, json: { type: 'boolean' } },
  async (positionals, values, { api }) => {
    const [name] = expectPositionals(positionals, ['NAME']);
    const path = `${serverPath(name!)}/oauth`;
    if (values.logout) {
      await api().delete(path);
      printMessage(`signed out of '${name}': its tokens are forgotten`);
      return EXIT.OK;
    }
    let status = await api().post<SignInStatus>(path);
    if (status.status === 'pending') {
      if (values.json) printJson({ url: status.url, expires_at: status.expires_at });
      else printLine(`Open this link to sign in to '${name}':\n\n  ${status.url}\n`);
      if (!values['no-browser'] && openBrowser(status.url)) printMessage('(opened in your browser)');
      printMessage(`waiting for the sign-in (until ${status.expires_at}) …`);
      while (status.status === 'pending') {
        await sleep(POLL_MS);
        status = await api().get<SignInStatus>(path);
      }
    }
    if (status.status === 'failed') throw new CliError(EXIT.ERROR, status.error.code, status.error.message);
    printMessage(`signed in to '${name}'`);
    return EXIT.OK;
  },
);
