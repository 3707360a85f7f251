// OAuth sign-in to a remote upstream, against a local authorization server and
// MCP resource servers (test/fixtures/oauth-servers.ts): needs_auth before a
// sign-in, a headless sign-in that follows the redirect, refresh on a 401 and
// before expiry while clients call, step-up on insufficient_scope, a revoked
// refresh token back to needs_auth and out again, issuer mix-ups refused, a
// URL change that drops the token, and no secret on disk or in answers.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ACTOR_SCRIPTS, CLI_ENTRY, upstreamLogDir } from '../src/paths.js';
import { runCli } from './helpers/cli.js';
import { startGateway, waitFor, type Gateway } from './helpers/gateway.js';
import { networkConfig, startNetworkFixture } from './fixtures/fixture-servers.js';
import { READ_SCOPE, startOAuthFixture, WRITE_SCOPE, type OAuthFixture } from './fixtures/oauth-servers.js';

const NAME = 'remote';

async function health(gateway: Gateway): Promise<{ state: string; last_error: string | null }> {
  return (await gateway.api('GET', `/servers/${NAME}`)).body.health;
}

function waitState(gateway: Gateway, state: string): Promise<unknown> {
  return waitFor(`${NAME} ${state}`, async () => (await health(gateway)).state === state, 20_000);
}

/** Starts a sign-in and plays the person: opens the link and follows the authorization server back to coffer. */
async function signIn(gateway: Gateway, server = NAME): Promise<{ link: URL; callback: string; page: Response }> {
  const started = await gateway.api('POST', `/servers/${server}/oauth`);
  if (started.body?.status !== 'pending') throw new Error(`no sign-in link: ${JSON.stringify(started.body)}`);
  const link = new URL(started.body.url);
  const authorize = await fetch(link, { redirect: 'manual' });
  const callback = authorize.headers.get('location');
  if (authorize.status !== 302 || !callback) throw new Error(`the authorization server did not send the browser back: ${authorize.status} ${await authorize.text()}`);
  return { link, callback, page: await fetch(callback) };
}

async function callError(client: Client, name: string): Promise<{ code: unknown; message: string }> {
  try {
    await client.callTool({ name });
  } catch (error) {
    const { data, message } = error as { data?: { code?: unknown }; message: string };
    return { code: data?.code, message };
  }
  throw new Error(`${name} did not fail`);
}

const text = (result: unknown): string => ((result as { content: Array<{ text: string }> }).content[0]?.text ?? '');

