// The actor's OAuth (workers/actor/oauth) driven directly against bare
// authorization servers: what each server is shown, and when.
import { createHash } from 'node:crypto';
import t, { type Test } from 'tap';
import { MAX_DEPTH } from '../src/protocol/message-limit.js';
import { textDepth } from '../src/protocol/nesting.js';
import type { OAuthOutcome } from '../src/protocol/oauth.js';
import { SIGN_IN_TTL_MS, UpstreamAuth } from '../workers/actor/oauth/upstream-auth.js';
import { insecureEndpoints, secureEndpoint, type OAuthClientConfig } from '../workers/actor/oauth/provider.js';
import type { AuthFetchLimits } from '../workers/actor/oauth/bounded-fetch.js';
import { actorSide, carries, miniAuthServer, miniResource, type MiniAuthServer } from './fixtures/oauth-mini.js';

const REDIRECT = 'http://127.0.0.1:7999/oauth/callback';
const SECRET = 'configured-secret-issued-by-as1';

async function setup(t: Test, configured: OAuthClientConfig, limits?: AuthFetchLimits) {
  const as1 = await miniAuthServer('as1');
  const as2 = await miniAuthServer('as2');
  const rs = await miniResource();
  rs.authorizationServer = as1.base;
  const side = actorSide();
  const auth = new UpstreamAuth('remote', rs.url, configured, null, side.log, side.hooks, limits);
  t.teardown(async () => {
    auth.close();
    await Promise.all([as1.close(), as2.close(), rs.close()]);
  });
  const challenge = `Bearer resource_metadata="${rs.base}/.well-known/oauth-protected-resource/mcp"`;
  return { as1, as2, rs, auth, ...side, challenge };
}

/** Begins a sign-in; returns its link and state. */
async function begin(t: Test, auth: UpstreamAuth): Promise<{ link: URL; state: string }> {
  const outcome = await auth.act({ type: 'begin', redirectUrl: REDIRECT });
  if (!outcome.ok || outcome.authorized) throw new Error(`no link: ${JSON.stringify(outcome)}`);
  t.pass(`a link to ${new URL(outcome.url).origin}`);
  return { link: new URL(outcome.url), state: outcome.state };
}

const complete = (auth: UpstreamAuth, state: string, code: string): Promise<OAuthOutcome> => auth.act({ type: 'complete', state, code, iss: null });
const sawSecret = (as: MiniAuthServer): number => as.seen.filter((request) => carries(request, SECRET)).length;

t.test('the configured client belongs to the authorization server that first accepted it', async (t) => {
  await t.test('the resource moves: the new server gets a client registered there, never the secret', async (t) => {
    const { as1, as2, rs, auth, challenge } = await setup(t, { client_id: 'pre', client_secret: SECRET });
    const first = await begin(t, auth);
    t.equal(first.link.origin, as1.base);
    t.equal(first.link.searchParams.get('client_id'), 'pre');
    t.same(await complete(auth, first.state, 'code-1'), { ok: true, authorized: true });
    t.ok(sawSecret(as1) > 0, 'its own server was given the secret');

    rs.authorizationServer = as2.base;
    t.match(await auth.refused(401, challenge, 'Bearer as1-at-1', false), { signIn: /needs a sign-in/ });
    const moved = await begin(t, auth);
    t.equal(moved.link.origin, as2.base);
    t.equal(moved.link.searchParams.get('client_id'), 'dyn-as2', 'a client registered at the new server');
    t.same(await complete(auth, moved.state, 'code-2'), { ok: true, authorized: true });
    t.equal(sawSecret(as2), 0, 'the new server never saw the secret');

    rs.authorizationServer = as1.base;
    const back = await begin(t, auth);
    t.equal(back.link.searchParams.get('client_id'), 'pre', 'back at its own server: the configured client again');
  });

  await t.test('after --logout too: where it belongs is kept (no token), and the new server is not given it', async (t) => {
    const { as2, rs, auth, hooks } = await setup(t, { client_id: 'pre', client_secret: SECRET });
    const first = await begin(t, auth);
    t.same(await complete(auth, first.state, 'code-1'), { ok: true, authorized: true });
    t.same(await auth.act({ type: 'logout' }), { ok: true, authorized: true });
    const kept = hooks.saved.at(-1);
    t.match(kept, { configuredClient: { client_id: 'pre' } }, 'the record keeps the binding');
    t.notOk(kept?.tokens || kept?.client, 'and nothing else');

    rs.authorizationServer = as2.base;
    const moved = await begin(t, auth);
    t.equal(moved.link.searchParams.get('client_id'), 'dyn-as2');
    t.same(await complete(auth, moved.state, 'code-2'), { ok: true, authorized: true });
    t.equal(sawSecret(as2), 0, 'the new server never saw the secret');
  });

  await t.test('a machine client cannot register elsewhere: it fails, saying why, and sends nothing there', async (t) => {
    const { as1, as2, rs, auth, log, challenge } = await setup(t, { client_id: 'machine', client_secret: SECRET, grant_type: 'client_credentials' });
    t.same(await auth.headers(), { authorization: 'Bearer as1-at-1' });
    t.ok(sawSecret(as1) > 0);

    rs.authorizationServer = as2.base;
    t.match(await auth.refused(401, challenge, 'Bearer as1-at-1', false), { signIn: /needs a sign-in/ });
    const outcome = await auth.act({ type: 'begin', redirectUrl: REDIRECT });
    t.match(outcome, { ok: false, error: { code: 'UPSTREAM_AUTH_REQUIRED' } });
    t.match(log.notes.join('\n'), `belongs to authorization server ${as1.base}`);
    t.match(log.notes.join('\n'), 'give the server the client that authorization server issued');
    t.equal(as2.seen.filter((request) => request.path === '/token').length, 0, 'no token request at the new server');
    t.equal(sawSecret(as2), 0);
    t.notOk(JSON.stringify([outcome, log.notes]).includes(SECRET), 'no secret in the answer or the log');
  });
});

