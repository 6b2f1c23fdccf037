import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import type { Knex } from 'knex';
import { chromium, type Browser } from 'playwright-core';
import request from 'supertest';
import { expect } from 'vitest';
import type { AppDeps } from '../../src/app.js';
import { buildTestApp } from '../helpers/factory.js';

// The web tests hash passwords at bcrypt's minimum cost: they check what is done with a hash,
// not its cost (a hash at the production cost, 12, is about 0.3 s of a core here, and the
// suite signs up and in some hundred times). The production cost is checked where it matters:
// accounts.test.ts (the default is 12, and an app given no cost uses it) and the browser test,
// which runs at that cost end to end. The session store's pruning timer is off. Every test
// client is 127.0.0.1: a file creates more Free keys than one network may in a day (20), so
// that limit is raised here and tested in throttle.test.ts.
export const WEB_TEST_OPTIONS = { sessionPruneIntervalS: false, bcryptCost: 4, freeKeysPerIpPerDay: 10_000 } as const;
export const PASSWORD = 'tram stop kirchberg 42 violet';

export async function buildWebApp(db: Knex, overrides: Partial<AppDeps> = {}) {
  return buildTestApp(db, {
    config: { PUBLIC_BASE_URL: 'http://127.0.0.1:3000', TRUST_PROXY: false, STATS_RATE_LIMIT_PER_MINUTE: 1000, PAGES_RATE_LIMIT_PER_MINUTE: 100_000 },
    ...overrides,
    web: { ...WEB_TEST_OPTIONS, ...overrides.web },
  });
}

export type WebApp = Awaited<ReturnType<typeof buildWebApp>>;
export type Agent = ReturnType<typeof request.agent>;

export const uniqueEmail = (tag = 'user') => `${tag}-${randomBytes(4).toString('hex')}@example.com`;

export function csrfFrom(html: string): string {
  const m = /name="_csrf" value="([^"]+)"/.exec(html);
  if (!m) throw new Error(`no CSRF token in the page:\n${html.slice(0, 500)}`);
  return m[1];
}

export function nonceFrom(html: string): string {
  const m = /name="nonce" value="([^"]+)"/.exec(html);
  if (!m) throw new Error('no create-key form in the page');
  return m[1];
}

export function newKeyFrom(html: string): string | null {
  return /<code id="new-key">(lfk_[A-Za-z0-9_-]{43})<\/code>/.exec(html)?.[1] ?? null;
}

// The table row of the active key with this name.
export function keyRow(html: string, name: string): string {
  const row = html.split('<tr>').find((r) => r.includes(`<td data-label="Name">${name}</td>`));
  if (!row) throw new Error(`no key named ${name} in the page`);
  return row.split('</tr>')[0];
}

// The id of the key whose revoke link is shown for a given name.
export function keyIdFrom(html: string, name: string): string {
  const row = keyRow(html, name);
  const m = /\/api-keys\/keys\/(key_[0-9a-f]{16})\/revoke/.exec(row);
  if (!m) throw new Error(`no revoke link for ${name}`);
  return m[1];
}

export function sessionCookie(res: request.Response): string | null {
  const cookies = ([] as string[]).concat(res.headers['set-cookie'] ?? []);
  return cookies.find((c) => c.startsWith('lf_session=')) ?? null;
}

export function csrfCookie(res: request.Response): string | null {
  const cookies = ([] as string[]).concat(res.headers['set-cookie'] ?? []);
  return cookies.find((c) => c.startsWith('lf_csrf=')) ?? null;
}

export async function pageToken(agent: Agent): Promise<string> {
  const res = await agent.get('/api-keys');
  expect(res).toHaveStatus(200);
  return csrfFrom(res.text);
}

export async function signUp(agent: Agent, email: string, password = PASSWORD) {
  const _csrf = await pageToken(agent);
  return agent.post('/api-keys/sign-up').type('form').send({ _csrf, email, password, password_repeat: password });
}

export async function signIn(agent: Agent, email: string, password = PASSWORD) {
  const _csrf = await pageToken(agent);
  return agent.post('/api-keys/sign-in').type('form').send({ _csrf, email, password });
}

export async function signOut(agent: Agent) {
  const _csrf = await pageToken(agent);
  return agent.post('/api-keys/sign-out').type('form').send({ _csrf });
}

export async function createKeyInUi(agent: Agent, name: string) {
  const page = await agent.get('/api-keys');
  const res = await agent.post('/api-keys/keys').type('form').send({ _csrf: csrfFrom(page.text), nonce: nonceFrom(page.text), name });
  return { res, key: newKeyFrom(res.text) };
}

export async function revokeInUi(agent: Agent, keyId: string) {
  const confirm = await agent.get(`/api-keys/keys/${keyId}/revoke`);
  expect(confirm).toHaveStatus(200);
  return agent.post(`/api-keys/keys/${keyId}/revoke`).type('form').send({ _csrf: csrfFrom(confirm.text) });
}

// A signed-in agent with a new account.
export async function signedInAgent(app: WebApp, tag = 'user') {
  const agent = request.agent(app);
  const email = uniqueEmail(tag);
  const res = await signUp(agent, email);
  expect(res).toHaveStatus(303);
  return { agent, email };
}

// Debian's chromium, driven by playwright-core, for the tests in a real browser
// (browser.test.ts, market-browser.test.ts); CHROMIUM_PATH points elsewhere.
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`The browser tests need Debian's chromium at ${CHROMIUM}: apt-get install chromium (.ci/run does)`);
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    timeout: 90_000, // playwright's default (30 s) is short for a first launch on a busy machine
    // playwright-core gives each launch a fresh, empty profile (its own --user-data-dir).
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
  });
}
