import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { sameCsrfToken } from '../../src/web/csrf.js';
import { DEFAULT_WEB_OPTIONS, webOptions } from '../../src/web/options.js';
import { hashCost } from '../../src/web/passwords.js';
import { useTestContext } from '../helpers/context.js';
import { rawExchange } from '../helpers/raw-http.js';
import { buildTestApp, createKey } from '../helpers/factory.js';
import {
  buildWebApp,
  csrfCookie,
  csrfFrom,
  PASSWORD,
  pageToken,
  sessionCookie,
  signedInAgent,
  signIn,
  signOut,
  signUp,
  uniqueEmail,
  WEB_TEST_OPTIONS,
} from './helpers.js';

const t = useTestContext({ app: 'web' });

const signedInAs = (html: string, email: string) => html.includes(`Signed in as <strong>${email}</strong>`);

describe('the signed-out page', () => {
  it('offers labelled sign-in and sign-up forms with CSRF tokens, links to the docs and the README', async () => {
    const res = await request(t.app).get('/api-keys');
    expect(res).toHaveStatus(200);
    expect(res.headers['content-type']).toMatch(/^text\/html; charset=utf-8/);
    expect(res.headers['cache-control']).toBe('no-store, no-transform');
    for (const id of ['signin-email', 'signin-password', 'signup-email', 'signup-password', 'signup-password_repeat']) {
      expect(res.text).toContain(`<label for="${id}">`);
      expect(res.text).toContain(`id="${id}"`);
    }
    expect(res.text).toMatch(/<form method="post" action="\/api-keys\/sign-in"[^>]*>\s*<input type="hidden" name="_csrf" value="[0-9a-f]{64}\.[0-9a-f]{64}">/);
    expect(res.text).toContain('href="/docs"');
    expect(res.text).toContain('README');
    expect(res.text).not.toMatch(/<script(?![^>]*\bsrc=)/); // no inline script
    expect(res.text).not.toContain('style=');
    // Never compressed: a page with secrets must not leak them through its length (BREACH).
    const gz = await request(t.app).get('/api-keys').set('Accept-Encoding', 'gzip, br');
    expect(gz.headers['content-encoding']).toBeUndefined();
  });

  it('another letter case of /api-keys (its cookies are not sent there) leads to the page: a GET is redirected, a form is not found, never a 500', async () => {
    for (const [path, to] of [['/API-KEYS', '/api-keys'], ['/Api-Keys?notice=sign-in', '/api-keys?notice=sign-in'], ['/API-KEYS/keys/key_d1b1118fd2e164a7/revoke', '/api-keys/keys/key_d1b1118fd2e164a7/revoke']]) {
      const res = await request(t.app).get(path);
      expect(res).toHaveStatus(308);
      expect(res.headers.location).toBe(to);
    }
    const { agent } = await signedInAgent(t.app, 'case');
    const post = await agent.post('/API-KEYS/keys').type('form').send({ name: 'x' });
    expect(post).toHaveStatus(404);
    expect(post.headers['content-type']).toMatch(/^text\/html/);
    expect((await agent.get('/API-KEYS/keys/key_d1b1118fd2e164a7/revoke'))).toHaveStatus(308);
  });

  // An outside probe: `GET http://host/api-keys` (the absolute form, which proxies send) was
  // redirected to `/api-keyshttp://host`, and the forms posted so were not found.
  it('is served to a request in the absolute form, its forms too', async () => {
    const { port } = await t.listen();
    const raw = (head: string) => rawExchange(port, `${head}\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
    expect(await raw(`GET http://127.0.0.1:${port}/api-keys HTTP/1.1`)).toMatch(/^HTTP\/1\.1 200 [^]*action="\/api-keys\/sign-in"/);
    expect(await raw(`GET http://127.0.0.1:${port}/API-KEYS?notice=sign-in HTTP/1.1`)).toMatch(/^HTTP\/1\.1 308 [^]*\r\nLocation: \/api-keys\?notice=sign-in\r\n/i);
    // A form without its CSRF token: refused as such (403), not "not found".
    expect(await raw(`POST http://127.0.0.1:${port}/api-keys/sign-in HTTP/1.1`)).toMatch(/^HTTP\/1\.1 403 /);
    // Neither a path nor an absolute URL: a 400 that says so.
    const bad = await raw('GET api-keys HTTP/1.1');
    expect(bad).toMatch(/^HTTP\/1\.1 400 /);
    expect(bad).toContain('the request target must be a path beginning with /');
  });

  it('sets no session cookie, only the CSRF cookie: HttpOnly, SameSite=Strict, scoped to /api-keys, not Secure over http', async () => {
    const res = await request(t.app).get('/api-keys');
    expect(sessionCookie(res)).toBeNull();
    const cookie = csrfCookie(res);
    expect(cookie).not.toBeNull();
    expect(cookie).toMatch(/; HttpOnly/i);
    expect(cookie).toMatch(/; SameSite=Strict/i);
    expect(cookie).toMatch(/; Path=\/api-keys/i);
    expect(cookie).not.toMatch(/; Secure/i);
  });

  it('sets a session cookie at sign-up that is HttpOnly, SameSite=Lax, scoped to /api-keys, not Secure over http', async () => {
    const cookie = sessionCookie(await signUp(request.agent(t.app), uniqueEmail('cookie')));
    expect(cookie).not.toBeNull();
    expect(cookie).toMatch(/; HttpOnly/i);
    expect(cookie).toMatch(/; SameSite=Lax/i);
    expect(cookie).toMatch(/; Path=\/api-keys/i);
    expect(cookie).not.toMatch(/; Secure/i);
  });

  it('has strict security headers; the JSON API keeps its own behaviour', async () => {
    const res = await request(t.app).get('/api-keys');
    const csp = res.headers['content-security-policy'];
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(res.headers['referrer-policy']).toBe('no-referrer');
    expect(res.headers['x-frame-options']).toBe('DENY');
    expect(res.headers['x-content-type-options']).toBe('nosniff');

    const api = await request(t.app).get('/api/v1/listings');
    expect(api).toHaveStatus(401);
    expect(api.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(api.headers['content-security-policy']).toBeUndefined();
    expect(api.headers['set-cookie']).toBeUndefined();
    const stats = await request(t.app).get('/api/v1/stats');
    expect(stats).toHaveStatus(200);
    expect(stats.headers['content-security-policy']).toBeUndefined();
    expect(stats.headers['referrer-policy']).toBeUndefined();
  });

  it('serves its one stylesheet and the copy script from this server', async () => {
    const page = await request(t.app).get('/api-keys');
    const css = /<link rel="stylesheet" href="(\/web\/style\.[0-9a-f]+\.css)">/.exec(page.text)?.[1];
    expect(css).toBeDefined();
    const res = await request(t.app).get(css!);
    expect(res).toHaveStatus(200);
    expect(res.headers['content-type']).toMatch(/^text\/css/);
    expect(res.headers['cache-control']).toContain('immutable');
    expect(await request(t.app).get('/web/nothing.css')).toHaveStatus(404);
  });
});

describe('sign-up', () => {
  it('creates the account, signs in with a new session id and stores a bcrypt hash', async () => {
    const agent = request.agent(t.app);
    expect(sessionCookie(await agent.get('/api-keys'))).toBeNull();
    const email = uniqueEmail('Signup');
    const res = await signUp(agent, email);
    expect(res).toHaveStatus(303);
    expect(res.headers.location).toBe('/api-keys');
    const first = sessionCookie(res);
    expect(first, 'a session cookie at sign-up').not.toBeNull();

    const page = await agent.get('/api-keys');
    // The address is kept in its normalized form (lower case), and shown so.
    expect(signedInAs(page.text, email.toLowerCase())).toBe(true);
    expect(page.text).toContain('Your account is ready');
    // Signing in again (with a session already) issues another session id.
    const again = sessionCookie(await signIn(agent, email));
    expect(again, 'a new session cookie at sign-in').not.toBeNull();
    expect(again!.split(';')[0]).not.toBe(first!.split(';')[0]);
    const row = await t.db('accounts').whereRaw('lower(email) = lower(?)', [email]).first();
    expect(row.password_hash).toMatch(/^\$2b\$/);
    expect(row.password_hash).not.toContain(PASSWORD);
  });

  it('hashes with bcrypt cost 12 by default (the production setting)', async () => {
    expect(DEFAULT_WEB_OPTIONS.bcryptCost).toBeGreaterThanOrEqual(12);
    expect(webOptions().bcryptCost).toBeGreaterThanOrEqual(12);
    expect(() => webOptions({ bcryptCost: 3 })).toThrow();
    const email = uniqueEmail('cost');
    // An app given no cost (the web tests' own lower it): the default applies.
    const { bcryptCost: _lowered, ...noCost } = WEB_TEST_OPTIONS;
    const defaults = await buildTestApp(t.db, { config: { PUBLIC_BASE_URL: 'http://127.0.0.1:3000', TRUST_PROXY: false, STATS_RATE_LIMIT_PER_MINUTE: 1000 }, web: noCost });
    const res = await signUp(request.agent(defaults), email);
    expect(res).toHaveStatus(303);
    const row = await t.db('accounts').where({ email }).first();
    expect(hashCost(row.password_hash)).toBeGreaterThanOrEqual(12);
  });

  it('refuses an email that already has an account, in any letter case', async () => {
    const email = uniqueEmail('dup');
    expect(await signUp(request.agent(t.app), email)).toHaveStatus(303);
    const res = await signUp(request.agent(t.app), email.toUpperCase());
    expect(res).toHaveStatus(400);
    expect(res.text).toMatch(/<p class="field-error" id="signup-email-error">An account with this email already exists/);
    expect(await t.db('accounts').whereRaw('lower(email) = lower(?)', [email]).count('* as n')).toEqual([{ n: 1 }]);
  });

  const weak: [string, string, RegExp][] = [
    ['too short', 'short pass', /at least 12 characters/],
    ['a common password', 'password1234', /too common/],
    ['a common word padded', 'Password2024!', /too common/],
    ['one character repeated', 'aaaaaaaaaaaaaa', /too common/],
    ['a keyboard run', 'qwertyuiopasdf', /too common/],
    ['a sequence of digits', '123456789012', /too common/],
    ['longer than bcrypt reads', 'x'.repeat(73), /at most 72/],
    // What the rules alone let through, caught by the zxcvbn estimator (an outside probe of stop
    // 49; more in passwords.test.ts).
    ['a common word twice, a digit between', 'password1password', /too easy to guess/],
  ];
  for (const [label, password, message] of weak) {
    it(`refuses a weak password: ${label}`, async () => {
      const email = uniqueEmail('weak');
      const res = await signUp(request.agent(t.app), email, password);
      expect(res).toHaveStatus(400);
      const error = /<p class="field-error" id="signup-password-error">([^<]*)<\/p>/.exec(res.text)?.[1];
      expect(error, res.text).toMatch(message);
      expect(res.text).toContain('aria-invalid="true"');
      expect(res.text).toContain(`value="${email}"`); // the email is kept, the password is not
      expect(res.text).not.toContain(`value="${password}"`);
      expect(await t.db('accounts').where({ email }).first()).toBeUndefined();
    });
  }

  it('refuses a password containing the email and a repeat that differs', async () => {
    const email = 'marie.schmit@example.com';
    let res = await signUp(request.agent(t.app), email, 'marie.schmit likes trains');
    expect(res.text).toMatch(/id="signup-password-error">Do not use your email address/);
    const agent = request.agent(t.app);
    const _csrf = await pageToken(agent);
    res = await agent.post('/api-keys/sign-up').type('form').send({ _csrf, email, password: PASSWORD, password_repeat: PASSWORD + 'x' });
    expect(res).toHaveStatus(400);
    expect(res.text).toMatch(/id="signup-password_repeat-error">The two passwords are not the same/);
  });

  it('refuses a malformed email and escapes what was typed', async () => {
    const typed = '"><script>alert(1)</script>';
    const res = await signUp(request.agent(t.app), typed);
    expect(res).toHaveStatus(400);
    expect(res.text).toMatch(/id="signup-email-error">Enter an email address/);
    expect(res.text).not.toContain('<script>alert(1)');
    expect(res.text).toContain('value="&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;"');
  });
});

describe('sign-in and sign-out', () => {
  it('signs in with the right password (email in any case) and out again; the old session is gone', async () => {
    const email = uniqueEmail('inout');
    await signUp(request.agent(t.app), email);
    const agent = request.agent(t.app);
    const res = await signIn(agent, email.toUpperCase());
    expect(res).toHaveStatus(303);
    const cookie = sessionCookie(res)!.split(';')[0];
    expect(signedInAs((await agent.get('/api-keys')).text, email)).toBe(true);
    const sid = decodeURIComponent(cookie.split('=')[1]).slice(2).split('.')[0];
    expect(await t.db('web_sessions').where({ sid }).first()).toBeDefined();

    const out = await signOut(agent);
    expect(out).toHaveStatus(303);
    expect(sessionCookie(out)).toMatch(/lf_session=;.*Expires=Thu, 01 Jan 1970/);
    expect(await t.db('web_sessions').where({ sid }).first()).toBeUndefined();
    expect((await agent.get('/api-keys')).text).toContain('action="/api-keys/sign-in"');
    // The old cookie, replayed, no longer signs anyone in.
    const replay = await request(t.app).get('/api-keys').set('Cookie', cookie);
    expect(signedInAs(replay.text, email)).toBe(false);
  });

  it('answers a wrong password, an unknown email and a password-less account the same way', async () => {
    const email = uniqueEmail('same');
    await signUp(request.agent(t.app), email);
    const cliAccount = uniqueEmail('cli');
    await createKey(t.db, 'free', cliAccount); // accounts from the admin command line have no password
    const attempt = async (who: string, password: string) => {
      const agent = request.agent(t.app);
      const res = await signIn(agent, who, password);
      return { status: res.status, body: res.text.replaceAll(csrfFrom(res.text), 'TOKEN').replaceAll(who, 'EMAIL') };
    };
    const wrong = await attempt(email, 'not the right password');
    const unknown = await attempt(uniqueEmail('nobody'), 'not the right password');
    const noPassword = await attempt(cliAccount, 'not the right password');
    expect(wrong).toHaveStatus(400);
    expect(wrong.body).toContain('That email and password do not match an account');
    expect(unknown).toEqual(wrong);
    expect(noPassword).toEqual(wrong);
    // A sign-up for either says the same, and says why the staff's kind cannot sign in (an outside
    // probe of stop 52: "sign in instead" led nowhere for it).
    const again = async (who: string) => (await signUp(request.agent(t.app), who)).text.replaceAll(who, 'EMAIL').replace(/value="[^"]*"/g, '');
    const taken = await again(email);
    expect(taken).toContain('An account with this email already exists. Sign in instead (an account our staff made for you has no password and cannot sign in here: ask them).');
    expect(await again(cliAccount)).toEqual(taken);
  });

  it('asks for the fields it needs, next to them', async () => {
    const agent = request.agent(t.app);
    const _csrf = await pageToken(agent);
    const res = await agent.post('/api-keys/sign-in').type('form').send({ _csrf, email: '', password: '' });
    expect(res).toHaveStatus(400);
    expect(res.text).toMatch(/id="signin-email-error">Enter your email address/);
    expect(res.text).toMatch(/id="signin-password-error">Enter your password/);
  });
});

describe('CSRF protection', () => {
  it('refuses a form without a token, with a wrong one or with another session’s one (403)', async () => {
    const email = uniqueEmail('csrf');
    await signUp(request.agent(t.app), email);
    const agent = request.agent(t.app);
    await agent.get('/api-keys');
    const other = await pageToken(request.agent(t.app));
    for (const _csrf of [undefined, 'f'.repeat(256), other]) {
      const res = await agent.post('/api-keys/sign-in').type('form').send({ ...(_csrf ? { _csrf } : {}), email, password: PASSWORD });
      expect(res, String(_csrf)).toHaveStatus(403);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.text).toContain('This form has expired');
    }
    // Without any session cookie at all (a cross-site post from a fresh browser).
    const bare = await request(t.app).post('/api-keys/sign-up').type('form').send({ _csrf: other, email: uniqueEmail(), password: PASSWORD, password_repeat: PASSWORD });
    expect(bare).toHaveStatus(403);
  });

  // csrf-csrf compares the form's token with the cookie's using !== (first differing
  // character returns): the service compares them first in constant time (sameCsrfToken).
  // Timing itself is not measured here; what is: the comparison's answers, whatever the
  // lengths (timingSafeEqual alone throws on unequal lengths), and that the form is refused
  // when only the token differs from the cookie, even by its last character.
  it('compares the form token with the cookie in constant time, over any lengths', async () => {
    const token = await pageToken(request.agent(t.app));
    expect(sameCsrfToken(token, token)).toBe(true);
    const lastChanged = token.slice(0, -1) + (token.endsWith('a') ? 'b' : 'a');
    for (const other of [lastChanged, token + 'x', token.slice(0, 10), '', undefined, 42, ['x']]) expect(sameCsrfToken(token, other), String(other)).toBe(false);
    expect(sameCsrfToken(undefined, undefined)).toBe(false);
    expect(sameCsrfToken('', '')).toBe(false);

    const agent = request.agent(t.app);
    const page = await agent.get('/api-keys');
    const own = csrfFrom(page.text);
    for (const _csrf of [own.slice(0, -1) + (own.endsWith('a') ? 'b' : 'a'), own + own]) {
      const res = await agent.post('/api-keys/sign-in').type('form').send({ _csrf, email: uniqueEmail(), password: PASSWORD });
      expect(res, _csrf).toHaveStatus(403);
    }
    // The right token still passes (the sign-in then fails on the unknown account: 401 page).
    const ok = await agent.post('/api-keys/sign-in').type('form').send({ _csrf: own, email: uniqueEmail(), password: PASSWORD });
    expect(ok.status).not.toBe(403);
  });

  it('protects sign-out and key creation of a signed-in user', async () => {
    const { agent, email } = await signedInAgent(t.app, 'csrf2');
    expect(await agent.post('/api-keys/sign-out').type('form').send({})).toHaveStatus(403);
    expect(await agent.post('/api-keys/keys').type('form').send({ name: 'forged', _csrf: 'nope' })).toHaveStatus(403);
    const page = await agent.get('/api-keys');
    expect(signedInAs(page.text, email)).toBe(true);
    expect(page.text).not.toContain('forged');
  });
});

describe('on an https deployment', () => {
  it('marks the cookie Secure and sends HSTS (behind a trusted TLS proxy)', async () => {
    const httpsApp = await buildWebApp(t.db, {
      config: { PUBLIC_BASE_URL: 'https://listings.example.lu', TRUST_PROXY: ['loopback'], STATS_RATE_LIMIT_PER_MINUTE: 1000 },
    });
    const res = await request(httpsApp).get('/api-keys').set('X-Forwarded-Proto', 'https');
    expect(csrfCookie(res)).toMatch(/; Secure/i);
    // (The test's cookie jar keeps Secure cookies off plain http: the browser's part is played by hand.)
    const signedUp = await request(httpsApp)
      .post('/api-keys/sign-up')
      .set('X-Forwarded-Proto', 'https')
      .set('Cookie', csrfCookie(res)!.split(';')[0])
      .type('form')
      .send({ _csrf: csrfFrom(res.text), email: uniqueEmail('tls'), password: PASSWORD, password_repeat: PASSWORD });
    expect(signedUp).toHaveStatus(303);
    expect(sessionCookie(signedUp)).toMatch(/; Secure/i);
    expect(res.headers['strict-transport-security']).toMatch(/max-age=\d+/);
    expect(res.headers['content-security-policy']).toContain('upgrade-insecure-requests');
    // Every HTML page: /docs too (an outside probe of stop 49), and the market page.
    for (const path of ['/docs', '/market']) {
      expect((await request(httpsApp).get(path).set('X-Forwarded-Proto', 'https')).headers['strict-transport-security'], path).toMatch(/max-age=31536000/);
    }
  });
});
