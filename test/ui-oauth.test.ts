// The web UI's Sign in, in headless Chromium against a real daemon and the
// local authorization server with its protected MCP server
// (test/fixtures/oauth-servers.ts): a server in needs_auth shows the button in
// the list and on its page; a click opens the authorization page in a new tab
// cut from the UI, the daemon's /oauth/callback ends the flow there, and the
// UI follows live. A person who says no: the error in the UI, still
// needs_auth, and Sign in again works. Sign out forgets the tokens.
import t from 'tap';
import type { Locator, Page } from 'playwright-core';
import { loggedInPage, openBrowser, screenshot } from './helpers/browser.js';
import { waitFor } from './helpers/gateway.js';
import { startOAuthGateway } from './helpers/oauth-gateway.js';

const NAME = 'remote';
// Long enough for a noisy shared machine.
const SLOW = { timeout: 60_000 };

t.setTimeout(300_000);
const context = await openBrowser(t);

/** Clicks Sign in and answers the tab it opens, which ends on the daemon's callback page. */
async function signInThrough(control: Locator): Promise<Page> {
  const [tab] = await Promise.all([context.waitForEvent('page', SLOW), control.getByRole('button', { name: 'Sign in' }).click()]);
  await tab.waitForURL(/\/oauth\/callback\?/, SLOW);
  await tab.locator('h1').waitFor(SLOW);
  return tab;
}

t.test('Sign in on a server that asks for OAuth', async (t) => {
  const { fixture, rs, gateway } = await startOAuthGateway(t, NAME);
  const page = await loggedInPage(context, gateway);
  const row = page.locator(`.server-row[data-server="${NAME}"]`);
  await row.locator('[data-health="needs_auth"]').waitFor(SLOW);
  t.equal(await row.locator('[data-health]').textContent(), 'needs sign-in');
  t.equal(await row.getByRole('button', { name: 'Sign in' }).count(), 1, 'the list row offers Sign in');
  await screenshot(page, 'oauth-needs-sign-in');

  await t.test('rows built again do not keep their old Sign in controls alive', async (t) => {
    const cdp = await context.newCDPSession(page);
    /** Sign in controls still in memory, after a collection: in the page or held by something. */
    const controlsInMemory = async (): Promise<number> => {
      await cdp.send('HeapProfiler.collectGarbage');
      const prototype = await cdp.send('Runtime.evaluate', { expression: 'HTMLSpanElement.prototype' });
      const spans = await cdp.send('Runtime.queryObjects', { prototypeObjectId: prototype.result.objectId! });
      const counted = await cdp.send('Runtime.callFunctionOn', { objectId: spans.objects.objectId!, functionDeclaration: 'function () { return this.filter((span) => span.matches("[data-sign-in]")).length; }', returnByValue: true });
      return counted.result.value as number;
    };
    for (let round = 0; round < 40; round++) {
      await page.evaluate(`location.hash = '#/invocations'`);
      await page.locator('[data-page="invocations"]').waitFor();
      await page.evaluate(`location.hash = '#/servers'`);
      await row.locator('[data-sign-in]').waitFor();
    }
    const kept = await controlsInMemory();
    t.ok(kept <= 2, `the one shown (and at most the one before it), not one per rebuild: ${kept}`);
    await cdp.detach();
  });

  await t.test('the person says no: the error is shown and the server still needs a sign-in', async (t) => {
    fixture.provider.answer = 'deny';
    await page.evaluate(`location.hash = '#/servers/${NAME}/tools'`);
    const control = page.locator(`[data-page="server"] .page-head [data-sign-in="${NAME}"]`);
    const tab = await signInThrough(control);
    t.equal(await tab.locator('h1').textContent(), 'Sign-in failed');
    await control.locator('[role="alert"]').waitFor(SLOW);
    t.match(await control.locator('[role="alert"]').textContent(), /^Sign-in failed: sign-in to remote failed: the authorization server answered access_denied/);
    t.equal(await control.getAttribute('data-phase'), 'failed');
    t.equal(await page.locator('.page-head [data-health]').getAttribute('data-health'), 'needs_auth');
    t.equal((await gateway.api('GET', `/servers/${NAME}`)).body.health.state, 'needs_auth');
    t.ok(rs.seen.every((header) => header === undefined), 'no credential reached the upstream');
    await screenshot(page, 'oauth-sign-in-refused');
    await tab.close();
    fixture.provider.answer = 'approve';
  });

  await t.test('signed in from the list: the row turns ready live and the tools are listed', async (t) => {
    await page.evaluate(`location.hash = '#/servers'`);
    const control = row.locator(`[data-sign-in="${NAME}"]`);
    t.equal(await control.getAttribute('data-phase'), 'failed', 'the last outcome is kept until the next attempt');
    const tab = await signInThrough(control);
    t.equal(await tab.locator('h1').textContent(), 'Signed in');
    t.equal(await tab.evaluate('window.opener'), null, 'the authorization page got no handle on the UI');
    await row.locator('[data-health="ready"]').waitFor(SLOW);
    t.equal(await row.locator('[data-sign-in]').count(), 0, 'no Sign in once ready');
    t.ok(rs.seen.some((header) => header?.startsWith('Bearer ')), 'the upstream got the token');
    await tab.close();

    await row.locator('a.name').click();
    await page.locator('[data-tab="tools"][data-status="live"]').waitFor(SLOW);
    const keys = await page.locator('.capability-row').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-key')));
    t.same(keys.sort(), ['whoami', 'write_thing']);
    t.equal(await page.locator('.page-head [data-sign-in]').count(), 0, 'nor on its page');
    await screenshot(page, 'oauth-signed-in');
  });

  await t.test('Sign out on its page: the tokens are forgotten and Sign in comes back live', async (t) => {
    const signOut = page.locator(`.page-head ~ .actions [data-sign-out="${NAME}"]`).getByRole('button', { name: 'Sign out' });
    await signOut.waitFor(SLOW);
    page.once('dialog', (dialog) => void dialog.accept());
    await signOut.click();
    const control = page.locator(`.page-head [data-sign-in="${NAME}"]`);
    await control.getByRole('button', { name: 'Sign in' }).waitFor(SLOW);
    t.equal(await control.getAttribute('data-phase'), 'idle', 'no stale outcome');
    await waitFor('needs_auth over REST', async () => (await gateway.api('GET', `/servers/${NAME}`)).body.health.state === 'needs_auth');
    t.same((await gateway.api('GET', `/servers/${NAME}/oauth`)).body, { status: 'none' });
    t.equal(await page.locator('[data-sign-out]').count(), 0, 'no Sign out without tokens');
  });
});
