import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { useTestContext } from '../helpers/context.js';
import { rawExchange, rawStatuses } from '../helpers/raw-http.js';
import { csrfFrom, PASSWORD, uniqueEmail } from './helpers.js';

// With Redis: the pages' rate limit answers asynchronously, as in production, before the form is
// read (the client's half-close is seen by then).
const t = useTestContext({ app: 'web', redis: true });

// The page's CSRF cookie and token, for a raw client.
async function pageCredentials(): Promise<{ cookie: string; token: string }> {
  const res = await request(t.app).get('/api-keys');
  const cookie = ([] as string[]).concat(res.headers['set-cookie'] ?? []).find((c) => c.startsWith('lf_csrf='))!.split(';')[0];
  return { cookie, token: csrfFrom(res.text) };
}

const formPost = (port: number, cookie: string, body: string, contentType = 'application/x-www-form-urlencoded') =>
  `POST /api-keys/sign-up HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nCookie: ${cookie}\r\nContent-Type: ${contentType}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;

describe('the forms of the key page', () => {
  // An outside probe (stop 40): a client that closed its sending side once its form was sent
  // (`nc -N`, shutdown(SHUT_WR)) had the form refused as expired (403): the body parser took
  // the request for one already read.
  it('are read from a client that half-closes its connection after sending one', async () => {
    const { port } = await t.listen();
    const { cookie, token } = await pageCredentials();
    const email = uniqueEmail('halfclose');
    const body = new URLSearchParams({ _csrf: token, email, password: PASSWORD, password_repeat: PASSWORD }).toString();
    const raw = await rawExchange(port, formPost(port, cookie, body), { halfClose: true });
    expect(rawStatuses(raw), raw.slice(0, 300)).toEqual(['303']);
    expect(raw).toMatch(/\r\nSet-Cookie: lf_session=/i);
    expect(await t.db('accounts').where({ email }).first()).toBeDefined();
  });

  it('refuse a form over 8 KB, one of more than 20 fields and a charset other than UTF-8 and ISO-8859-1, with a page that says so', async () => {
    const { port } = await t.listen();
    const { cookie, token } = await pageCredentials();
    const send = (body: string, contentType?: string) => rawExchange(port, formPost(port, cookie, body, contentType), { halfClose: true });
    const big = await send(`_csrf=${token}&email=${'a'.repeat(9000)}`);
    expect(rawStatuses(big)).toEqual(['413']);
    expect(big).toContain('Too much data');
    const many = await send(`_csrf=${token}&${Array.from({ length: 25 }, (_, i) => `f${i}=1`).join('&')}`);
    expect(rawStatuses(many)).toEqual(['413']);
    const utf16 = await send(`_csrf=${token}&email=a`, 'application/x-www-form-urlencoded; charset=UTF-16');
    expect(rawStatuses(utf16)).toEqual(['400']);
    expect(utf16).toContain('Bad request');
  });

  // An outside probe of stop 51: a multipart form was refused for "control characters" and a JSON
  // one as "expired" (403).
  it('refuse a form sent as multipart/form-data or JSON with a page that names the form type', async () => {
    const { port } = await t.listen();
    const { cookie, token } = await pageCredentials();
    const email = uniqueEmail('multipart');
    const send = (body: string, contentType: string) => rawExchange(port, formPost(port, cookie, body, contentType), { halfClose: true });
    const parts = [['_csrf', token], ['email', email], ['password', PASSWORD], ['password_repeat', PASSWORD]]
      .map(([k, v]) => `--XyZ\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`).join('') + '--XyZ--\r\n';
    const multipart = await send(parts, 'multipart/form-data; boundary=XyZ');
    expect(rawStatuses(multipart)).toEqual(['400']);
    expect(multipart).toContain('sent as multipart/form-data; the pages&#39; forms are sent as application/x-www-form-urlencoded');
    const json = await send(JSON.stringify({ _csrf: token, email, password: PASSWORD, password_repeat: PASSWORD }), 'application/json');
    expect(rawStatuses(json)).toEqual(['400']);
    expect(json).toContain('sent as application/json');
    expect(await t.db('accounts').where({ email }).first()).toBeUndefined();
  });

  // An outside probe of stop 52: a form sent without a Content-Type was "expired" (403), and a
  // `%FF` in a key's name was stored as written.
  it('refuse a form sent without a Content-Type, and a field whose %-escape is not UTF-8, with a page that says so', async () => {
    const { port } = await t.listen();
    const { cookie, token } = await pageCredentials();
    const email = uniqueEmail('untyped');
    const body = new URLSearchParams({ _csrf: token, email, password: PASSWORD, password_repeat: PASSWORD }).toString();
    const untyped = await rawExchange(port, formPost(port, cookie, body).replace('Content-Type: application/x-www-form-urlencoded\r\n', ''), { halfClose: true });
    expect(rawStatuses(untyped)).toEqual(['400']);
    expect(untyped).toContain('sent without a Content-Type; the pages&#39; forms are sent as application/x-www-form-urlencoded');
    for (const bad of ['a%FFb', 'a%C3', '50%', '%zz']) {
      const raw = await rawExchange(port, formPost(port, cookie, `${body}&email2=${bad}`.replace(`email=${encodeURIComponent(email)}`, `email=${bad}`)), { halfClose: true });
      expect(rawStatuses(raw), bad).toEqual(['400']);
      expect(raw).toContain('a %-escape that are not UTF-8');
    }
    expect(await t.db('accounts').where({ email }).first()).toBeUndefined();
    // Raw bytes that are not UTF-8 (a Latin-1 é) too: they became U+FFFD, so that distinct
    // passwords were one (an outside probe of stop 57). Declared as ISO-8859-1, they are read so.
    const latin = (charset: string) => {
      const bytes = Buffer.concat([Buffer.from(`${body}&note=Caf`), Buffer.from([0xe9])]);
      const head = formPost(port, cookie, '', `application/x-www-form-urlencoded${charset}`).replace('Content-Length: 0', `Content-Length: ${bytes.length}`);
      return rawExchange(port, Buffer.concat([Buffer.from(head), bytes]), { halfClose: true });
    };
    const rawByte = await latin('');
    expect(rawStatuses(rawByte)).toEqual(['400']);
    expect(rawByte).toContain('bytes or a %-escape that are not UTF-8');
    expect(await t.db('accounts').where({ email }).first()).toBeUndefined();
    expect(rawStatuses(await latin('; charset=ISO-8859-1'))).toEqual(['303']);
    await t.db('accounts').where({ email }).delete();
    // A whole UTF-8 escape, and `+` for a space, are read.
    const fine = await rawExchange(port, formPost(port, cookie, body.replace(`email=${encodeURIComponent(email)}`, `email=${encodeURIComponent(email)}&note=%C3%A9+x`)), { halfClose: true });
    expect(rawStatuses(fine), fine.slice(0, 300)).toEqual(['303']);
    expect(await t.db('accounts').where({ email }).first()).toBeDefined();
  });

  it('read a field named __proto__ as a field, and a field sent twice as not a text', async () => {
    const { cookie, token } = await pageCredentials();
    const email = uniqueEmail('proto');
    const post = (body: string) => request(t.app).post('/api-keys/sign-up').set('Cookie', cookie).type('form').send(body);
    // A field sent twice is not one email: the form is shown again with the problem (400).
    const twice = await post(`_csrf=${token}&email=${email}&email=${email}&password=${encodeURIComponent(PASSWORD)}&password_repeat=${encodeURIComponent(PASSWORD)}`);
    expect(twice).toHaveStatus(400);
    expect(await t.db('accounts').where({ email }).first()).toBeUndefined();
    const proto = await post(`__proto__=x&_csrf=${token}&email=${email}&password=${encodeURIComponent(PASSWORD)}&password_repeat=${encodeURIComponent(PASSWORD)}`);
    expect(proto).toHaveStatus(303);
    expect(await t.db('accounts').where({ email }).first()).toBeDefined();
  });
});
