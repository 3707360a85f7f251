// `coffer ui`: prints a one-time login link to the web UI. The code rides in
// the URL fragment, which browsers never send to a server, so it reaches no
// log; the page trades it for the token once and removes it from the address bar.
import type { IssuedCode } from '../../ui/login-codes.js';
import { LOGIN_CODE_PATH } from '../../ui/routes.js';
import { daemonUrl, type ApiClient } from '../api-client.js';
import { expectPositionals } from '../args.js';
import { defineAction, type Command } from '../command.js';
import { EXIT } from '../exit-codes.js';
import { printJson, printLine } from '../output.js';

const usage = `Usage: coffer ui [--home DIR] [--json]

Prints a link that opens the web UI logged in. The link works once, within
2 minutes; run \`coffer ui\` again for another. \`coffer daemon status\` prints one too.
  --json   {"url", "expires_at"} on stdout`;

export interface LoginLink {
  url: string;
  expires_at: string;
}

/** Asks the daemon for a one-time code and builds the link to the UI with it. */
export async function loginLink(api: ApiClient): Promise<LoginLink> {
  const { code, expires_at } = await api.post<IssuedCode>(LOGIN_CODE_PATH);
  return { url: `${daemonUrl(api.port)}/#login=${code}`, expires_at };
}

/** The command is its one action: options, home and the daemon found as every other command finds them. */
const open = defineAction('ui', usage, { json: { type: 'boolean' } }, async (positionals, values, { api }) => {
  expectPositionals(positionals, []);
  const link = await loginLink(api());
  if (values.json) printJson(link);
  else printLine(`Open the coffer web UI (this link works once, until ${link.expires_at}):\n  ${link.url}`);
  return EXIT.OK;
});

export const uiCommand: Command = {
  name: 'ui',
  summary: 'print a one-time login link to the web UI',
  usage,
  run: (argv) => open.run(argv),
};
