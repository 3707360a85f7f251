// `coffer mcp auth` opens the sign-in link, which the authorization server's
// metadata makes: it reaches a program that only opens URLs, whole, as one
// argument, never a shell; and only an http(s) link is opened at all.
import t from 'tap';
import { browserCommand } from '../src/cli/commands/mcp-auth.js';

const ORDINARY = 'https://as.example/authorize?response_type=code&client_id=coffer&state=abc&code_challenge=xyz';
const HOSTILE = 'https://as.example/authorize&calc.exe&rem?response_type=code&state=abc';
const SHELLS = /^(cmd|cmd\.exe|powershell|pwsh|sh|bash)$/i;

t.test('each platform gets the link whole, as one argument of a program that is not a shell', async (t) => {
  const graphical = { DISPLAY: ':0' };
  for (const url of [ORDINARY, HOSTILE]) {
    t.same(browserCommand(url, 'win32', {}), { command: 'rundll32', args: ['url.dll,FileProtocolHandler', url] }, `win32: ${url}`);
    t.same(browserCommand(url, 'darwin', {}), { command: 'open', args: [url] }, `darwin: ${url}`);
    t.same(browserCommand(url, 'linux', graphical), { command: 'xdg-open', args: [url] }, `linux: ${url}`);
    t.same(browserCommand(url, 'linux', { WAYLAND_DISPLAY: 'wayland-0' }), { command: 'xdg-open', args: [url] }, `linux under Wayland: ${url}`);
    for (const platform of ['win32', 'darwin', 'linux'] as const) {
      const opener = browserCommand(url, platform, graphical);
      t.ok(opener && 'command' in opener && !SHELLS.test(opener.command), `${platform}: no shell`);
    }
  }
  t.equal(browserCommand(ORDINARY, 'linux', {}), null, 'linux without a graphical session: nothing opened (the link is printed)');
  t.same(browserCommand('https://as.example/a b"c', 'win32', {}), { command: 'rundll32', args: ['url.dll,FileProtocolHandler', 'https://as.example/a%20b%22c'] }, 'spaces and quotes are percent-encoded: one argument');
});

t.test('a link that is not http(s) is not opened on any platform: a refusal with a stable code', async (t) => {
  for (const url of ['file:///C:/Windows/System32/calc.exe', 'javascript:alert(1)', 'ms-settings:', 'smb://host/share/x.exe', 'not a link']) {
    for (const platform of ['win32', 'darwin', 'linux'] as const) {
      t.match(browserCommand(url, platform, { DISPLAY: ':0' }), { refused: /^LINK_NOT_OPENED: .*open it yourself/ }, `${platform}: ${url}`);
    }
  }
});
