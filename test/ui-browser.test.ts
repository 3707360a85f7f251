// The web UI in a real browser (Debian's chromium through playwright-core)
// against a real daemon, real fixture upstreams and a real MCP SDK client:
// the login link, switches that reach /mcp, failed vs empty (R8), offline
// known keys (R6), health that changes live, and the API's own validation
// messages in the add-server form, an upstream's escapes and bidi marks shown
// as text. COFFER_UI_SCREENSHOTS=docs also saves the screenshots of
// docs/screenshots/.
import t from 'tap';
import type { Page } from 'playwright-core';
import { escapeControls } from '../src/protocol/untrusted-text.js';
import { FIXTURE, HOSTILE_UPSTREAM, serverConfig, startNetworkFixture, stdioFixture, networkConfig, type RunningFixture } from './fixtures/fixture-servers.js';
import { HOSTILE } from './fixtures/hostile-names.js';
import { loggedInPage, loginCode, openBrowser, screenshot } from './helpers/browser.js';
import { startGateway, waitFor, type Gateway } from './helpers/gateway.js';

const COULD_NOT_LOAD = 'could not load — test the connection or refresh';
// Long enough for a noisy shared machine.
const SLOW = { timeout: 60_000 };

// A browser, five daemons and their upstreams on two shared cores: more than tap's default per file.
t.setTimeout(900_000);
const context = await openBrowser(t);

const toolNames = async (client: Awaited<ReturnType<Gateway['client']>>): Promise<string[]> => (await client.listTools()).tools.map((tool) => tool.name);

async function openServer(page: Page, name: string, tab = 'tools'): Promise<void> {
  await page.evaluate(`location.hash = '#/servers/${name}/${tab}'`);
  await page.locator(`[data-page="server"][data-server="${name}"] [data-tab="${tab}"]:not([data-status="loading"])`).waitFor(SLOW);
}

t.test('the login link works once and leaves no code behind', async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  const code = await loginCode(gateway);
  const page = await context.newPage();
  await page.goto(`${gateway.url}/#login=${code}`);
  await page.locator('[data-page="servers"]').waitFor();
  t.notMatch(page.url(), /login=/, 'the code is gone from the address bar');
  await page.goBack();
  t.notMatch(page.url(), /login=/, 'nor the history entry before it');
  await page.goForward();
  t.notMatch(page.url(), /login=/, 'nor the one it was loaded in');
  await page.reload();
  await page.locator('[data-page="servers"]').waitFor();
  t.pass('a reload stays logged in (this tab)');

  const second = await context.newPage();
  await second.goto(`${gateway.url}/#login=${code}`);
  await second.locator('[data-page="login"]').waitFor();
  t.match(await second.locator('.login .notice').textContent(), /already used or has expired: run 'coffer ui'/);
  await screenshot(second, 'login-link-used');
  await second.goto(`${gateway.url}/`);
  await second.locator('[data-page="login"]').waitFor();
  t.pass('without a link: the login page, never the token');

  // A rotated token ends the session: the login page, and the live link stops for good (no reconnecting with a dead token).
  let sockets = 0;
  page.on('websocket', () => sockets++);
  t.equal((await gateway.api('POST', '/daemon/rotate-token')).status, 200);
  await page.locator('[data-page="login"]', { hasText: 'The session ended' }).waitFor(SLOW);
  await page.evaluate('new Promise((resolve) => setTimeout(resolve, 1_500))');
  t.equal(sockets, 0, 'no admin WebSocket opened after the session ended');
  await Promise.all([page.close(), second.close()]);
});

