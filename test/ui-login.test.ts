// The web UI's server side: its files (types, CSP, ETag, Host check), the
// one-time login codes (once, short-lived, never logged) and `coffer ui` /
// `coffer daemon status` printing the link. No browser here: see ui-browser.test.ts.
import { readFileSync } from 'node:fs';
import { get } from 'node:http';
import { join } from 'node:path';
import t from 'tap';
import { readDaemonFile } from '../src/daemon/daemon-file.js';
import { LoginCodes } from '../src/ui/login-codes.js';
import { EXIT } from '../src/cli/exit-codes.js';
import { runCli, startCliDaemon, tempDir } from './helpers/cli.js';
import { startGateway } from './helpers/gateway.js';

/** fetch() will not send a Host of our choosing; node:http will. */
function statusWithHost(url: string, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    get(url, { headers: { host } }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    }).on('error', reject);
  });
}

const redeem = (url: string, code: unknown): Promise<Response> =>
  fetch(`${url}/api/v1/ui/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ code }) });

t.test('login codes: once each, expire, bounded in number, bound to their token', async (t) => {
  let now = 1_000_000;
  const codes = new LoginCodes({ ttlMs: 1_000, maxOutstanding: 3, now: () => now });
  const first = codes.issue('token-a');
  t.match(first.code, /^[A-Za-z0-9_-]{32}$/, '24 random bytes, base64url');
  t.equal(first.expires_at, new Date(now + 1_000).toISOString());
  t.ok(codes.redeem(first.code, 'token-a'), 'redeemed once');
  t.notOk(codes.redeem(first.code, 'token-a'), 'not twice');
  t.notOk(codes.redeem('made-up', 'token-a'), 'an unknown code is refused');
  t.notOk(codes.redeem(codes.issue('token-a').code, 'token-b'), 'a code of another token is refused');

  const late = codes.issue('token-a');
  now += 1_000;
  t.notOk(codes.redeem(late.code, 'token-a'), 'expired at its expiry');

  const many = [codes.issue('token-a'), codes.issue('token-a'), codes.issue('token-a'), codes.issue('token-a')];
  t.equal(codes.outstanding, 3, 'at most maxOutstanding kept');
  t.notOk(codes.redeem(many[0]!.code, 'token-a'), 'the oldest made room');
  t.ok(codes.redeem(many[3]!.code, 'token-a'));
});

t.test('the daemon serves the built UI with its headers, behind the Host check', async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  const index = await fetch(`${gateway.url}/`);
  t.equal(index.status, 200);
  t.equal(index.headers.get('content-type'), 'text/html; charset=utf-8');
  t.match(index.headers.get('content-security-policy'), /^default-src 'self'/);
  t.equal(index.headers.get('x-content-type-options'), 'nosniff');
  t.equal(index.headers.get('cache-control'), 'no-cache');
  const html = await index.text();
  t.match(html, /<script type="module" src="\/app.js">/);
  t.notMatch(html, /https?:\/\//, 'nothing from another origin: works offline');

  const script = await fetch(`${gateway.url}/app.js`);
  t.equal(script.headers.get('content-type'), 'text/javascript; charset=utf-8');
  t.ok((await script.text()).length > 1_000);
  t.equal((await fetch(`${gateway.url}/app.css`)).headers.get('content-type'), 'text/css; charset=utf-8');

  const etag = index.headers.get('etag')!;
  const again = await fetch(`${gateway.url}/`, { headers: { 'if-none-match': etag } });
  t.equal(again.status, 304, 'revalidated by ETag');

  t.equal(await statusWithHost(`${gateway.url}/`, `evil.example:${gateway.daemon.port}`), 403, 'a foreign Host gets nothing (DNS rebinding)');
  t.equal(await statusWithHost(`${gateway.url}/`, `localhost:${gateway.daemon.port}`), 200, 'a loopback name does');
  const missing = await fetch(`${gateway.url}/nope.js`);
  t.equal(missing.status, 404);
  t.equal((await fetch(`${gateway.url}/`, { method: 'POST' })).status, 404, 'only GET');
});

t.test('a login code is issued to a token holder and redeemed once for the token', async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  t.equal((await gateway.api('POST', '/ui/login-codes', undefined, null)).status, 401, 'no token, no code');
  const issued = await gateway.api('POST', '/ui/login-codes');
  t.equal(issued.status, 201);
  const { code } = issued.body as { code: string; expires_at: string };
  t.ok(Date.parse(issued.body.expires_at) > Date.now());

  const first = await redeem(gateway.url, code);
  t.equal(first.status, 200);
  t.same(await first.json(), { token: gateway.daemon.token });
  const second = await redeem(gateway.url, code);
  t.equal(second.status, 401, 'a second use is refused');
  t.match(((await second.json()) as any).error.message, /already used or has expired: run 'coffer ui'/);
  t.equal((await redeem(gateway.url, 'guess')).status, 401);
  t.equal((await redeem(gateway.url, 42)).status, 400);

  const foreign = await fetch(`${gateway.url}/api/v1/ui/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: 'http://evil.example' },
    body: JSON.stringify({ code: (await gateway.api('POST', '/ui/login-codes')).body.code }),
  });
  t.equal(foreign.status, 403, 'a page of another origin cannot redeem a code');
});