t.test('two sign-ins begun at once: each link carries its own state and PKCE challenge, and either completes', async (t) => {
  const { as1, auth } = await setup(t, {});
  // The code the person brings back is bound to the challenge of the link they opened (RFC 7636 §4.6).
  const challenges = new Map<string, string>();
  as1.token = (body) => {
    const verifier = body.get('code_verifier') ?? '';
    const ok = challenges.get(body.get('code') ?? '') === createHash('sha256').update(verifier).digest('base64url');
    return ok ? { status: 200, body: { access_token: 'at', token_type: 'Bearer' } } : { status: 400, body: { error: 'invalid_grant', error_description: 'PKCE verification failed' } };
  };
  const [a, b] = await Promise.all([begin(t, auth), begin(t, auth)]);
  t.not(a.state, b.state);
  for (const [label, attempt] of [['A', a], ['B', b]] as const) {
    t.equal(attempt.link.searchParams.get('state'), attempt.state, `${label}: the link carries the state returned with it`);
    challenges.set(`code-${label}`, attempt.link.searchParams.get('code_challenge') ?? '');
  }
  // The authorization server sends the browser back with the state of the link it was given.
  const back = (attempt: { link: URL }): string => attempt.link.searchParams.get('state') ?? '';
  t.same(await complete(auth, back(b), 'code-B'), { ok: true, authorized: true }, 'the later link completes');
  t.same(await complete(auth, back(a), 'code-A'), { ok: true, authorized: true }, 'and the earlier one too: neither spent the other');
  t.match(await complete(auth, back(a), 'code-A'), { ok: false, error: { code: 'UPSTREAM_AUTH_REQUIRED', message: /unknown, spent or expired: run 'coffer mcp auth remote' again/ } }, 'each works once');
});

t.test('a refresh while a sign-in is begun waits for it, and neither spoils the other', async (t) => {
  const { as1, auth, challenge } = await setup(t, {});
  const challenges = new Map<string, string>();
  as1.token = (body) => {
    if (body.get('grant_type') === 'refresh_token') return { status: 200, body: { access_token: `refreshed-from-${body.get('refresh_token')}`, token_type: 'Bearer', expires_in: 3600, refresh_token: 'rt-next' } };
    const ok = challenges.get(body.get('code') ?? '') === createHash('sha256').update(body.get('code_verifier') ?? '').digest('base64url');
    return ok ? { status: 200, body: { access_token: `at-${body.get('code')}`, token_type: 'Bearer', expires_in: 3600, refresh_token: 'rt-1' } } : { status: 400, body: { error: 'invalid_grant', error_description: 'PKCE verification failed' } };
  };
  const first = await begin(t, auth);
  challenges.set('code-1', first.link.searchParams.get('code_challenge') ?? '');
  t.same(await complete(auth, first.state, 'code-1'), { ok: true, authorized: true });

  // The person signs in again (a wider scope, say) just as a request is refused and the token is renewed.
  const [again, refused] = await Promise.all([begin(t, auth), auth.refused(401, challenge, 'Bearer at-code-1', false)]);
  t.equal(refused, 'retry', 'the refresh used the refresh token, not a sign-in of its own');
  t.same(await auth.headers(), { authorization: 'Bearer refreshed-from-rt-1' });
  challenges.set('code-2', again.link.searchParams.get('code_challenge') ?? '');
  t.same(await complete(auth, again.state, 'code-2'), { ok: true, authorized: true }, 'the link begun meanwhile completes: its verifier is its own');
});

