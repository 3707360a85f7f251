// A real browser for the web UI tests: Debian's chromium driven by
// playwright-core, headless, with a fresh profile per test file. The page is
// logged in the way a person is: through a one-time link from the API.
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import type { Test } from 'tap';
import { PROJECT_ROOT } from '../../src/paths.js';
import type { Gateway } from './gateway.js';

export const CHROMIUM = process.env.COFFER_CHROMIUM ?? '/usr/bin/chromium';

const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** A browser with its own temporary profile, closed and removed when the test ends. */
export async function openBrowser(t: Test): Promise<BrowserContext> {
  if (!existsSync(CHROMIUM)) throw new Error(`no chromium at ${CHROMIUM}: install Debian's chromium (.ci/run does) or set COFFER_CHROMIUM`);
  const profile = mkdtempSync(join(tmpdir(), 'coffer-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1360, height: 860 },
  });
  // The machine is shared and slow at times.
  context.setDefaultTimeout(30_000);
  t.teardown(async () => {
    await context.close().catch(() => undefined);
    rmSync(profile, { recursive: true, force: true });
  });
  return context;
}

/** A one-time login code from the daemon, as `coffer ui` gets it. */
export async function loginCode(gateway: Gateway): Promise<string> {
  const issued = await gateway.api('POST', '/ui/login-codes');
  if (issued.status !== 201) throw new Error(`no login code: ${JSON.stringify(issued.body)}`);
  return issued.body.code as string;
}

/** A new tab opened through a one-time login link, on the servers page. */
export async function loggedInPage(context: BrowserContext, gateway: Gateway): Promise<Page> {
  const page = await context.newPage();
  await page.goto(`${gateway.url}/#login=${await loginCode(gateway)}`);
  await page.locator('[data-page="servers"]').waitFor();
  return page;
}

/**
 * Saves a PNG of the page under $COFFER_UI_SCREENSHOTS (docs/screenshots when
 * set to "docs"); does nothing otherwise, so test runs leave the tree alone.
 */
export async function screenshot(page: Page, name: string): Promise<void> {
  const target = process.env.COFFER_UI_SCREENSHOTS;
  if (!target) return;
  const dir = target === 'docs' ? join(PROJECT_ROOT, 'docs', 'screenshots') : target;
  mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: join(dir, `${name}.png`) });
}