t.test('a tool switched off in the UI vanishes from an MCP client\'s tools/list', async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  await gateway.addServer(stdioFixture('alpha', ['--prompts', '--resources']));
  const client = await gateway.client();
  t.ok((await toolNames(client)).includes('alpha__echo'));

  const page = await loggedInPage(context, gateway);
  await page.locator('[data-server="alpha"] a.name').click();
  await page.locator('[data-tab="tools"][data-status="live"]').waitFor(SLOW);
  t.equal(await page.locator('.capability-row').count(), 7, 'every tool of the fixture, live');
  t.match(await page.locator('.capability-row[data-key="echo"] .description').textContent(), 'Returns its arguments.');

  const echo = page.getByRole('switch', { name: 'enable tool echo' });
  await echo.uncheck();
  await waitFor('echo gone from tools/list', async () => !(await toolNames(client)).includes('alpha__echo'));
  t.pass('alpha__echo is no longer listed through /mcp');
  const denied = await client.callTool({ name: 'alpha__echo', arguments: {} }).then(() => null, (error: any) => error);
  t.equal(denied?.code, -32000, 'and a call to it is rejected (R10)');
  await page.locator('.activity[data-type="preference"]').first().waitFor();
  const audit = await gateway.api('GET', '/audit?server=alpha&event_type=capability_disabled');
  t.equal(audit.body.entries[0]?.actor, 'ui', 'audited as a change from the UI');
  await screenshot(page, 'server-tools');

  await page.getByRole('tab', { name: /Prompts/ }).click();
  await page.locator('[data-tab="prompts"][data-status="live"]').waitFor();
  await page.getByRole('switch', { name: 'enable prompt greet' }).uncheck();
  await waitFor('greet gone from prompts/list', async () => !(await client.listPrompts()).prompts.some((prompt) => prompt.name === 'alpha__greet'));

  await page.getByRole('tab', { name: /Tools/ }).click();
  await echo.check();
  await waitFor('echo back in tools/list', async () => (await toolNames(client)).includes('alpha__echo'));
  t.pass('switched on again: listed again');

  // A switch the API refuses goes back, that switch only, with the API's message: even when the rows were
  // rendered again while it waited (here by another switch's live event).
  let refuse!: () => void;
  const refusal = new Promise<void>((resolve) => (refuse = resolve));
  const disablePath = /\/api\/v1\/servers\/alpha\/capabilities\/tool\/disable$/;
  await page.route(disablePath, async (route) => {
    if (!route.request().postData()?.includes('"whoami"')) return route.continue();
    await refusal;
    await route.fulfill({ status: 503, contentType: 'application/json', body: JSON.stringify({ error: { code: 'DAEMON_NOT_READY', message: 'refused for this test' } }) });
  });
  const whoamiSwitch = page.getByRole('switch', { name: 'enable tool whoami' });
  await whoamiSwitch.uncheck();
  const switched = page.locator('.activity[data-type="preference"]');
  const before = await switched.count();
  await echo.uncheck();
  await waitFor('the echo switch event', async () => (await switched.count()) > before);
  t.equal(await whoamiSwitch.isChecked(), false, 'the waiting switch keeps its asked state through a re-render');
  refuse();
  await page.locator('.capability-row[data-key="whoami"] .field-error', { hasText: 'refused for this test' }).waitFor();
  t.equal(await whoamiSwitch.isChecked(), true, 'the refused switch is back on');
  t.equal(await whoamiSwitch.isDisabled(), false, 'and usable');
  t.equal(await echo.isChecked(), false, 'the other switch is untouched');
  await page.unroute(disablePath);
  await echo.check();
  await waitFor('echo listed again', async () => (await toolNames(client)).includes('alpha__echo'));

  await page.getByRole('link', { name: 'Invocations' }).click();
  await page.locator('[data-page="invocations"] tbody tr[data-status="denied"]').first().waitFor(SLOW);
  t.pass('the denied call is in the log');
  await client.callTool({ name: 'alpha__echo', arguments: { hello: 'ui' } });
  await page.locator('[data-page="invocations"] tbody tr.fresh[data-status="ok"]').first().waitFor(SLOW);
  t.pass('a new call appears as it happens');
  await page.getByRole('combobox', { name: 'status' }).selectOption('denied');
  await waitFor('only denied calls', async () => (await page.locator('tbody tr').count()) > 0 && (await page.locator('tbody tr:not([data-status="denied"])').count()) === 0);
  t.pass('the invocation log filters by status');
  await page.getByRole('combobox', { name: 'status' }).selectOption({ label: 'any status' });
  await page.locator('tbody tr[data-status="ok"]').first().waitFor();
  await screenshot(page, 'invocations');

  // Answers land in any order: a slow earlier load (denied only, held back) must not overwrite the later one (any status).
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const deniedOnly = /\/api\/v1\/invocations\?.*status=denied/;
  await page.route(deniedOnly, async (route) => {
    await held;
    await route.continue();
  });
  await page.getByRole('combobox', { name: 'status' }).selectOption('denied');
  await Promise.all([
    page.waitForResponse((response) => response.url().includes('/api/v1/invocations?') && !response.url().includes('status=')),
    page.getByRole('combobox', { name: 'status' }).selectOption({ label: 'any status' }),
  ]);
  await page.locator('tbody tr[data-status="ok"]').first().waitFor();
  const stale = page.waitForResponse((response) => deniedOnly.test(response.url()));
  release();
  await stale;
  await page.evaluate('new Promise((resolve) => setTimeout(resolve, 100))');
  t.ok((await page.locator('tbody tr[data-status="ok"]').count()) > 0, 'the stale denied-only answer was ignored');
  await page.unroute(deniedOnly);

  // A call made a moment before the page opens: its live event came before the page did, and the daemon writes calls
  // in batches; GET /invocations hands the pending ones to the writer first, so the page shows it (once).
  await page.getByRole('link', { name: 'Servers' }).click();
  await page.locator('[data-page="servers"]').waitFor();
  await client.callTool({ name: 'alpha__whoami', arguments: {} });
  await page.getByRole('link', { name: 'Invocations' }).click();
  const whoami = page.locator('[data-page="invocations"] tbody tr[data-status="ok"]', { has: page.locator('td.mono', { hasText: /^whoami$/ }) });
  await whoami.first().waitFor(SLOW);
  t.pass('a call made just before is in the log page');
  await Promise.all([page.waitForResponse((response) => response.url().includes('/api/v1/invocations?')), page.getByRole('button', { name: 'Apply' }).click()]);
  await page.evaluate('new Promise((resolve) => setTimeout(resolve, 50))');
  t.equal(await whoami.count(), 1, 'and once, after a reload');
  await page.close();
});

