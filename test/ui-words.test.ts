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

t.test('an open words editor keeps its text, focus and refusal while the rows are rendered again', async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  await gateway.addServer(stdioFixture('ui'));
  const page = await loggedInPage(context, gateway);
  await page.evaluate(`location.hash = '#/servers/ui/tools'`);
  await page.locator('[data-server="ui"] [data-tab="tools"][data-status="live"]').waitFor(SLOW);
  const whoamiSwitch = page.getByRole('switch', { name: 'enable tool whoami' });
  // Another tool switched from elsewhere: the tab's rows are rendered again.
  const rerendered = async (enabled: boolean): Promise<void> => {
    const before = await page.locator('.capability-row[data-key="echo"]').elementHandle();
    await gateway.api('POST', `/servers/ui/capabilities/tool/${enabled ? 'enable' : 'disable'}`, { key: 'whoami' });
    await waitFor('the switch shows the change', async () => (await whoamiSwitch.isChecked()) === enabled);
    await waitFor('the rows were rendered again', async () => !(await before!.evaluate((row) => row.isConnected)));
  };

  const echo = page.locator('.capability-row[data-key="echo"]');
  await echo.locator('.words summary').click();
  await echo.getByLabel('your name for echo').fill('half');
  await echo.getByLabel('your description for echo').click();
  await page.keyboard.type('Typed while');
  await rerendered(false);
  t.equal(await echo.getByLabel('your name for echo').inputValue(), 'half', 'the typed name stays');
  t.ok(await echo.getByLabel('your description for echo').isVisible(), 'the editor stays open');
  await page.keyboard.type(' the list moved.');
  t.equal(await echo.getByLabel('your description for echo').inputValue(), 'Typed while the list moved.', 'the focus stays in the field being typed');

  // A refusal stays on the form too.
  await echo.getByLabel('your name for echo').fill('whoami');
  await echo.getByRole('button', { name: 'Save' }).click();
  const refusal = echo.locator('.words-form .field-error', { hasText: 'already has a tool named "whoami"' });
  await refusal.waitFor(SLOW);
  await rerendered(true);
  await refusal.waitFor(SLOW);
  t.pass('the refusal is shown after the rows are rendered again');

  // A refusal that comes after the rows were rendered again reaches the editor shown then.
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let asked!: () => void;
  const asking = new Promise<void>((resolve) => (asked = resolve));
  await page.route('**/capabilities/tool/words', async (route) => {
    asked();
    await held;
    await route.continue();
  });
  await echo.getByRole('button', { name: 'Save' }).click();
  await asking;
  t.equal(await refusal.count(), 0, 'the earlier refusal is cleared while the save is on its way');
  await rerendered(false);
  release();
  await refusal.waitFor(SLOW);
  t.pass('the refusal is shown on the editor rendered while the API answered');
  await page.unroute('**/capabilities/tool/words');

  // Closed by the user, the draft is dropped: opened again, the fields hold the saved words.
  await echo.locator('.words summary').click();
  await rerendered(false);
  await echo.locator('.words summary').click();
  t.equal(await echo.getByLabel('your name for echo').inputValue(), '', 'a closed editor forgets what was typed');
  t.equal(await echo.getByLabel('your description for echo').inputValue(), '');
});
