// OAuth beyond the basic sign-in, against the local authorization server
// (test/fixtures/oauth-servers.ts): the scopes a step-up added stay with the
// sealed credential across a daemon restart, so a sign-in after it asks for
// them again rather than only the narrow scope of the next challenge; and a
// legacy HTTP+SSE upstream behind a bearer check is signed in and works.
import t from 'tap';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startGateway, tempHome, waitFor, type Gateway } from './helpers/gateway.js';
import { READ_SCOPE, startOAuthFixture, WRITE_SCOPE, type OAuthFixture } from './fixtures/oauth-servers.js';

const NAME = 'remote';
const text = (result: unknown): string => ((result as { content: Array<{ text: string }> }).content[0]?.text ?? '');

function waitState(gateway: Gateway, state: string): Promise<unknown> {
  return waitFor(`${NAME} ${state}`, async () => (await gateway.api('GET', `/servers/${NAME}`)).body.health.state === state, 30_000);
}

/** Starts a sign-in and plays the person: opens the link, follows the authorization server back to coffer; the link's scope. */
async function signIn(gateway: Gateway): Promise<string | null> {
  const started = await gateway.api('POST', `/servers/${NAME}/oauth`);
  if (started.body?.status !== 'pending') throw new Error(`no sign-in link: ${JSON.stringify(started.body)}`);
  const link = new URL(started.body.url);
  const page = await fetch(link);
  if (page.status !== 200) throw new Error(`the sign-in did not complete: ${page.status} ${await page.text()}`);
  return link.searchParams.get('scope');
}

async function refusal(client: Client, name: string): Promise<string> {
  try {
    await client.callTool({ name });
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error(`${name} did not fail`);
}

t.test('step-up scopes outlive a restart', async (t) => {
  const fixture: OAuthFixture = await startOAuthFixture();
  const rs = await fixture.resourceServer();
  const home = tempHome();
  let gateway = await startGateway({}, home);
  t.teardown(async () => {
    await gateway.close();
    await fixture.close();
  });
  t.equal((await gateway.api('POST', '/servers', { name: NAME, transport: { type: 'http', url: rs.url } })).status, 201);
  await waitState(gateway, 'needs_auth');
  t.equal(await signIn(gateway), READ_SCOPE, 'the first sign-in asks for the challenged scope only');
  await waitState(gateway, 'ready');

  let client = await gateway.client();
  t.match(await refusal(client, `${NAME}__write_thing`), WRITE_SCOPE, 'the write call asks for a wider scope');
  t.equal(await signIn(gateway), `${READ_SCOPE} ${WRITE_SCOPE}`, 'the step-up asks for both');
  await waitState(gateway, 'ready');
  t.equal(text(await client.callTool({ name: `${NAME}__write_thing` })), 'written');

  // A restart on the same home: the sealed record is all that remains of the step-up.
  await client.close();
  await gateway.daemon.stop();
  gateway = await startGateway({}, home);
  await waitState(gateway, 'ready');
  client = await gateway.client();
  t.equal(text(await client.callTool({ name: `${NAME}__whoami` })), `scopes: ${READ_SCOPE} ${WRITE_SCOPE}`, 'the stored token is the wide one');

  // Every token revoked: the next 401 challenges with the narrow scope, and the sign-in must still ask for both.
  fixture.provider.access.clear();
  fixture.provider.refresh.clear();
  await refusal(client, `${NAME}__whoami`);
  await waitState(gateway, 'needs_auth');
  t.equal(await signIn(gateway), `${READ_SCOPE} ${WRITE_SCOPE}`, 'the sign-in after the restart keeps the step-up scope');
  await waitState(gateway, 'ready');
  t.equal(text(await client.callTool({ name: `${NAME}__write_thing` })), 'written', 'no second step-up needed');
});

t.test('a legacy HTTP+SSE upstream that asks for OAuth is signed in and works', async (t) => {
  const fixture: OAuthFixture = await startOAuthFixture();
  const rs = await fixture.resourceServer('sse');
  const gateway = await startGateway();
  t.teardown(async () => {
    await gateway.close();
    await fixture.close();
  });
  t.equal((await gateway.api('POST', '/servers', { name: NAME, transport: { type: 'sse', url: rs.url } })).status, 201);
  await waitState(gateway, 'needs_auth');
  t.ok(rs.seen.length > 0 && rs.seen.every((header) => header === undefined), 'nothing was sent as a credential before the sign-in');

  t.equal(await signIn(gateway), READ_SCOPE);
  await waitState(gateway, 'ready');
  const client = await gateway.client();
  t.ok((await client.listTools()).tools.some((tool) => tool.name === `${NAME}__whoami`), 'listed once signed in');
  t.equal(text(await client.callTool({ name: `${NAME}__whoami` })), `scopes: ${READ_SCOPE}`);
  t.same(fixture.provider.resources, [rs.url], 'the token was asked for the SSE endpoint (RFC 8707)');
  t.ok(rs.seen.length > 0 && rs.seen.at(-1)?.startsWith('Bearer at-'), 'the stream and the messages carry the token');

  // A revoked access token on the SSE upstream: refreshed, the call goes on.
  const before = fixture.provider.refreshes;
  fixture.provider.access.clear();
  t.equal(text(await client.callTool({ name: `${NAME}__whoami` })), `scopes: ${READ_SCOPE}`);
  t.ok(fixture.provider.refreshes > before, 'refreshed');
});