t.test('an endpoint is secure when it is https, or plain http to this machine only', async (t) => {
  for (const url of ['https://as.example/token', 'http://127.0.0.1:9000/token', 'http://127.3.4.5/t', 'http://localhost:1/t', 'http://[::1]:8/t']) t.ok(secureEndpoint(url), url);
  for (const url of ['http://as.example/token', 'http://127.0.0.1.nip.io/t', 'http://10.0.0.1/t', 'http://[::ffff:127.0.0.1]/t', 'ftp://127.0.0.1/t', 'javascript:alert(1)', 'not a url']) t.notOk(secureEndpoint(url), url);
  t.same(
    insecureEndpoints({ authorizationServerUrl: 'http://127.0.0.1:1/', authorizationServerMetadata: { issuer: 'http://127.0.0.1:1/', authorization_endpoint: 'https://a.example/authorize', token_endpoint: 'http://a.example/token', response_types_supported: ['code'] } }),
    ['http://a.example/token'],
  );
});

t.test("an authorization server's error text reaches the answer bounded, its controls made visible, without the client secret", async (t) => {
  const { as1, auth } = await setup(t, { client_id: 'pre', client_secret: SECRET });
  // Under the bound on an answer's size (bounded-fetch.ts), far over the bound on a message.
  const huge = `${'\x1b[2J'.repeat(10)}${'x'.repeat(200_000)}`;
  // A server that quotes the secret it was sent (or a hostile one that knows it) in its error.
  as1.token = () => ({ status: 400, body: { error: 'invalid_grant', error_description: `client_secret ${SECRET} refused ${huge}` } });
  const { state } = await begin(t, auth);
  const outcome = await complete(auth, state, 'code-1');
  if (outcome.ok) return void t.fail('the sign-in succeeded');
  t.equal(outcome.error.code, 'UPSTREAM_AUTH_REQUIRED');
  t.ok(outcome.error.message.length < 4_096, `the message is bounded (${outcome.error.message.length} chars)`);
  t.notMatch(outcome.error.message, /\x1b/, 'no raw control character');
  t.match(outcome.error.message, /sign-in to remote failed: .*refused \\x1b\[2J/, 'what the server said, controls visible');
  t.notOk(outcome.error.message.includes(SECRET), 'the client secret echoed back is not in the answer');
});

t.test('links never followed do not pile up in the actor: a sign-in begun forgets the expired ones', async (t) => {
  const { auth } = await setup(t, {});
  const held = (): number => (auth as unknown as { attempts: Map<string, unknown> }).attempts.size;
  for (let n = 0; n < 3; n++) await begin(t, auth);
  t.equal(held(), 3, 'three links, each usable until it expires');
  const now = Date.now;
  t.teardown(() => void (Date.now = now));
  Date.now = () => now() + SIGN_IN_TTL_MS + 1;
  const { state } = await begin(t, auth);
  t.equal(held(), 1, 'only the new link is held');
  t.same(await complete(auth, state, 'code-1'), { ok: true, authorized: true });
});

t.test('a token lifetime out of bounds (past a timer, negative, zero, null) never starts a refresh loop', async (t) => {
  for (const expiresIn of [30 * 24 * 3600, 1e300, -5, 0, null]) {
    await t.test(`expires_in ${expiresIn}`, async (t) => {
      const { as1, auth, log } = await setup(t, {});
      let issued = 0;
      as1.token = () => ({ status: 200, body: { access_token: `at-${++issued}`, token_type: 'Bearer', expires_in: expiresIn, refresh_token: `rt-${issued}` } });
      const { state } = await begin(t, auth);
      t.same(await complete(auth, state, 'code-1'), { ok: true, authorized: true });
      await new Promise((resolve) => setTimeout(resolve, 300));
      t.same(await auth.headers(), { authorization: 'Bearer at-1' }, 'the token is used');
      t.equal(issued, 1, 'no refresh followed the sign-in');
      // The SDK reads a null lifetime as 0.
      if (expiresIn === null || expiresIn <= 0) t.match(log.notes.join('\n'), `expires_in ${Number(expiresIn)}, not a lifetime`, 'the log says the lifetime was disregarded');
    });
  }
});

/** What `pending` settled to within `ms`, or 'still waiting'. */
async function within<T>(ms: number, pending: Promise<T>): Promise<T | 'still waiting'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'still waiting'>((resolve) => (timer = setTimeout(() => resolve('still waiting'), ms)));
  try {
    return await Promise.race([pending, late]);
  } finally {
    clearTimeout(timer);
  }
}

