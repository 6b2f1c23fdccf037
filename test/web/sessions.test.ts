import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { useTestContext } from '../helpers/context.js';
import { csrfCookie, csrfFrom, PASSWORD, pageToken, sessionCookie, signIn, signUp, uniqueEmail } from './helpers.js';

// Issue 10, item 7: every anonymous GET /api-keys wrote a session row (the CSRF token lived
// in the session), kept 8 hours: 2,000 requests, 2,000 rows.
const t = useTestContext({ app: 'web' });

const sessionRows = async () => Number((await t.db('web_sessions').count<{ n: number }[]>('* as n'))[0].n);

describe('sessions are made only when someone signs in', () => {
  it('anonymous visits write no session row and set no session cookie', async () => {
    await t.db('web_sessions').del();
    const agent = request.agent(t.app);
    for (let i = 0; i < 40; i++) {
      const res = await (i % 2 === 0 ? agent : request(t.app)).get('/api-keys');
      expect(res).toHaveStatus(200);
      expect(sessionCookie(res)).toBeNull();
    }
    // Pages that send an anonymous visitor elsewhere, and forms that fail, write none either.
    const revoke = await agent.get('/api-keys/keys/key_0000000000000000/revoke');
    expect(revoke).toHaveStatus(303);
    const landing = await agent.get(revoke.headers.location);
    expect(landing.text).toContain('Please sign in first.');
    for (const path of ['/api-keys/sign-in', '/api-keys/keys', '/api-keys/nothing']) await agent.get(path);
    let _csrf = await pageToken(agent);
    expect(await agent.post('/api-keys/sign-in').type('form').send({ _csrf, email: uniqueEmail(), password: 'not the password at all' })).toHaveStatus(400);
    _csrf = await pageToken(agent);
    expect(await agent.post('/api-keys/sign-up').type('form').send({ _csrf, email: uniqueEmail(), password: 'short', password_repeat: 'short' })).toHaveStatus(400);
    _csrf = await pageToken(agent);
    expect(await agent.post('/api-keys/sign-out').type('form').send({ _csrf })).toHaveStatus(303);
    expect(await sessionRows()).toBe(0);
  });

  it('a sign-in makes one; sign-out removes it', async () => {
    const email = uniqueEmail('session');
    await signUp(request.agent(t.app), email);
    await t.db('web_sessions').del();
    const agent = request.agent(t.app);
    const res = await signIn(agent, email);
    expect(res).toHaveStatus(303);
    expect(sessionCookie(res)).not.toBeNull();
    expect(await sessionRows()).toBe(1);
    expect((await agent.get('/api-keys')).text).toContain('Signed in as');
    const _csrf = await pageToken(agent);
    expect(await agent.post('/api-keys/sign-out').type('form').send({ _csrf })).toHaveStatus(303);
    expect(await sessionRows()).toBe(0);
  });
});

// An outside probe of stop 52: each keys page moved the session's expiry 8 hours on, so a
// session in use never ended.
describe('a session lasts 8 hours from sign-in, used or not', () => {
  it('keeps its expiry while used, and signs the visitor out once it has passed', async () => {
    const email = uniqueEmail('lifetime');
    await signUp(request.agent(t.app), email);
    await t.db('web_sessions').del();
    const agent = request.agent(t.app);
    await signIn(agent, email);
    const [{ sid }] = await t.db('web_sessions').select('sid');
    const expiry = async () => new Date((await t.db('web_sessions').where({ sid }).first()).expire).getTime();
    // Signed in 7 hours ago: the page still shows the keys, and the session ends 1 hour from now.
    const back = async (ms: number) => t.db.raw(`UPDATE web_sessions SET sess = jsonb_set(sess::jsonb, '{signedInAt}', to_jsonb(?::bigint))::json WHERE sid = ?`, [Date.now() - ms, sid]);
    await back(7 * 3600_000);
    const page = await agent.get('/api-keys');
    expect(page.text).toContain('Signed in as');
    const cookie = ([] as string[]).concat(page.headers['set-cookie'] ?? []).find((c) => c.startsWith('lf_session='));
    const hour = Date.now() + 3600_000;
    if (cookie) expect(Math.abs(new Date(/Expires=([^;]+)/i.exec(cookie)![1]).getTime() - hour)).toBeLessThan(60_000);
    expect(Math.abs((await expiry()) - hour)).toBeLessThan(60_000);
    // 8 hours and a minute ago: signed out, the session gone, and, as for any visitor without a
    // session, no new one written (the regression check of stop 52 found an empty row and cookie).
    await back(8 * 3600_000 + 60_000);
    const after = await agent.get('/api-keys');
    expect(after).toHaveStatus(200);
    expect(after.text).not.toContain('Signed in as');
    expect(sessionCookie(after)).toBeNull();
    // (Its row is deleted without the request waiting for it.)
    await expect.poll(() => sessionRows(), { timeout: 10_000 }).toBe(0);
    // Signing in again works.
    expect(await signIn(agent, email)).toHaveStatus(303);
    expect((await agent.get('/api-keys')).text).toContain('Signed in as');
  });
});