t.test('R8 in the UI: "could not load" for a failing upstream, "no prompts discovered" for one that has none', async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  await gateway.addServer(stdioFixture('broken', ['--fail-lists=-1']));
  await gateway.addServer(stdioFixture('toolsonly'));
  const page = await loggedInPage(context, gateway);

  await openServer(page, 'toolsonly', 'prompts');
  const empty = page.locator('[data-tab="prompts"]');
  t.equal(await empty.getAttribute('data-status'), 'empty');
  t.match(await empty.locator('.tab-state').textContent(), /^no prompts discovered/);
  t.notMatch(await empty.textContent(), /could not load/);
  await screenshot(page, 'tab-empty');
  await page.getByRole('button', { name: 'Refresh' }).click();
  await page.locator('[data-result="refresh"]', { hasText: 'Refreshed at' }).waitFor(SLOW);
  t.match(await page.locator('[data-result="refresh"]').textContent(), /: 7 tools, 0 resources, 0 prompts$/);
  await page.getByRole('button', { name: 'Test connection' }).click();
  await page.locator('[data-result="test"][data-ok="true"]').waitFor(SLOW);
  t.match(await page.locator('[data-result="test"]').textContent(), /^Connection ok in \d+ ms: toolsonly 1\.0\.0, protocol \S+; first page lists 7 tools/);
  // A change to another server (a live event, then the servers list read again) leaves this page's head as it was built.
  await page.evaluate(`document.querySelector('.server-head h1').dataset.kept = 'yes'`);
  await Promise.all([
    page.waitForResponse((response) => response.url().endsWith('/api/v1/servers') && response.request().method() === 'GET'),
    gateway.api('PATCH', '/servers/broken', { description: 'still broken' }),
  ]);
  await page.evaluate('new Promise((resolve) => setTimeout(resolve, 100))');
  t.equal(await page.locator('.server-head h1[data-kept="yes"]').count(), 1, 'the head is not rebuilt for another server');

  await openServer(page, 'broken', 'prompts');
  const failed = page.locator('[data-tab="prompts"]');
  t.equal(await failed.getAttribute('data-status'), 'failed');
  t.match(await failed.locator('.tab-state strong').textContent(), COULD_NOT_LOAD);
  const api = await gateway.api('GET', '/servers/broken/capabilities');
  t.equal(await failed.locator('.error-text').textContent(), api.body.error.message, "with the daemon's own reason");
  t.notMatch(await failed.textContent(), /no prompts discovered/, 'failed is never shown as empty');
  await page.getByRole('tab', { name: /Tools/ }).click();
  t.equal(await page.locator('[data-tab="tools"]').getAttribute('data-status'), 'failed', 'every tab says so');
  // Each failed list evicts the connection (R7); the page must not answer the reconnect by listing again.
  const reconnects = page.locator('.activity[data-type="health"]', { hasText: 'connecting' }).filter({ has: page.locator('a.server', { hasText: /^broken$/ }) });
  const before = await reconnects.count();
  await new Promise((resolve) => setTimeout(resolve, 5_000));
  t.equal(await reconnects.count(), before, 'an open page does not keep a failing upstream reconnecting');
  await screenshot(page, 'tab-failed');
  await page.getByRole('button', { name: 'Test connection' }).click();
  await page.locator('[data-result="test"][data-ok="false"]').waitFor(SLOW);
  t.match(await page.locator('[data-result="test"]').textContent(), /^Connection failed: .*list failure as asked/);
  await page.close();
});

