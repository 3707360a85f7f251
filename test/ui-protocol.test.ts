// The per-server protocol setting in the web UI, in a real browser against a
// real daemon and fixture upstream: chosen in the Add form, saved, shown on
// the server page with the era the upstream negotiated, changed in Edit; a
// value the API does not take is refused with its message word for word.
import t from 'tap';
import type { Request } from 'playwright-core';
import { FIXTURE } from './fixtures/fixture-servers.js';
import { loggedInPage, openBrowser } from './helpers/browser.js';
import { gatewayWith } from './helpers/gateway.js';

const SLOW = { timeout: 60_000 };
t.setTimeout(300_000);
const context = await openBrowser(t);

const sent = (request: Request): Record<string, unknown> => JSON.parse(request.postData() ?? 'null');

t.test('the protocol select is saved and shown with the negotiated era; an invalid value gets the API message', async (t) => {
  const gateway = await gatewayWith(t, []);
  const page = await loggedInPage(context, gateway);
  await page.getByRole('button', { name: 'Add server' }).click();
  const dialog = page.locator('dialog');
  const protocol = dialog.locator('[name="protocol"]');
  t.same(await page.evaluate(`[...document.querySelectorAll('dialog [name="protocol"] option')].map((option) => option.value)`), ['auto', '2025-11-25', '2026-07-28'], "the API's values");
  t.equal(await protocol.inputValue(), 'auto', 'auto by default');
  await dialog.locator('[name="name"]').fill('era');
  await dialog.locator('[name="transport.command"]').fill(process.execPath);
  await dialog.locator('[name="transport.args"]').fill([FIXTURE, '--name', 'era'].join('\n'));
  await protocol.selectOption('2025-11-25');
  const posted = page.waitForRequest((request) => request.method() === 'POST' && request.url().endsWith('/api/v1/servers'));
  await dialog.getByRole('button', { name: 'Add server' }).click();
  t.equal(sent(await posted).protocol, '2025-11-25', 'the form sends protocol');

  const head = page.locator('[data-page="server"][data-server="era"]');
  const shown = head.locator('.protocol');
  await head.locator('.protocol[data-era="legacy"]').waitFor(SLOW);
  t.equal(await shown.getAttribute('data-protocol'), '2025-11-25');
  t.equal(await shown.textContent(), '2025-11-25 · speaking 2025-11-25 (legacy era)', 'the setting and the era negotiated');
  t.equal((await gateway.api('GET', '/servers/era')).body.protocol, '2025-11-25', 'saved');

  await page.getByRole('button', { name: 'Edit' }).click();
  t.equal(await protocol.inputValue(), '2025-11-25', 'Edit opens with the stored setting');
  await protocol.selectOption('auto');
  const patched = page.waitForRequest((request) => request.method() === 'PATCH');
  await dialog.getByRole('button', { name: 'Save' }).click();
  t.same(sent(await patched), { protocol: 'auto' }, 'an edit sends only the protocol');
  await head.locator('.protocol[data-protocol="auto"][data-era="legacy"]').waitFor(SLOW);
  t.equal(await shown.textContent(), 'auto · speaking 2025-11-25 (legacy era)', 'auto probed and fell back to the legacy era');

  // A value the select does not offer (an old page, a hand-edited form) reaches the API, which says what is wrong.
  await page.getByRole('button', { name: 'Edit' }).click();
  await page.evaluate(`{ const select = document.querySelector('dialog [name="protocol"]'); select.add(new Option('legacy', 'legacy')); select.value = 'legacy'; }`);
  await dialog.getByRole('button', { name: 'Save' }).click();
  const expected = await gateway.api('PATCH', '/servers/era', { protocol: 'legacy' });
  t.equal(expected.status, 422);
  await dialog.locator('.form-message.shown').waitFor(SLOW);
  t.equal(await dialog.locator('.form-message').textContent(), expected.body.error.message, "the API's message, verbatim");
  t.equal(await dialog.locator('[data-error-for="protocol"]').textContent(), 'protocol: must be one of "auto", "2025-11-25", "2026-07-28"', 'beside the protocol select');
  t.equal((await gateway.api('GET', '/servers/era')).body.protocol, 'auto', 'nothing changed');
});
