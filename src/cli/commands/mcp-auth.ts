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

/** A browser can be opened on macOS and Windows, and on Linux/BSD under a graphical session. */
function browserCommand(): [string, string[]] | null {
  if (process.platform === 'darwin') return ['open', []];
  if (process.platform === 'win32') return ['cmd', ['/c', 'start', '""']];
  return process.env.DISPLAY || process.env.WAYLAND_DISPLAY ? ['xdg-open', []] : null;
}

function openBrowser(url: string): boolean {
  const command = browserCommand();
  if (!command) return false;
  try {
    const child = spawn(command[0], [...command[1], url], { detached: true, stdio: 'ignore' });
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