t.test('an authorization server that never answers: the refresh and the sign-in end by their deadline, and a later sign-in is not held up', async (t) => {
  const { as1, auth, log, challenge } = await setup(t, {}, { deadlineMs: 500 });
  const first = await begin(t, auth);
  t.same(await complete(auth, first.state, 'code-1'), { ok: true, authorized: true });

  as1.stall = true;
  t.match(await within(5_000, auth.refused(401, challenge, 'Bearer as1-at-1', false)), { signIn: /needs a sign-in/ }, 'the refused request fails, asking for a sign-in');
  t.match(log.notes.join('\n'), /token refresh failed: http:\/\/127\.0\.0\.1:\d+\/\.well-known\/\S+ did not answer within 0\.5 s/, 'the log names what did not answer');
  t.match(await within(5_000, auth.act({ type: 'begin', redirectUrl: REDIRECT })), { ok: false, error: { code: 'UPSTREAM_AUTH_REQUIRED', message: /did not answer within 0\.5 s/ } });

  as1.stall = false;
  t.match(await within(5_000, auth.act({ type: 'begin', redirectUrl: REDIRECT })), { ok: true, authorized: false }, 'once it answers, a sign-in begins');
});

t.test("an answer past the size or nesting bound is refused before it is parsed or kept", async (t) => {
  let deep: unknown = 'bottom';
  for (let level = 0; level < 200; level++) deep = [deep];
  const cases = [
    { what: 'huge', extra: { padding: 'x'.repeat(2_000_000) }, refused: /\/\.well-known\/\S+ answered more than 256 KiB: refused/ },
    { what: 'deeply nested', extra: { nested: deep }, refused: /\/\.well-known\/\S+ answered JSON nested deeper than 32 levels: refused/ },
  ];
  for (const { what, extra, refused } of cases) {
    await t.test(what, async (t) => {
      const { as1, auth, hooks } = await setup(t, {});
      as1.metadataExtra = extra;
      t.match(await auth.act({ type: 'begin', redirectUrl: REDIRECT }), { ok: false, error: { code: 'UPSTREAM_AUTH_REQUIRED', message: refused } });
      const kept = JSON.stringify(hooks.saved);
      t.ok(kept.length < 100_000, `what was kept is small (${kept.length} chars)`);
      t.ok(textDepth(kept, MAX_DEPTH) <= MAX_DEPTH, 'and nests no deeper than a stored record may be read back');
    });
  }
});

t.test('an authorization server that quotes back the code and the PKCE verifier it was sent: neither reaches the answer', async (t) => {
  const { as1, auth } = await setup(t, {});
  let verifier = '';
  as1.token = (body) => {
    verifier = body.get('code_verifier') ?? '';
    return { status: 400, body: { error: 'invalid_grant', error_description: `code ${body.get('code')} with code_verifier ${verifier} refused` } };
  };
  const code = 'code-quoted-back-0123456789';
  const { state } = await begin(t, auth);
  const outcome = await complete(auth, state, code);
  if (outcome.ok) return void t.fail('the sign-in succeeded');
  t.ok(verifier.length >= 43, 'the token endpoint was sent the verifier');
  t.match(outcome.error, { code: 'UPSTREAM_AUTH_REQUIRED', message: /sign-in to remote failed: code \[redacted\] with code_verifier \[redacted\] refused/ });
  t.notOk(outcome.error.message.includes(verifier) || outcome.error.message.includes(code), 'neither the code nor the verifier is in the answer');
});