t.test('OAuth sign-in to a remote upstream', async (t) => {
  const fixture: OAuthFixture = await startOAuthFixture();
  const rs = await fixture.resourceServer();
  const gateway = await startGateway({ logLevel: 'debug' });
  t.teardown(async () => {
    await gateway.close();
    await fixture.close();
  });
  const answers: string[] = [];
  const api: Gateway['api'] = async (...args) => {
    const answer = await gateway.api(...args);
    answers.push(JSON.stringify(answer.body));
    return answer;
  };
  t.equal((await api('POST', '/servers', { name: NAME, transport: { type: 'http', url: rs.url } })).status, 201);
  const client = await gateway.client();

  await t.test('needs_auth before a sign-in: calls fail with the command to run', async (t) => {
    await waitState(gateway, 'needs_auth');
    t.match((await health(gateway)).last_error, `coffer mcp auth ${NAME}`);
    const failed = await callError(client, `${NAME}__whoami`);
    t.equal(failed.code, 'UPSTREAM_AUTH_REQUIRED');
    t.match(failed.message, `coffer mcp auth ${NAME}`);
    const list = await api('GET', `/servers/${NAME}/capabilities`);
    t.equal(list.status, 503);
    t.equal(list.body.error.code, 'UPSTREAM_AUTH_REQUIRED');
    t.notOk((await client.listTools()).tools.some((tool) => tool.name.startsWith(`${NAME}__`)), 'lists leave it out');
    t.ok(rs.seen.length > 0 && rs.seen.every((header) => header === undefined), 'nothing was sent as a credential');
  });

  await t.test('the sign-in code is loaded by an actor that met a challenge, never by one that did not', async (t) => {
    // workers/actor/oauth/sdk.ts: most of an actor's code, loaded on first use (the sign-in below then proves it works).
    const LOADED = 'loading the sign-in code';
    const actorLog = (server: string): string => readFileSync(join(upstreamLogDir(gateway.home), `${server}.log`), 'utf8');
    const plain = await startNetworkFixture('http');
    t.teardown(() => plain.kill());
    t.equal((await api('POST', '/servers', networkConfig('plain', 'http', plain.url))).status, 201);
    await waitFor('plain ready', async () => (await gateway.api('GET', '/servers/plain')).body.health.state === 'ready', 20_000);
    t.ok((await client.listTools()).tools.some((tool) => tool.name.startsWith('plain__')), 'the plain upstream is listed');
    await waitFor(`${NAME}'s log to note the sign-in code`, () => actorLog(NAME).includes(LOADED), 20_000);
    t.notMatch(actorLog('plain'), LOADED, 'an HTTP upstream that never challenged did not load it');
    t.notMatch(readFileSync(join(ACTOR_SCRIPTS, 'actor.js'), 'utf8'), 'function discoverOAuthProtectedResourceMetadata', 'the code every actor loads at start holds none of it');
    t.equal((await api('DELETE', '/servers/plain')).status, 204);
  });

  await t.test('a headless sign-in: PKCE S256, resource indicator, scope from the challenge; the link works once', async (t) => {
    const { link, callback, page } = await signIn(gateway);
    t.equal(link.origin, fixture.issuer);
    t.equal(link.searchParams.get('code_challenge_method'), 'S256');
    t.equal(link.searchParams.get('resource'), rs.url);
    t.equal(link.searchParams.get('scope'), READ_SCOPE);
    t.ok(link.searchParams.get('state')!.length >= 32);
    t.ok(callback.startsWith(`${gateway.url}/oauth/callback?`));
    t.equal(page.status, 200);
    t.match(await page.text(), 'Signed in');
    const replay = await fetch(callback);
    t.equal(replay.status, 400, 'the same answer again is refused');
    t.equal((await api('GET', `/servers/${NAME}/oauth`)).body.status, 'signed_in');
    await waitState(gateway, 'ready');
    t.equal(text(await client.callTool({ name: `${NAME}__whoami` })), `scopes: ${READ_SCOPE}`);
    t.ok((await client.listTools()).tools.some((tool) => tool.name === `${NAME}__whoami`), 'listed once signed in');
    t.same(fixture.provider.resources, [rs.url], 'the token was asked for this resource (RFC 8707)');
    t.ok(rs.seen.at(-1)?.startsWith('Bearer at-'));
  });

  await t.test('a 401 on a revoked access token: refreshed once, the call succeeds', async (t) => {
    const before = fixture.provider.refreshes;
    fixture.provider.access.clear();
    t.equal(text(await client.callTool({ name: `${NAME}__whoami` })), `scopes: ${READ_SCOPE}`);
    t.equal(fixture.provider.refreshes, before + 1);
  });

  await t.test('short-lived tokens refreshed while clients call: no call fails', async (t) => {
    fixture.provider.accessTtlS = 2;
    fixture.provider.access.clear();
    await client.callTool({ name: `${NAME}__whoami` });
    const before = fixture.provider.refreshes;
    const until = Date.now() + 5_000;
    let calls = 0;
    const failures: string[] = [];
    const clients = await Promise.all([1, 2, 3].map((i) => gateway.client(`caller-${i}`)));
    await Promise.all(
      [client, ...clients].map(async (caller) => {
        while (Date.now() < until) {
          calls += 1;
          await caller.callTool({ name: `${NAME}__whoami` }).catch((error: Error) => failures.push(error.message));
        }
      }),
    );
    t.same(failures, [], `${calls} calls, none failed`);
    t.ok(fixture.provider.refreshes - before >= 2, `refreshed ${fixture.provider.refreshes - before} times in 5 s with 2 s tokens`);
    fixture.provider.accessTtlS = 3600;
  });

  await t.test('step-up: insufficient_scope asks for a sign-in with the wider scope', async (t) => {
    const refused = await callError(client, `${NAME}__write_thing`);
    t.equal(refused.code, 'UPSTREAM_AUTH_REQUIRED');
    t.match(refused.message, WRITE_SCOPE);
    t.match(refused.message, `coffer mcp auth ${NAME}`);
    t.equal((await health(gateway)).state, 'ready', 'the other tools still work');
    const { link, page } = await signIn(gateway);
    t.equal(link.searchParams.get('scope'), `${READ_SCOPE} ${WRITE_SCOPE}`);
    t.equal(page.status, 200);
    t.equal(text(await client.callTool({ name: `${NAME}__write_thing` })), 'written');
  });

  await t.test('refresh token revoked: needs_auth (capabilities still known), then signed in again', async (t) => {
    fixture.provider.access.clear();
    fixture.provider.refresh.clear();
    const failed = await callError(client, `${NAME}__whoami`);
    t.equal(failed.code, 'UPSTREAM_AUTH_REQUIRED');
    await waitState(gateway, 'needs_auth');
    const view = await api('GET', `/servers/${NAME}/capabilities`);
    t.equal(view.status, 503);
    t.ok(view.body.error.details.known.some((known: { capability_key: string }) => known.capability_key === 'whoami'), 'R6: the known tools are listed');
    const off = await api('POST', `/servers/${NAME}/capabilities/tool/disable`, { key: 'write_thing' });
    t.equal(off.status, 200, 'and switchable');
    t.equal((await signIn(gateway)).page.status, 200);
    await waitState(gateway, 'ready');
    t.equal(text(await client.callTool({ name: `${NAME}__whoami` })), `scopes: ${READ_SCOPE} ${WRITE_SCOPE}`);
  });

  await t.test('issuer mix-ups are refused', async (t) => {
    fixture.provider.iss = 'wrong';
    const { page } = await signIn(gateway);
    fixture.provider.iss = 'right';
    t.equal(page.status, 400);
    t.match(await page.text(), 'RFC 9207');
    const status = (await api('GET', `/servers/${NAME}/oauth`)).body;
    t.equal(status.status, 'failed');
    t.equal(text(await client.callTool({ name: `${NAME}__whoami` })), `scopes: ${READ_SCOPE} ${WRITE_SCOPE}`, 'the tokens held are untouched');

    fixture.wrongMetadataIssuer = true;
    const started = await api('POST', `/servers/${NAME}/oauth`);
    fixture.wrongMetadataIssuer = false;
    t.equal(started.status, 503);
    t.equal(started.body.error.code, 'UPSTREAM_AUTH_REQUIRED');
    t.match(started.body.error.message, 'RFC 8414');

    fixture.plainHttpTokenEndpoint = true;
    const plain = await api('POST', `/servers/${NAME}/oauth`);
    fixture.plainHttpTokenEndpoint = false;
    t.equal(plain.status, 503);
    t.equal(plain.body.error.code, 'UPSTREAM_AUTH_REQUIRED');
    t.match(plain.body.error.message, 'must be https (plain http only to this machine): refused http://auth.example.test/token', 'a plain-http endpoint elsewhere is refused before the code or a secret goes to it');
  });

  const moved = await fixture.resourceServer();
  await t.test('a URL change drops the token: the new host never sees it', async (t) => {
    const patched = await api('PATCH', `/servers/${NAME}`, { transport: { type: 'http', url: moved.url, headers: {} } });
    t.equal(patched.status, 200);
    await waitState(gateway, 'needs_auth');
    t.ok(moved.seen.length > 0);
    t.ok(moved.seen.every((header) => header === undefined), 'no Authorization header reached the new host');
    t.same((await api('GET', `/servers/${NAME}/oauth`)).body, { status: 'none' }, 'the sign-in at the old URL is not reported for the new one');
  });

  await t.test('coffer mcp auth NAME prints the link and waits for the sign-in; --logout forgets the tokens', async (t) => {
    const child = spawn(process.execPath, [CLI_ENTRY, 'mcp', 'auth', NAME, '--no-browser'], { env: { ...process.env, COFFER_HOME: gateway.home } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    const link = await waitFor('the link on stdout', () => /http:\/\/\S+\/authorize\S*/.exec(stdout)?.[0], 15_000);
    // stdout and stderr are separate pipes: the link can arrive before the line that says the CLI waits.
    t.ok(await waitFor('the waiting line on stderr', () => stderr.includes('waiting for the sign-in') || undefined, 15_000), 'the CLI says it waits for the sign-in');
    const authorize = await fetch(link, { redirect: 'manual' });
    t.equal((await fetch(authorize.headers.get('location')!)).status, 200);
    t.equal(await exited, 0, stderr);
    t.match(stderr, `signed in to '${NAME}'`);
    await waitState(gateway, 'ready');
    t.equal(text(await client.callTool({ name: `${NAME}__whoami` })), `scopes: ${READ_SCOPE}`, 'a new resource: the scope its challenge asks for');
    t.ok(moved.seen.at(-1)?.startsWith('Bearer '), 'the new host gets its own token');

    const logout = await runCli(gateway.home, 'mcp', 'auth', NAME, '--logout');
    t.equal(logout.code, 0, logout.stderr);
    await waitState(gateway, 'needs_auth');
    t.equal((await callError(client, `${NAME}__whoami`)).code, 'UPSTREAM_AUTH_REQUIRED');
  });

  await t.test('client credentials: a machine client signs in without a person, its secret sealed and redacted', async (t) => {
    const secret = `machine-secret-${Date.now()}`;
    fixture.provider.preRegister('machine-client', secret);
    const machine = await fixture.resourceServer();
    const oauth = { grant_type: 'client_credentials', client_id: 'machine-client', client_secret: secret, scope: READ_SCOPE };
    await gateway.addServer({ name: 'machine', transport: { type: 'http', url: machine.url, oauth } });
    t.equal(text(await client.callTool({ name: 'machine__whoami' })), `scopes: ${READ_SCOPE}`);
    t.ok(machine.seen.at(-1)?.startsWith('Bearer at-'));
    t.equal(fixture.provider.resources.at(-1), machine.url, 'with its resource indicator');
    const view = await api('GET', '/servers/machine');
    t.same(view.body.transport.oauth, { grant_type: '[redacted]', client_id: '[redacted]', client_secret: '[redacted]', scope: '[redacted]' });
    const kept = await api('PATCH', '/servers/machine', { description: 'kept', transport: { oauth: view.body.transport.oauth } });
    t.equal(kept.status, 200, 'the redacted values sent back keep the stored ones');
    await waitFor('machine ready again', async () => (await gateway.api('GET', '/servers/machine')).body.health.state === 'ready');
    t.equal(text(await client.callTool({ name: 'machine__whoami' })), `scopes: ${READ_SCOPE}`);
  });

  await t.test('a pre-registered client from the config is used instead of registering one', async (t) => {
    const secret = `pre-secret-${Date.now()}`;
    fixture.provider.preRegister('pre-client', secret, [`${gateway.url}/oauth/callback`]);
    const registered = fixture.provider.clients.size;
    const protectedServer = await fixture.resourceServer();
    t.equal((await api('POST', '/servers', { name: 'prereg', transport: { type: 'http', url: protectedServer.url, oauth: { client_id: 'pre-client', client_secret: secret } } })).status, 201);
    await waitFor('prereg needs_auth', async () => (await gateway.api('GET', '/servers/prereg')).body.health.state === 'needs_auth');
    const { link, page } = await signIn(gateway, 'prereg');
    t.equal(link.searchParams.get('client_id'), 'pre-client');
    t.equal(page.status, 200);
    t.equal(fixture.provider.clients.size, registered, 'no dynamic registration');
    await waitFor('prereg ready', async () => (await gateway.api('GET', '/servers/prereg')).body.health.state === 'ready');
    t.equal(text(await client.callTool({ name: 'prereg__whoami' })), `scopes: ${READ_SCOPE}`);

    t.equal((await api('DELETE', '/servers/prereg')).status, 204, 'removed: its tokens go with it');
    t.equal((await api('POST', '/servers', { name: 'prereg', transport: { type: 'http', url: protectedServer.url, oauth: { client_id: 'pre-client', client_secret: secret } } })).status, 201);
    await waitFor('prereg needs_auth again', async () => (await gateway.api('GET', '/servers/prereg')).body.health.state === 'needs_auth');
    t.same((await api('GET', '/servers/prereg/oauth')).body, { status: 'none' }, 'the server added again under the name is not reported signed in');
  });

  await t.test('a link followed after its server was disabled: the page says so, and the status says it failed', async (t) => {
    const started = await api('POST', '/servers/prereg/oauth');
    t.equal(started.body.status, 'pending');
    t.equal((await api('POST', '/servers/prereg/disable')).status, 200);
    const authorize = await fetch(started.body.url, { redirect: 'manual' });
    const page = await fetch(authorize.headers.get('location')!);
    t.equal(page.status, 400, 'a refusal, not an internal error');
    t.match(await page.text(), /no running server named &#34;prereg&#34;/);
    t.match((await api('GET', '/servers/prereg/oauth')).body, { status: 'failed', error: { code: 'RESOURCE_NOT_FOUND' } }, 'the waiting CLI or UI hears how it ended');
    t.notMatch(readFileSync(join(gateway.home, 'logs', 'daemon.log'), 'utf8'), 'oauth callback failed', 'nothing for the log: coffer did nothing wrong');
  });

  await t.test("the authorization server's error code a browser brings back reaches the status and the page bounded, its controls shown as text", async (t) => {
    const started = await api('POST', `/servers/${NAME}/oauth`);
    t.equal(started.body.status, 'pending');
    const state = new URL(started.body.url).searchParams.get('state')!;
    const brought = `\u001b]8;;https://evil.example\u0007access_denied${'!'.repeat(5_000)}`;
    const page = await fetch(`${gateway.url}/oauth/callback?${new URLSearchParams({ state, error: brought })}`);
    t.equal(page.status, 400);
    const shown = await page.text();
    t.notMatch(shown, '\u001b', 'the page holds no raw escape');
    t.ok(shown.length < 4_000, `the page is bounded (${shown.length} characters)`);
    const status = (await api('GET', `/servers/${NAME}/oauth`)).body;
    t.match(status, { status: 'failed', error: { code: 'UPSTREAM_AUTH_REQUIRED', message: /access_denied/ } });
    t.notMatch(status.error.message, '\u001b', 'the status holds no raw escape');
    t.ok(status.error.message.length < 600, `the status is bounded (${status.error.message.length} characters)`);
  });

  await t.test('no token or client secret in the database, WAL, logs, audit or REST answers', async (t) => {
    t.ok(fixture.provider.secrets.size >= 6);
    const audit = JSON.stringify((await api('GET', '/audit?limit=1000')).body);
    t.match(audit, 'oauth_signed_in');
    const read = (): Record<string, string> => {
      const haystacks: Record<string, string> = { audit, answers: answers.join('\n') };
      const files = ['coffer.db', 'coffer.db-wal', ...readdirSync(join(gateway.home, 'logs'), { recursive: true, encoding: 'utf8' }).map((file) => join('logs', file))];
      for (const file of files) {
        try {
          haystacks[file] = readFileSync(join(gateway.home, file)).toString('latin1');
        } catch {
          // A folder, or the WAL after a checkpoint.
        }
      }
      return haystacks;
    };
    const running = read();
    await gateway.daemon.stop();
    const stopped = read();
    for (const [when, haystacks] of [['running', running], ['stopped', stopped]] as const) {
      for (const [where, haystack] of Object.entries(haystacks)) {
        const found = [...fixture.provider.secrets].filter((secret) => haystack.includes(secret));
        t.same(found, [], `${when}: no secret in ${where}`);
      }
    }
  });
});