t.test('a login code issued before a token rotation gives nothing after it: the old token cannot be traded for the new one', async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  const minted = (await gateway.api('POST', '/ui/login-codes')).body.code as string;
  const rotated = await gateway.api('POST', '/daemon/rotate-token');
  t.equal(rotated.status, 200);
  const late = await redeem(gateway.url, minted);
  const body = await late.text();
  t.equal(late.status, 401, 'refused');
  t.notOk(body.includes(rotated.body.token), 'the new token is not in the answer');
  t.match(JSON.parse(body).error.message, /already used or has expired: run 'coffer ui'/);

  const fresh = (await gateway.api('POST', '/ui/login-codes', undefined, rotated.body.token)).body.code as string;
  const redeemed = await redeem(gateway.url, fresh);
  t.same(await redeemed.json(), { token: rotated.body.token }, 'a code issued after the rotation works');
});

t.test('coffer ui and coffer daemon status print a working one-time link; codes reach no log', async (t) => {
  const daemon = await startCliDaemon(t, 'coffer-ui-cli-');
  const link = await daemon.json('ui');
  t.match(link.url, new RegExp(`^http://127\\.0\\.0\\.1:${daemon.port}/#login=[A-Za-z0-9_-]+$`));
  t.ok(Date.parse(link.expires_at) > Date.now());
  const code = link.url.split('#login=')[1];
  const redeemed = await redeem(`http://127.0.0.1:${daemon.port}`, code);
  t.equal(redeemed.status, 200);
  t.equal(((await redeemed.json()) as { token: string }).token, readDaemonFile(daemon.home)!.token);

  const text = await daemon.cli('ui');
  t.equal(text.code, EXIT.OK);
  t.match(text.stdout, /works once, until .*\n {2}http:\/\/127\.0\.0\.1:\d+\/#login=\S+\n$/);

  const status = await daemon.cli('daemon', 'status');
  t.match(status.stdout, /^web ui: +http:\/\/127\.0\.0\.1:\d+\/#login=\S+ {2}\(one-time login link\)$/m);
  const statusJson = await daemon.json('daemon', 'status');
  t.notOk('ui_login_url' in statusJson, 'daemon status --json makes no login code (scripts poll it)');

  t.equal((await runCli(tempDir('coffer-ui-none-'), 'ui')).code, EXIT.DAEMON_UNREACHABLE, 'no daemon: exit 3');

  const codes = [code, text.stdout.split('#login=')[1]!.trim(), status.stdout.split('#login=')[1]!.split(/\s/)[0]!];
  const log = readFileSync(join(daemon.home, 'logs', 'daemon.log'), 'utf8');
  for (const issued of codes) t.notOk(log.includes(issued), 'no login code in the daemon log');
  t.notOk(log.includes(readDaemonFile(daemon.home)!.token), 'nor the token');
});
