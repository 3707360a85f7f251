// The user's own words for a tool in the web UI, in a real browser against a
// real daemon, a fixture upstream and a real MCP SDK client: given in the
// capability row, shown beside the upstream's, reaching tools/list; a taken
// name refused with the API's message; "Use the upstream's" undoes it.
import t from 'tap';
import type { Page } from 'playwright-core';
import { stdioFixture } from './fixtures/fixture-servers.js';
import { loggedInPage, openBrowser, screenshot } from './helpers/browser.js';
import { startGateway, waitFor, type Gateway } from './helpers/gateway.js';

const SLOW = { timeout: 60_000 };
t.setTimeout(600_000);
const context = await openBrowser(t);

const tools = async (client: Awaited<ReturnType<Gateway['client']>>): Promise<Map<string, string | undefined>> =>
  new Map((await client.listTools()).tools.map((tool) => [tool.name, tool.description]));

async function give(page: Page, key: string, name: string, description: string): Promise<void> {
  const row = page.locator(`.capability-row[data-key="${key}"]`);
  await row.locator('.words summary').click();
  await row.getByLabel(`your name for ${key}`).fill(name);
  await row.getByLabel(`your description for ${key}`).fill(description);
  await row.getByRole('button', { name: 'Save' }).click();
}

t.test("a tool's own name and description given in the UI reach tools/list; shown beside the upstream's; a taken name is refused; cleared again", async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  await gateway.addServer(stdioFixture('ui'));
  const client = await gateway.client();
  t.ok((await tools(client)).has('ui__echo'));

  const page = await loggedInPage(context, gateway);
  await page.evaluate(`location.hash = '#/servers/ui/tools'`);
  await page.locator('[data-server="ui"] [data-tab="tools"][data-status="live"]').waitFor(SLOW);

  await give(page, 'echo', 'repeat_back', 'Says your words again.');
  const echo = page.locator('.capability-row[data-key="echo"]');
  await echo.locator('.own-name', { hasText: 'repeat_back' }).waitFor(SLOW);
  t.match(await echo.locator('.own-description').textContent(), 'Says your words again.', 'the own description is shown');
  t.match(await echo.locator('.description', { hasText: 'upstream:' }).textContent(), 'Returns its arguments.', "beside the upstream's");
  t.equal(await echo.locator('.key').textContent(), 'echo', "the upstream's name stays the row's name");
  await waitFor('the MCP client lists the own name', async () => (await tools(client)).get('ui__repeat_back') === 'Says your words again.');
  await screenshot(page, 'own-words');

  // whoami cannot take echo's upstream name: the API's message stays on the form.
  await give(page, 'whoami', 'echo', '');
  const refusal = page.locator('.capability-row[data-key="whoami"] .words-form .field-error');
  await refusal.filter({ hasText: 'already has a tool named "echo"' }).waitFor(SLOW);
  t.pass('a taken name is refused with the API message');
  t.ok((await tools(client)).has('ui__whoami'), 'whoami is unchanged');

  await echo.locator('.words summary').click();
  await echo.getByRole('button', { name: "Use the upstream's" }).click();
  await waitFor('the own name is gone from the row', async () => (await echo.locator('.own-name').count()) === 0);
  await waitFor('the MCP client lists the upstream name again', async () => (await tools(client)).get('ui__echo') === 'Returns its arguments.');
  t.equal(await echo.locator('.own-description').count(), 0);
});
