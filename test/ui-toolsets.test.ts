// Toolsets in the web UI, in a real browser against a real daemon, fixture
// upstreams and real MCP SDK clients: a toolset created on the Toolsets page
// is exactly what /mcp/<name> lists; capabilities picked on a server's tab go
// into an existing or a new toolset; a delete refused while a client is bound
// shows the API's 409 message; binding a client from the page; a toolset made
// over REST appears live; a hostile description is text, never markup.
import t from 'tap';
import type { Page } from 'playwright-core';
import { stdioFixture } from './fixtures/fixture-servers.js';
import { loggedInPage, openBrowser, screenshot } from './helpers/browser.js';
import { gatewayWith, waitFor, type Gateway } from './helpers/gateway.js';

const SLOW = { timeout: 60_000 };
t.setTimeout(600_000);
const context = await openBrowser(t);

const gatewayWithUi = (t: { teardown(fn: () => unknown): void }): Promise<Gateway> => gatewayWith(t, [stdioFixture('ui', ['--prompts'])]);

async function toolsetsPage(gateway: Gateway): Promise<Page> {
  const page = await loggedInPage(context, gateway);
  // Delete asks first: say yes.
  page.on('dialog', (dialog) => void dialog.accept());
  await page.getByRole('link', { name: 'Toolsets' }).click();
  await page.locator('[data-page="toolsets"]').waitFor();
  return page;
}

const listed = async (gateway: Gateway, toolset: string): Promise<string[]> => {
  const client = await gateway.client(`on-${toolset}`, {}, undefined, `/mcp/${toolset}`);
  try {
    return (await client.listTools()).tools.map((tool) => tool.name).sort();
  } finally {
    await client.close();
  }
};

t.test('a toolset created in the UI is exactly what /mcp/<name> lists; tools picked on a server tab join it or a new one', async (t) => {
  const gateway = await gatewayWithUi(t);
  const page = await toolsetsPage(gateway);
  await page.getByRole('button', { name: 'New toolset' }).click();
  const dialog = page.locator('dialog');
  await dialog.locator('[name="name"]').fill('dev');
  await dialog.locator('[name="description"]').fill('code work');
  await dialog.locator('[name="include"]').fill('ui/tool:echo\nui/tool:who*');
  await dialog.getByRole('button', { name: 'Create toolset' }).click();
  const card = page.locator('[data-toolset="dev"]');
  await card.waitFor(SLOW);
  t.equal(await card.locator('.endpoint-url').textContent(), `${gateway.url}/mcp/dev`, 'the endpoint URL, ready to copy');
  t.equal(await card.locator('.description').textContent(), 'code work');
  t.equal(await card.locator('[data-rule="ui"] td:nth-child(2)').textContent(), 'tool:echo tool:who*', 'the rules as stored');
  t.match(await card.locator('.bound-clients').textContent(), 'no client bound');
  t.same(await listed(gateway, 'dev'), ['ui__echo', 'ui__whoami'], 'an MCP client of /mcp/dev sees exactly the set');
  await screenshot(page, 'toolsets');

  await page.evaluate(`location.hash = '#/servers/ui/tools'`);
  await page.locator('[data-server="ui"] [data-tab="tools"][data-status="live"]').waitFor(SLOW);
  const row = (key: string) => page.locator(`.capability-row[data-key="${key}"]`);
  t.equal(await row('echo').locator('.in-toolsets').getAttribute('data-toolsets'), 'dev', 'a row names the toolsets holding it');
  t.equal(await row('getenv').locator('.in-toolsets').count(), 0, 'and none when none does');
  await row('getenv').getByLabel('pick tool getenv').check();
  await row('stats').getByLabel('pick tool stats').check();
  await page.getByRole('button', { name: 'Add to toolset…' }).click();
  t.same(await dialog.locator('.picked li').allTextContents(), ['ui/tool:getenv', 'ui/tool:stats'], 'the dialog names what it adds');
  await screenshot(page, 'add-to-toolset');
  await dialog.getByRole('button', { name: 'Add' }).click();
  await page.locator('.pick-result', { hasText: 'Added to toolset dev.' }).waitFor(SLOW);
  t.same((await gateway.api('GET', '/toolsets/dev')).body.servers, [{ server: 'ui', include: ['tool:echo', 'tool:who*', 'tool:getenv', 'tool:stats'] }], 'PATCHed as include patterns');
  t.same(await listed(gateway, 'dev'), ['ui__echo', 'ui__getenv', 'ui__stats', 'ui__whoami'], '/mcp/dev lists the added tools');
  await waitFor('the row shows its new toolset', async () => (await row('getenv').locator('.in-toolsets').getAttribute('data-toolsets').catch(() => null)) === 'dev');
  t.equal(await row('getenv').getByLabel('pick tool getenv').isChecked(), false, 'the picks are cleared');

  await row('mutate').getByLabel('pick tool mutate').check();
  await page.getByRole('button', { name: 'Add to toolset…' }).click();
  await dialog.locator('[name="toolset"]').selectOption({ label: 'a new toolset…' });
  await dialog.locator('[name="name"]').fill('bad name');
  await dialog.getByRole('button', { name: 'Add' }).click();
  const refused = await gateway.api('POST', '/toolsets', { name: 'bad name', servers: [{ server: 'ui', include: ['tool:mutate'] }] });
  t.equal(refused.status, 422);
  await dialog.locator('.form-message.shown', { hasText: refused.body.error.message }).waitFor(SLOW);
  t.equal(await dialog.locator('.form-message').textContent(), refused.body.error.message, "an invalid name: the API's message, verbatim");
  await dialog.locator('[name="name"]').fill('solo');
  await dialog.getByRole('button', { name: 'Add' }).click();
  await page.locator('.pick-result', { hasText: 'Added to toolset solo.' }).waitFor(SLOW);
  t.same(await listed(gateway, 'solo'), ['ui__mutate'], 'a new toolset of just the picked tool');
  await waitFor('the mutate row names solo, its only toolset', async () => (await row('mutate').locator('.in-toolsets').getAttribute('data-toolsets').catch(() => null)) === 'solo');
});