t.test('health changes live when an upstream is killed and comes back; offline, the known tools stay switchable (R6)', async (t) => {
  let fixture: RunningFixture = await startNetworkFixture('http', ['--name', 'remote']);
  const port = new URL(fixture.url).port;
  const gateway = await startGateway({ tuning: { backoffInitialMs: 100, backoffMaxMs: 400 } });
  t.teardown(async () => {
    await gateway.close();
    await fixture.kill();
  });
  await gateway.addServer(stdioFixture('steady'));
  await gateway.addServer(networkConfig('remote', 'http', fixture.url, { connect_ms: 1_000, request_ms: 2_000 }));
  t.equal((await gateway.api('GET', '/servers/remote/capabilities')).status, 200, 'listed once: its tools are known');
  const page = await loggedInPage(context, gateway);
  const remoteReady = page.locator('[data-server="remote"] [data-health="ready"]');
  await remoteReady.waitFor();
  // Gone if the page ever reloads: what follows must arrive over the WebSocket.
  await page.evaluate(`window.marker = 'same page'`);

  await fixture.kill();
  await remoteReady.waitFor({ state: 'detached', ...SLOW });
  const down = await page.locator('[data-server="remote"] [data-health]').getAttribute('data-health');
  t.ok(down === 'backoff' || down === 'connecting' || down === 'failed', `shown as ${down}`);
  await page.locator('[data-server="remote"] [data-health="backoff"]').waitFor(SLOW);
  t.match(await page.locator('[data-server="remote"] .last-error').textContent(), /\S/, 'with the last error');
  t.equal(await page.locator('[data-server="steady"] [data-health]').getAttribute('data-health'), 'ready', 'the other server is untouched');
  t.equal(await page.evaluate('window.marker'), 'same page', 'pushed over the admin WebSocket: no reload');
  await page.locator('.activity[data-type="health"]', { hasText: 'remote' }).first().waitFor();
  await screenshot(page, 'servers');

  await openServer(page, 'remote', 'tools');
  const tools = page.locator('[data-tab="tools"]');
  t.equal(await tools.getAttribute('data-status'), 'failed');
  t.match(await tools.locator('.tab-state strong').textContent(), COULD_NOT_LOAD);
  t.equal(await tools.locator('.capability-row.not-live').count(), 7, 'every known tool, marked not live');
  t.match(await tools.locator('.capability-row[data-key="echo"] .last-seen').textContent(), /^last seen \d+ (s|min) ago$/);
  t.equal(await tools.locator('.capability-row[data-key="echo"] .schema').count(), 0, 'no schema when not live');
  await page.getByRole('switch', { name: 'enable tool whoami' }).uncheck();
  await waitFor('whoami switched off while offline', async () => {
    const view = await gateway.api('GET', '/servers/remote/capabilities');
    return view.body.error?.details?.known?.find((row: any) => row.capability_key === 'whoami')?.enabled === false;
  });
  await screenshot(page, 'server-offline');

  fixture = await startNetworkFixture('http', ['--name', 'remote', '--port', port]);
  await page.locator('[data-page="server"] [data-health="ready"]').waitFor(SLOW);
  await page.locator('[data-tab="tools"][data-status="live"]').waitFor(SLOW);
  t.pass('back: ready, and the tools are live again without a reload');
  t.equal(await page.locator('.capability-row.not-live').count(), 0);
  t.equal(await page.getByRole('switch', { name: 'enable tool whoami' }).isChecked(), false, 'the switch made offline held');
  t.equal(await page.evaluate('window.marker'), 'same page');
  await page.close();
});

