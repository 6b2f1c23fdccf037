import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { COPY_SCRIPT_PATH, STYLE_PATH } from '../../src/web/assets.js';
import { useTestContext } from '../helpers/context.js';
import { insertListing } from '../helpers/factory.js';
import { signedInAgent } from './helpers.js';

// An outside probe of stop 47: other methods on the pages and /docs were 404 ("No route for
// POST /docs", the 404 page for POST /market), OPTIONS on a /docs asset 404, and PUT, DELETE,
// PATCH or TRACE on the key page's forms the CSRF check's 403 "This form has expired". Every
// address of the pages now answers a method it does not serve with 405 and Allow (an HTML page;
// problem+json on /docs, as on the API), and OPTIONS with 204 and Allow.
const t = useTestContext({ app: 'web' });

type Method = 'post' | 'put' | 'delete' | 'patch' | 'trace' | 'options';
const send = (method: Method, path: string) => request(t.app)[method](path);

async function pagePaths() {
  const listing = await insertListing(t.db);
  return [`/listings/${listing.id}`, '/market', '/market?commune=Esch', STYLE_PATH, COPY_SCRIPT_PATH];
}

describe('methods a page does not serve', () => {
  it('are 405 pages with Allow: GET, HEAD on the listing pages, /market and the assets; OPTIONS is 204', async () => {
    for (const path of await pagePaths()) {
      for (const method of ['post', 'put', 'delete', 'patch', 'trace'] as const) {
        const res = await send(method, path);
        expect(res, `${method} ${path}`).toHaveStatus(405);
        expect(res.headers.allow, `${method} ${path}`).toBe('GET, HEAD');
        expect(res.headers['content-type']).toMatch(/^text\/html/);
        expect(res.text).toContain('Method not allowed');
        expect(res.text).toContain(`This address answers GET, HEAD requests, not ${method.toUpperCase()}.`);
      }
      const options = await send('options', path);
      expect(options, `OPTIONS ${path}`).toHaveStatus(204);
      expect(options.headers.allow).toBe('GET, HEAD');
      expect(options.text ?? '').toBe('');
      expect(await request(t.app).head(path), `HEAD ${path}`).toHaveStatus(200);
    }
    // /market's way back leads to the market prices.
    expect((await send('post', '/market')).text).toContain('Back to the market prices');
  });

  it('are 405 on the key page and its forms before the CSRF check, with the methods each serves', async () => {
    const cases: [string, string][] = [
      ['/api-keys', 'GET, HEAD'],
      ['/api-keys/', 'GET, HEAD'],
      ['/api-keys/sign-in', 'GET, HEAD, POST'],
      ['/api-keys/sign-up', 'GET, HEAD, POST'],
      ['/api-keys/sign-out', 'GET, HEAD, POST'],
      ['/api-keys/keys', 'GET, HEAD, POST'],
      ['/api-keys/keys/key_0123456789abcdef/revoke', 'GET, HEAD, POST'],
    ];
    for (const [path, allow] of cases) {
      for (const method of ['put', 'delete', 'patch', 'trace'] as const) {
        const res = await send(method, path);
        expect(res, `${method} ${path}`).toHaveStatus(405);
        expect(res.headers.allow, `${method} ${path}`).toBe(allow);
        expect(res.headers['content-type']).toMatch(/^text\/html/);
        expect(res.headers['cache-control']).toBe('no-store, no-transform');
        expect(res.text).not.toContain('This form has expired');
        // Neither the session nor the CSRF middleware ran: no cookie.
        expect(res.headers['set-cookie']).toBeUndefined();
      }
      const options = await send('options', path);
      expect(options, `OPTIONS ${path}`).toHaveStatus(204);
      expect(options.headers.allow).toBe(allow);
      expect(options.headers['set-cookie']).toBeUndefined();
    }
    // POST where only the page is: 405, not the CSRF check's 403.
    const post = await send('post', '/api-keys');
    expect(post).toHaveStatus(405);
    expect(post.headers.allow).toBe('GET, HEAD');
    // Before the form's body is read: a large body does not make it a 413.
    const big = await request(t.app).put('/api-keys/keys').type('form').send({ name: 'x'.repeat(20_000) });
    expect(big).toHaveStatus(405);
    // A signed-in visitor alike; the forms still work.
    const { agent } = await signedInAgent(t.app, 'methods');
    expect(await agent.delete('/api-keys/keys')).toHaveStatus(405);
    expect((await agent.get('/api-keys')).text).toContain('Signed in as');
  });

  it('leave unknown addresses and the wrong-case /API-KEYS to the 404 page', async () => {
    expect(await send('put', '/market/nope')).toHaveStatus(404);
    expect(await send('put', '/web/nope.css')).toHaveStatus(404);
    expect(await send('put', '/API-KEYS/sign-in')).toHaveStatus(404);
  });
});

describe('methods /docs does not serve', () => {
  const paths = ['/docs', '/docs/', '/docs/init.js', '/docs/assets/swagger-ui.css', '/docs/assets/swagger-ui-bundle.js', '/docs/assets/favicon-32x32.png'];

  it('are 405 problem+json with Allow: GET, HEAD; OPTIONS is 204 with Allow on every file', async () => {
    for (const path of paths) {
      for (const method of ['post', 'put', 'delete', 'patch', 'trace'] as const) {
        const res = await send(method, path);
        expect(res, `${method} ${path}`).toHaveStatus(405);
        expect(res.headers.allow, `${method} ${path}`).toBe('GET, HEAD');
        expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
        expect(res.body).toMatchObject({ status: 405, code: 'method_not_allowed', detail: `${method.toUpperCase()} is not supported: the docs page is read-only` });
      }
      const options = await send('options', path);
      expect(options, `OPTIONS ${path}`).toHaveStatus(204);
      expect(options.headers.allow).toBe('GET, HEAD');
      expect(options.text ?? '').toBe('');
      expect(await request(t.app).get(path), `GET ${path}`).toHaveStatus(200);
    }
  });

  it('leaves the package files the page does not load at 404, whatever the method', async () => {
    for (const method of ['get', 'post', 'options'] as const) {
      expect(await request(t.app)[method]('/docs/assets/package.json'), method).toHaveStatus(404);
    }
  });
});
