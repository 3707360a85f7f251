// The add/edit server form's namespace and session mode, in a real browser
// against a real daemon and a real MCP SDK client: an invalid namespace shows
// the API's message word for word; "No prefix" ("") lists the server's tools
// unprefixed; an edit sends only what changed (PATCH).
import t from 'tap';
import type { Request } from 'playwright-core';
import { FIXTURE } from './fixtures/fixture-servers.js';
import { loggedInPage, openBrowser } from './helpers/browser.js';
import { startGateway, waitFor } from './helpers/gateway.js';

// Long enough for a noisy shared machine.
const SLOW = { timeout: 60_000 };

const context = await openBrowser(t);

const sent = (request: Request): Record<string, unknown> => JSON.parse(request.postData() ?? 'null');

t.test('namespace and session mode in the server form', async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  const client = await gateway.client();
  const toolNames = async (): Promise<string[]> => (await client.listTools()).tools.map((tool) => tool.name);
  const page = await loggedInPage(context, gateway);
  await page.getByRole('button', { name: 'Add server' }).click();
  const dialog = page.locator('dialog');
  const namespace = dialog.locator('[name="namespace"]');
  await dialog.locator('[name="name"]').fill('plain');
  t.equal(await namespace.getAttribute('placeholder'), 'plain', 'the default namespace is the name as typed');
  await dialog.locator('[name="transport.command"]').fill(process.execPath);
  await dialog.locator('[name="transport.args"]').fill([FIXTURE, '--name', 'plain'].join('\n'));
  await namespace.fill('a__b');
  const posted = page.waitForRequest((request) => request.method() === 'POST' && request.url().endsWith('/api/v1/servers'));
  await dialog.getByRole('button', { name: 'Add server' }).click();
  const message = dialog.locator('.form-message.shown');
  await message.waitFor();
  const body = sent(await posted);
  t.same([body.namespace, body.session_mode], ['a__b', 'shared'], 'the form sends namespace and session_mode');
  const expected = await gateway.api('POST', '/servers', body);
  t.equal(expected.status, 422);
  t.equal(await message.textContent(), expected.body.error.message, "the message is the API's, verbatim");
  t.match(await dialog.locator('[data-error-for="namespace"]').textContent(), /^namespace: must not contain "__"/);

  await dialog.locator('[name="namespace.none"]').check();
  t.equal(await namespace.isDisabled(), true, '"No prefix" replaces the typed namespace');
  const added = page.waitForRequest((request) => request.method() === 'POST' && request.url().endsWith('/api/v1/servers'));
  await dialog.getByRole('button', { name: 'Add server' }).click();
  t.equal(sent(await added).namespace, '', 'sent as the empty namespace');
  const head = page.locator('[data-page="server"][data-server="plain"]');
  await head.locator('[data-health="ready"]').waitFor(SLOW);
  t.equal(await head.locator('[data-namespace]').getAttribute('data-namespace'), '', 'the page shows no prefix');
  t.match(await head.locator('[data-namespace]').textContent(), /none: names pass through unprefixed.*shared/);
  await waitFor('echo listed unprefixed', async () => (await toolNames()).includes('echo'));
  t.notOk((await toolNames()).some((name) => name.startsWith('plain__')), 'an MCP client sees its tools unprefixed');
  t.equal((await client.callTool({ name: 'echo', arguments: { via: 'ui' } })).isError ?? false, false, 'and calls them by that name');

  await page.getByRole('button', { name: 'Edit' }).click();
  t.equal(await dialog.locator('[name="namespace.none"]').isChecked(), true, 'the form opens with what is stored');
  await dialog.locator('[name="namespace.none"]').uncheck();
  await namespace.fill('pl');
  await dialog.locator('[name="session_mode"]').selectOption('per_session');
  t.match(await dialog.locator('label.field:has([name="session_mode"]) .hint').textContent(), /one connection per client session/);
  const patched = page.waitForRequest((request) => request.method() === 'PATCH');
  await dialog.getByRole('button', { name: 'Save' }).click();
  t.same(sent(await patched), { namespace: 'pl', session_mode: 'per_session' }, 'an edit sends only the changed fields');
  await head.locator('[data-namespace="pl"][data-session-mode="per_session"]').waitFor();
  const stored = (await gateway.api('GET', '/servers/plain')).body;
  t.same([stored.namespace, stored.session_mode, stored.transport.args.length], ['pl', 'per_session', 3], 'stored; the rest untouched');
  await waitFor('echo listed as pl__echo', async () => (await toolNames()).includes('pl__echo'));

  await page.getByRole('button', { name: 'Edit' }).click();
  await namespace.fill('');
  const reset = page.waitForRequest((request) => request.method() === 'PATCH');
  await dialog.getByRole('button', { name: 'Save' }).click();
  t.same(sent(await reset), { namespace: 'plain' }, 'an empty namespace is the default again: the server name');
  await head.locator('[data-namespace="plain"]').waitFor();
  await page.close();
});
