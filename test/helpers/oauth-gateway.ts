// A daemon with one upstream behind the local authorization server
// (test/fixtures/oauth-servers.ts), registered and waiting for a sign-in;
// both are stopped when the test ends.
import type { Test } from 'tap';
import { startOAuthFixture, type OAuthFixture, type ResourceServer } from '../fixtures/oauth-servers.js';
import { startGateway, waitFor, type Gateway } from './gateway.js';

export interface OAuthGateway {
  fixture: OAuthFixture;
  rs: ResourceServer;
  gateway: Gateway;
  /** The server's health state over REST. */
  state(): Promise<string>;
}

export async function startOAuthGateway(t: Test, name: string): Promise<OAuthGateway> {
  const fixture = await startOAuthFixture();
  const rs = await fixture.resourceServer();
  const gateway = await startGateway();
  t.teardown(async () => {
    await gateway.close();
    await fixture.close();
  });
  const created = await gateway.api('POST', '/servers', { name, transport: { type: 'http', url: rs.url } });
  if (created.status !== 201) throw new Error(`register failed: ${JSON.stringify(created.body)}`);
  const state = async (): Promise<string> => (await gateway.api('GET', `/servers/${name}`)).body.health.state;
  await waitFor(`${name} needs_auth`, async () => (await state()) === 'needs_auth', 20_000);
  return { fixture, rs, gateway, state };
}