t.test('adding a server with an invalid config shows the API\'s message; a valid one is added', async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  const page = await loggedInPage(context, gateway);
  await page.getByRole('button', { name: 'Add server' }).click();
  const dialog = page.locator('dialog');
  await dialog.locator('[name="name"]').fill('bad__name');
  await dialog.locator('[name="transport.type"]').selectOption('http');
  await dialog.locator('[name="transport.url"]').fill('not a url');
  await dialog.locator('[name="timeouts.connect_ms"]').fill('soon');
  await dialog.getByRole('button', { name: 'Add server' }).click();
  const message = dialog.locator('.form-message.shown');
  await message.waitFor();

  const expected = await gateway.api('POST', '/servers', { name: 'bad__name', description: '', transport: { type: 'http', url: 'not a url', headers: {} }, auto_enable_new_capabilities: true, timeouts: { connect_ms: 'soon' } });
  t.equal(expected.status, 422);
  t.equal(await message.textContent(), expected.body.error.message, 'the message is the API\'s, verbatim');
  t.match(await dialog.locator('[data-error-for="name"]').textContent(), /^name: must not contain "__"/);
  t.match(await dialog.locator('[data-error-for="transport.url"]').textContent(), /^transport\.url: is not a valid URL/);
  t.match(await dialog.locator('[data-error-for="timeouts.connect_ms"]').textContent(), /^timeouts\.connect_ms: must be an integer/);
  t.equal((await gateway.api('GET', '/servers')).body.servers.length, 0, 'nothing was registered');
  await screenshot(page, 'add-server-invalid');

  await dialog.locator('[name="name"]').fill('added');
  await dialog.locator('[name="transport.type"]').selectOption('stdio');
  await dialog.locator('[name="transport.command"]').fill(process.execPath);
  await dialog.locator('[name="transport.args"]').fill([FIXTURE, '--name', 'added'].join('\n'));
  await dialog.locator('[name="timeouts.connect_ms"]').fill('');
  await dialog.getByRole('button', { name: 'Add server' }).click();
  await page.locator('[data-page="server"][data-server="added"] [data-health="ready"]').waitFor(SLOW);
  await page.locator('[data-tab="tools"][data-status="live"]').waitFor(SLOW);
  t.pass('added, and its tools listed live');

  await page.getByRole('button', { name: 'Edit' }).click();
  await dialog.locator('[name="description"]').fill('added from the browser');
  await dialog.getByRole('button', { name: 'Save' }).click();
  await page.locator('[data-page="server"] .description', { hasText: 'added from the browser' }).waitFor();
  t.equal((await gateway.api('GET', '/servers/added')).body.description, 'added from the browser', 'edited through PATCH');

  await page.evaluate(`location.hash = '#/servers'`);
  await page.getByRole('button', { name: 'Add server' }).click();
  await dialog.locator('[name="name"]').fill('added');
  await dialog.locator('[name="transport.command"]').fill('true');
  await dialog.getByRole('button', { name: 'Add server' }).click();
  await message.waitFor();
  t.match(await message.textContent(), /already/, 'a duplicate name: the 409 message');
  await dialog.getByRole('button', { name: 'Cancel' }).click();

  await page.locator('[data-server="added"] a.name').click();
  page.once('dialog', (question) => void question.accept());
  await page.getByRole('button', { name: 'Remove' }).click();
  await page.locator('[data-page="servers"]').waitFor();
  await page.locator('[data-server="added"]').waitFor({ state: 'detached' });
  t.equal((await gateway.api('GET', '/servers/added')).status, 404, 'removed');
  await page.close();
});

