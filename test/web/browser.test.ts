import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestContext } from '../helpers/context.js';
import { buildTestApp, insertListing } from '../helpers/factory.js';
import { launchChromium, PASSWORD, uniqueEmail } from './helpers.js';

// A real browser (Debian's chromium driven by playwright-core) against the app listening on
// 127.0.0.1, with the production bcrypt cost. Screenshots go to test-output/web/.
const OUT = path.resolve('test-output/web');

const t = useTestContext();
let server: Server;
let base: string;
let browser: Browser;
let listingId: string;

beforeAll(async () => {
  listingId = (
    await insertListing(t.db, {
      title: 'Bright flat with a balcony in Bonnevoie',
      price_eur: 1850,
      area_m2: 64,
      rooms: 2,
      locality: 'Bonnevoie',
      images: [],
    })
  ).id;
  // Listen first: the app's PUBLIC_BASE_URL must carry the port it got.
  server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const app = await buildTestApp(t.db, {
    config: { PUBLIC_BASE_URL: base, TRUST_PROXY: false, STATS_RATE_LIMIT_PER_MINUTE: 1000 },
    web: { sessionPruneIntervalS: false }, // bcrypt at the production cost
  });
  server.on('request', app);
  mkdirSync(OUT, { recursive: true });
  browser = await launchChromium();
}, 300_000);

afterAll(async () => {
  await browser?.close();
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
});

// Every page must load without a Content-Security-Policy violation or a script error.
function watch(page: Page): string[] {
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' && /Content Security Policy|Refused to/i.test(m.text())) problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(String(e)));
  return problems;
}

// The documents a page loaded (method, status, address), for a failure to say how it got where it is.
function trail(page: Page): string[] {
  const seen: string[] = [];
  page.on('response', (r) => {
    if (r.request().resourceType() === 'document') seen.push(`${r.request().method()} ${r.url()} -> ${r.status()}`);
  });
  return seen;
}

// Waits for what a step must show; when it does not come, the failure says what the page
// showed instead and which documents led there.
async function shown(page: Page, selector: string, loaded: string[]) {
  const locator = page.locator(selector);
  try {
    await locator.waitFor();
  } catch (err) {
    const text = await page.locator('body').innerText({ timeout: 2_000 }).catch(() => '(unreadable)');
    throw new Error(`${selector} not shown at ${page.url()} after ${loaded.join(', ')}: ${text.slice(0, 800)}`, { cause: err });
  }
  return locator;
}

async function callApi(key: string): Promise<number> {
  const res = await fetch(`${base}/api/v1/listings`, { headers: { Authorization: `Bearer ${key}` } });
  await res.arrayBuffer();
  return res.status;
}

describe('the key page in Chromium', () => {
  it('sign up, create a key, read it, use it (200), revoke it, use it again (401)', async () => {
    const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
    context.setDefaultTimeout(90_000); // each step waits for its condition; 30 s can pass on a busy machine
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
    const page = await context.newPage();
    const problems = watch(page);
    const loaded = trail(page);
    const email = uniqueEmail('browser');

    await page.goto(`${base}/api-keys`);
    await expect(page.title()).resolves.toContain('API keys');
    await page.screenshot({ path: path.join(OUT, 'api-keys-signed-out.png'), fullPage: true });
    await page.getByLabel('Email', { exact: true }).nth(1).fill(email);
    await page.locator('#signup-password').fill(PASSWORD);
    await page.getByLabel('Repeat the password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.waitForURL(`${base}/api-keys`);
    expect(await page.locator('main').innerText()).toContain(`Signed in as ${email}`);

    await page.getByLabel('Name').fill('Browser test');
    await page.getByRole('button', { name: 'Create key' }).click();
    const keyBox = await shown(page, '#new-key', loaded);
    const key = (await keyBox.innerText()).trim();
    expect(key).toMatch(/^lfk_[A-Za-z0-9_-]{43}$/);
    expect(await page.locator('.new-key .warning').innerText()).toContain('only time it is shown');

    // The copy button (shown by the external script) puts the key on the clipboard.
    const copy = page.getByRole('button', { name: 'Copy' });
    await expect(copy.isVisible()).resolves.toBe(true);
    await copy.click();
    await page.locator('#copy-status', { hasText: 'Copied' }).waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(key);

    await page.screenshot({ path: path.join(OUT, 'api-keys.png'), fullPage: true });

    expect(await callApi(key)).toBe(200);

    // Reloading the page (the browser sends the form again) shows no key and makes none.
    await page.reload();
    await page.waitForURL(`${base}/api-keys`);
    expect(await page.locator('#new-key').count()).toBe(0);
    expect(await page.locator('main').innerText()).not.toContain(key);
    expect(await page.locator('table.keys tbody tr').count()).toBe(1);

    await page.getByRole('link', { name: 'Revoke…' }).click();
    await page.getByRole('button', { name: 'Revoke this key' }).click();
    await page.waitForURL(`${base}/api-keys`);
    expect(await page.locator('.notice').innerText()).toContain('is revoked');
    await page.screenshot({ path: path.join(OUT, 'api-keys-revoked.png'), fullPage: true });

    expect(await callApi(key)).toBe(401);
    expect(problems).toEqual([]);
    await context.close();
  }, 300_000); // an outer bound for a hang: each step waits for its condition

  it('works without JavaScript and reads well on a phone', async () => {
    const context = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 390, height: 844 }, isMobile: true, deviceScaleFactor: 2 });
    context.setDefaultTimeout(90_000);
    const page = await context.newPage();
    const loaded = trail(page);
    const email = uniqueEmail('phone');
    await page.goto(`${base}/api-keys`);
    // A weak password first: the error appears next to its field.
    await page.locator('#signup-email').fill(email);
    await page.locator('#signup-password').fill('password1234');
    await page.locator('#signup-password_repeat').fill('password1234');
    await page.getByRole('button', { name: 'Create account' }).click();
    expect(await page.locator('#signup-password-error').innerText()).toContain('too common');
    await page.locator('#signup-password').fill(PASSWORD);
    await page.locator('#signup-password_repeat').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.waitForURL(`${base}/api-keys`);
    await page.getByLabel('Name').fill('Phone key');
    await page.getByRole('button', { name: 'Create key' }).click();
    const key = (await (await shown(page, '#new-key', loaded)).innerText()).trim();
    expect(key).toMatch(/^lfk_/);
    expect(await page.getByRole('button', { name: 'Copy' }).isVisible()).toBe(false); // needs JS: hidden
    // Nothing wider than the screen.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await page.screenshot({ path: path.join(OUT, 'api-keys-phone.png'), fullPage: true });

    await page.goto(`${base}/listings/${listingId}`);
    expect(await page.locator('h1').innerText()).toBe('Bright flat with a balcony in Bonnevoie');
    await page.screenshot({ path: path.join(OUT, 'listing-phone.png'), fullPage: true });
    expect(await callApi(key)).toBe(200);
    await context.close();
  }, 300_000); // an outer bound for a hang: each step waits for its condition
});