describe('the forms of anonymous visitors are still protected against CSRF', () => {
  it('refuses a sign-in posted without a token, with a made-up one, or with another browser’s token (login CSRF)', async () => {
    const email = uniqueEmail('victim');
    await signUp(request.agent(t.app), email);
    // The attacker's own token and cookie, fetched from our page.
    const attackerPage = await request(t.app).get('/api-keys');
    const attackerToken = csrfFrom(attackerPage.text);
    const attackerCookie = csrfCookie(attackerPage)!.split(';')[0];

    const victim = request.agent(t.app);
    await victim.get('/api-keys'); // the victim has a cookie of their own
    const victimToken = await pageToken(victim);
    const forged = [
      {},
      { _csrf: 'f'.repeat(64) + '.' + 'f'.repeat(64) },
      { _csrf: attackerToken },
      { _csrf: victimToken.replace(/^./, (c) => (c === 'a' ? 'b' : 'a')) },
    ];
    for (const extra of forged) {
      const res = await victim.post('/api-keys/sign-in').type('form').send({ ...extra, email, password: PASSWORD });
      expect(res, JSON.stringify(extra)).toHaveStatus(403);
      expect(res.text).toContain('This form has expired');
      expect(sessionCookie(res)).toBeNull();
    }
    // No cookie at all (a cross-site post from a browser that never saw our page).
    expect(await request(t.app).post('/api-keys/sign-in').type('form').send({ _csrf: attackerToken, email, password: PASSWORD })).toHaveStatus(403);
    // A cookie and token made under another secret (or altered) are refused too.
    const [hmac, random] = attackerToken.split('.');
    const altered = `${hmac.slice(0, -1)}${hmac.endsWith('0') ? '1' : '0'}.${random}`;
    expect(await request(t.app).post('/api-keys/sign-in').set('Cookie', `lf_csrf=${altered}`).type('form').send({ _csrf: altered, email, password: PASSWORD })).toHaveStatus(403);
    // The genuine pair works.
    expect(await request(t.app).post('/api-keys/sign-in').set('Cookie', attackerCookie).type('form').send({ _csrf: attackerToken, email, password: PASSWORD })).toHaveStatus(303);
    expect(await victim.post('/api-keys/sign-in').type('form').send({ _csrf: victimToken, email, password: PASSWORD })).toHaveStatus(303);
  });

  it('a token from before sign-in does not work after it (it is bound to the session once there is one)', async () => {
    const email = uniqueEmail('bound');
    const agent = request.agent(t.app);
    const anonymousToken = await pageToken(agent);
    expect(await agent.post('/api-keys/sign-up').type('form').send({ _csrf: anonymousToken, email, password: PASSWORD, password_repeat: PASSWORD })).toHaveStatus(303);
    expect(await agent.post('/api-keys/sign-out').type('form').send({ _csrf: anonymousToken })).toHaveStatus(403);
    const page = await agent.get('/api-keys');
    expect(page.text).toContain('Signed in as');
    const signedInToken = csrfFrom(page.text);
    expect(signedInToken).not.toBe(anonymousToken);
    expect(await agent.post('/api-keys/sign-out').type('form').send({ _csrf: signedInToken })).toHaveStatus(303);
  });
});