t.test("an upstream's control characters and bidi marks show as \\xNN / \\uNNNN text: nothing reads reordered", async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  await gateway.addServer(serverConfig('hostile', { type: 'stdio', command: process.execPath, args: [HOSTILE_UPSTREAM], env: {}, cwd: null }));
  const page = await loggedInPage(context, gateway);
  await openServer(page, 'hostile', 'tools');
  t.same((await page.locator('.capability-row .key').allTextContents()).sort(), [HOSTILE.tool, HOSTILE.bidiTool].map((key) => escapeControls(key)).sort(), 'the names');
  t.ok((await page.locator('.capability-row .description').allTextContents()).includes(escapeControls(HOSTILE.bidiDescription)), 'the description');

  const client = await gateway.client();
  await client.callTool({ name: `hostile__${HOSTILE.bidiTool}`, arguments: {} });
  await page.locator('.activity[data-type="invocation"]').waitFor(SLOW);
  await page.getByRole('button', { name: 'Test connection' }).click();
  await page.locator('[data-result="test"][data-ok="true"]').waitFor(SLOW);
  t.match(await page.locator('[data-result="test"]').textContent(), escapeControls(HOSTILE.serverName), "the upstream's own name");

  // Every text on the page, the schemas and word editors opened, and the attributes a person reads.
  const RAW = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;
  const shownText = (): Promise<string> =>
    page.evaluate(`(() => {
      for (const details of document.querySelectorAll('details')) details.open = true;
      const attributes = [...document.querySelectorAll('[placeholder], [title]')].map((element) => (element.getAttribute('placeholder') ?? '') + ' ' + (element.getAttribute('title') ?? ''));
      return [document.body.innerText, ...attributes].join('\\n');
    })()`);
  const onServerPage = await shownText();
  t.notMatch(onServerPage, RAW, 'no raw control or bidi mark on the server page and its activity');
  t.match(await page.locator('.activity[data-type="invocation"] .text').textContent(), escapeControls(HOSTILE.bidiTool), 'the call, in the activity');

  await page.evaluate(`location.hash = '#/invocations'`);
  await page.locator('[data-page="invocations"] tbody tr').first().waitFor(SLOW);
  t.notMatch(await shownText(), RAW, 'none on the invocations page');
  await page.close();
});