t.test('a token of another type than Bearer is refused, at a sign-in and at a refresh, and never sent', async (t) => {
  const { as1, auth, log, challenge } = await setup(t, {});
  let type = 'DPoP';
  as1.token = (body) => ({ status: 200, body: { access_token: `at-${body.get('grant_type')}`, token_type: type, expires_in: 3600, refresh_token: 'rt-1' } });
  const first = await begin(t, auth);
  t.match(await complete(auth, first.state, 'code-1'), { ok: false, error: { code: 'UPSTREAM_AUTH_REQUIRED', message: /sign-in to remote failed: the token endpoint issued a token of type "DPoP": coffer sends Bearer tokens only/ } });
  t.same(await auth.headers(), {}, 'the token is not sent');

  type = 'bearer';
  const again = await begin(t, auth);
  t.same(await complete(auth, again.state, 'code-2'), { ok: true, authorized: true }, 'bearer in any case is Bearer (RFC 6749 §5.1)');
  t.same(await auth.headers(), { authorization: 'Bearer at-authorization_code' });

  type = 'mac';
  t.match(await auth.refused(401, challenge, 'Bearer at-authorization_code', false), { signIn: /needs a sign-in/ }, 'a refresh that brings one fails: a person signs in');
  t.match(log.notes.join('\n'), 'the token endpoint issued a token of type "mac"', 'the log says why');
  t.notSame(await auth.headers(), { authorization: 'Bearer at-refresh_token' }, 'the refreshed token is not sent');
});

t.test('an answer of the wrong shape fails naming the URL that gave it and what is wrong, on one line', async (t) => {
  const cases = [
    { what: 'metadata with a number for issuer', prep: (as: MiniAuthServer) => (as.metadataExtra = { issuer: 5 }), says: /the answer of http:\/\/127\.0\.0\.1:\d+\/\.well-known\/oauth-authorization-server is not what OAuth allows: issuer: Invalid input: expected string, received number/ },
    { what: 'a token answer that is an array', prep: (as: MiniAuthServer) => (as.token = () => ({ status: 200, body: [1, 2] as unknown as Record<string, unknown> })), says: /the answer of http:\/\/127\.0\.0\.1:\d+\/token is not what OAuth allows: \(the answer\): Invalid input: expected object, received array/ },
  ];
  for (const { what, prep, says } of cases) {
    await t.test(what, async (t) => {
      const { as1, auth } = await setup(t, {});
      prep(as1);
      let outcome = await auth.act({ type: 'begin', redirectUrl: REDIRECT });
      if (outcome.ok && !outcome.authorized) outcome = await complete(auth, outcome.state, 'code-0123456789');
      t.match(outcome, { ok: false, error: { code: 'UPSTREAM_AUTH_REQUIRED', message: says } });
      if (!outcome.ok) t.notMatch(outcome.error.message, '\\x0a', 'one line, not a dump of the validator');
    });
  }
});

t.test('a refusal whose body is not an OAuth error names the URL, its status and the start of the body, at a sign-in and at a refresh; no secret it echoes is shown', async (t) => {
  const { as1, auth, log, challenge } = await setup(t, {});
  const page = `<html><body>Internal error${' '.repeat(400)}trace</body></html>`;
  as1.token = () => ({ status: 500, text: page });
  const first = await begin(t, auth);
  const failed = await complete(auth, first.state, 'code-1');
  t.match(failed, { ok: false, error: { code: 'UPSTREAM_AUTH_REQUIRED', message: /^sign-in to remote failed: http:\/\/127\.0\.0\.1:\d+\/token answered HTTP 500 "<html><body>Internal error +… \[\d+ more chars\]", which is not an OAuth error answer$/ } });
  t.notMatch(failed.ok ? '' : failed.error.message, 'trace', 'the body is quoted from a cut, not whole');

  as1.token = undefined;
  const again = await begin(t, auth);
  t.same(await complete(auth, again.state, 'code-2'), { ok: true, authorized: true });
  // The server echoes the refresh token it was sent in its error page.
  as1.token = (body) => ({ status: 502, text: `bad gateway for ${body.get('refresh_token')}` });
  t.match(await auth.refused(401, challenge, 'Bearer as1-at-1', false), { signIn: /needs a sign-in/ }, 'the refresh fails: a person signs in');
  const notes = log.notes.join('\n');
  t.match(notes, /token refresh failed: http:\/\/127\.0\.0\.1:\d+\/token answered HTTP 502 "bad gateway for \[redacted\]"/, 'the log says what the token endpoint answered');
  t.notMatch(notes, 'as1-rt-', 'not the refresh token it echoed');
});