t.test("a delete refused while a client is bound shows the API's 409 message; unbinding from the page lets it go", async (t) => {
  const gateway = await gatewayWithUi(t);
  t.equal((await gateway.api('POST', '/toolsets', { name: 'dev', servers: [{ server: 'ui' }] })).status, 201);
  const added = await gateway.api('POST', '/clients', { name: 'cursor', toolset: 'dev' });
  t.equal(added.status, 201);
  const bound = await gateway.client('cursor-session', {}, added.body.token as string);
  t.ok((await bound.listTools()).tools.length > 0, 'the bound client has a session');
  const page = await toolsetsPage(gateway);
  const card = page.locator('[data-toolset="dev"]');
  t.equal(await card.locator('.bound-clients').textContent(), 'clients cursor', 'the card names the client using it');
  t.equal(await page.getByLabel('toolset of cursor').inputValue(), 'dev', 'the client list shows its toolset');

  await card.getByRole('button', { name: 'Delete' }).click();
  const refusal = card.locator('[data-error-for="delete"]');
  await refusal.filter({ hasText: /./ }).waitFor(SLOW);
  const expected = await gateway.api('DELETE', '/toolsets/dev');
  t.equal(expected.status, 409);
  t.equal(await refusal.textContent(), expected.body.error.message, "the API's 409 message, word for word");

  await page.getByLabel('toolset of cursor').selectOption({ label: 'the whole surface (/mcp)' });
  await page.locator('[data-result="bind"]', { hasText: 'cursor now sees the whole surface; its open sessions were closed' }).waitFor(SLOW);
  t.equal((await gateway.api('GET', '/clients')).body.clients[0].toolset, null, 'unbound over REST PATCH');
  await card.locator('.bound-clients', { hasText: 'no client bound' }).waitFor(SLOW);
  t.pass('the card follows the client_bound event');
  await t.rejects(bound.listTools(), 'the session the page said would close did');

  await card.getByRole('button', { name: 'Delete' }).click();
  await card.waitFor({ state: 'detached', ...SLOW });
  t.equal((await gateway.api('GET', '/toolsets/dev')).status, 404, 'deleted once nothing is bound');
});

t.test('a toolset made over REST appears live; a hostile description renders as text', async (t) => {
  const gateway = await gatewayWithUi(t);
  const page = await toolsetsPage(gateway);
  await page.locator('[data-page="toolsets"]', { hasText: 'No toolsets yet' }).waitFor();
  const hostile = '<img src=x onerror="window.__pwned=1"><b>bold</b>\u0007\u001b[31m red \u202e';
  t.equal((await gateway.api('POST', '/toolsets', { name: 'live', description: hostile, servers: [{ server: 'ui', include: ['tool:echo'] }] })).status, 201);
  const card = page.locator('[data-toolset="live"]');
  await card.waitFor(SLOW);
  t.equal(await card.locator('.description').textContent(), hostile, 'the description, character for character, as text');
  t.equal(await card.locator('img, b').count(), 0, 'no markup was made of it');
  t.equal(await page.evaluate('window.__pwned === undefined'), true, 'no script ran');

  t.equal((await gateway.api('PATCH', '/toolsets/live', { description: 'plain now', mode: 'search' })).status, 200);
  await card.locator('.description', { hasText: 'plain now' }).waitFor(SLOW);
  t.equal(await card.locator('[data-mode]').getAttribute('data-mode'), 'search', 'the mode is shown');
  t.equal((await gateway.api('DELETE', '/toolsets/live')).status, 204);
  await card.waitFor({ state: 'detached', ...SLOW });
  t.pass('a toolset removed elsewhere leaves the page');
});