t.test('two requests refused at once refresh once; a resource that refuses every token gets one refresh per request, then a sign-in is asked', async (t) => {
  const { as1, auth, challenge } = await setup(t, {});
  const first = await begin(t, auth);
  t.same(await complete(auth, first.state, 'code-1'), { ok: true, authorized: true });
  const refreshes = (): number => as1.seen.filter((request) => request.path === '/token' && request.body.includes('grant_type=refresh_token')).length;

  const both = await Promise.all([auth.refused(401, challenge, 'Bearer as1-at-1', false), auth.refused(401, challenge, 'Bearer as1-at-1', false)]);
  t.same(both, ['retry', 'retry'], 'both are retried');
  t.equal(refreshes(), 1, 'with one new token');
  t.equal(await auth.refused(401, challenge, 'Bearer as1-at-1', false), 'retry', 'a third refused with the old token is retried');
  t.equal(refreshes(), 1, 'with the token already renewed');

  // The retries are refused too: each request ends asking for a sign-in, and nothing loops.
  t.match(await auth.refused(401, challenge, 'Bearer as1-at-2', true), { signIn: /needs a sign-in/ });
  t.equal(refreshes(), 1, 'a refused retry does not refresh');
  t.match(auth.signInNeeded(), /needs a sign-in/);
});

t.test('a refresh that fails is tried again after a pause, not at once in a loop', async (t) => {
  const { as1, auth, log } = await setup(t, {});
  let refreshes = 0;
  as1.token = (body) => {
    if (body.get('grant_type') !== 'refresh_token') return { status: 200, body: { access_token: 'at-1', token_type: 'Bearer', expires_in: 1, refresh_token: 'rt-1' } };
    refreshes += 1;
    return { status: 500, body: { error: 'server_error', error_description: 'try later' } };
  };
  const { state } = await begin(t, auth);
  t.same(await complete(auth, state, 'code-1'), { ok: true, authorized: true });
  // The token's refresh is due after two thirds of its second; it fails, and the token expires.
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  for (let n = 0; n < 5; n++) await auth.headers();
  t.equal(refreshes, 1, 'one refresh was tried, neither the timer nor each request tried again at once');
  t.match(log.notes.join('\n'), /token refresh failed: .*tried again in 30 s or when the upstream refuses the token/, 'the log says so');
});

t.test("a step-up challenge's scope reaches the call's error bounded, its controls made visible", async (t) => {
  const { auth } = await setup(t, {});
  // Within the bound on scopes held, past the bound on what a message shows.
  const scope = `\x1b]8;;https://evil.example\x07mcp:write ${'x'.repeat(3_000)}`;
  const refusal = await auth.refused(403, `Bearer error="insufficient_scope", scope="${scope}"`, undefined, false);
  if (refusal === null || refusal === 'retry') return void t.fail(`not a sign-in: ${refusal}`);
  t.match(refusal.signIn, /needs a wider permission \(scope "\\x1b\]8;;https:\/\/evil\.example\\x07mcp:write x+… \[\d+ more chars\]"\)/, 'what the upstream asked for, controls visible');
  t.ok(refusal.signIn.length < 1_024, `the message is bounded (${refusal.signIn.length} chars)`);
});

t.test('the scopes challenges ask for are held up to a bound: a challenge that would grow them past it is not taken', async (t) => {
  const { auth } = await setup(t, {});
  let refusal: Awaited<ReturnType<UpstreamAuth['refused']>> = null;
  for (let n = 0; n < 50; n++) {
    const scope = Array.from({ length: 20 }, (_, i) => `scope-${n}-${i}-${'x'.repeat(80)}`).join(' ');
    refusal = await auth.refused(403, `Bearer error="insufficient_scope", scope="${scope}"`, undefined, false);
  }
  t.match(refusal, { signIn: /upstream remote asks for scopes past 4096 characters in all: they are not asked for; ask the server's operator/ }, 'the call that would pass it says so');
  const { link } = await begin(t, auth);
  const asked = link.searchParams.get('scope') ?? '';
  t.ok(asked.length > 0 && asked.length <= 4_096, `the sign-in asks for the scopes held (${asked.length} chars)`);
});
