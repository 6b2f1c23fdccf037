import express from 'express';
import pino from 'pino';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { errorHandler } from '../../src/http/errors.js';
import { htmlErrorHandler } from '../../src/web/errors.js';
import { useTestContext } from '../helpers/context.js';
import { bearer, createKey, insertListing } from '../helpers/factory.js';
import { csrfFrom, nonceFrom, pageToken, signedInAgent } from './helpers.js';

// Issue 10, item 2: a NUL byte (or another control character) in a path, a query or a form
// reached PostgreSQL (22021) and came back as a 500 with two error lines and a stack.
const lines: { level: number; msg: string; [k: string]: unknown }[] = [];
const logger = pino({ level: 'info' }, { write: (s: string) => void lines.push(JSON.parse(s)) });
const errorLines = () => lines.filter((l) => l.level >= 50);
const withStack = () => lines.filter((l) => JSON.stringify(l).includes('"stack"'));
const t = useTestContext({ app: 'web', deps: { logger } });

const CONTROL = ['%00', '%01', '%0A', '%1F', '%7F', '%C2%85', '%C2%9F'];

describe('control characters at the edge of the HTML pages', () => {
  it('GET /listings/<id with a control character> is a 400 page, not a 500', async () => {
    const listing = await insertListing(t.db);
    lines.length = 0;
    for (const c of CONTROL) {
      for (const path of [`/listings/${c}`, `/listings/${listing.id}${c}`, `/listings/${listing.id}?x=${c}`]) {
        const res = await request(t.app).get(path);
        expect(res, path).toHaveStatus(400);
        expect(res.headers['content-type'], path).toMatch(/^text\/html/);
        expect(res.text).toContain('control characters');
      }
    }
    expect(errorLines()).toEqual([]);
    expect(await request(t.app).get(`/listings/${listing.id}`)).toHaveStatus(200);
  });

  it('a sign-in or sign-up email with NUL is a 400 page', async () => {
    lines.length = 0;
    const agent = request.agent(t.app);
    for (const form of ['sign-in', 'sign-up'] as const) {
      for (const c of ['\u0000', '\u0007', '\u007f', '\u0085']) {
        const _csrf = await pageToken(agent);
        const email = `ali${c}ce@example.com`;
        const res = await agent
          .post(`/api-keys/${form}`)
          .type('form')
          .send({ _csrf, email, password: 'a long enough password 1', password_repeat: 'a long enough password 1' });
        expect(res, `${form} ${JSON.stringify(c)}`).toHaveStatus(400);
        expect(res.headers['content-type']).toMatch(/^text\/html/);
        expect(res.text).toContain('control characters');
      }
    }
    // The same, percent-encoded by hand in the body (what the issue sent).
    const _csrf = await pageToken(agent);
    const raw = await agent.post('/api-keys/sign-in').type('form').send(`_csrf=${encodeURIComponent(_csrf)}&email=alice%00%40example.com&password=x`);
    expect(raw).toHaveStatus(400);
    expect(raw.text).toContain('<a href="/api-keys">Back to your API keys</a>');
    // On /market, the way back is to the market prices (an outside probe).
    const market = await request(t.app).get('/market?commune=%00');
    expect(market).toHaveStatus(400);
    expect(market.text).toContain('<a href="/market">Back to the market prices</a>');
    expect(errorLines()).toEqual([]);
    expect(await t.db('accounts').whereRaw(`strpos(email, chr(7)) > 0`)).toEqual([]);
  });

  it('a key name with NUL is a 400 page and makes no key', async () => {
    const { agent } = await signedInAgent(t.app, 'nul');
    lines.length = 0;
    const page = await agent.get('/api-keys');
    const res = await agent.post('/api-keys/keys').type('form').send({ _csrf: csrfFrom(page.text), nonce: nonceFrom(page.text), name: 'my\u0000key' });
    expect(res).toHaveStatus(400);
    expect(res.text).toContain('control characters');
    expect(errorLines()).toEqual([]);
    expect(await t.db('api_keys').where('name', 'like', 'my%')).toEqual([]);
  });

  it('a revoke address with a control character is a 400 page', async () => {
    const { agent } = await signedInAgent(t.app, 'nulrevoke');
    lines.length = 0;
    expect(await agent.get('/api-keys/keys/key_%00/revoke')).toHaveStatus(400);
    expect(errorLines()).toEqual([]);
  });
});

describe('control characters on the API', () => {
  it('are 4xx problems wherever a string reaches the API, never a 500', async () => {
    const { key } = await createKey(t.db, 'pro');
    lines.length = 0;
    for (const path of ['/api/v1/listings/%00', '/api/v1/listings/lst_%00', '/api/v1/listings?source=a%00b', '/api/v1/listings?commune=a%00b', '/api/v1/market/prices?commune=%00', '/api/v1/listings?source=a%C2%85']) {
      const res = await request(t.app).get(path).set(bearer(key));
      expect(res.status, path).toBeGreaterThanOrEqual(400);
      expect(res.status, path).toBeLessThan(500);
      expect(res.headers['content-type'], path).toMatch(/^application\/problem\+json/);
    }
    expect(errorLines()).toEqual([]);
  });
});

// What still gets past validation to PostgreSQL as a value it refuses is the client's input,
// not a fault of ours: 400, logged at warn with its SQLSTATE and without a stack.
describe('invalid input refused by PostgreSQL', () => {
  const failing = {
    '22021': `SELECT convert_from('\\x00'::bytea, 'UTF8')`,
    '22P02': `SELECT 'abc'::int`,
    '22003': `SELECT 2147483647::int + 1`,
    '22007': `SELECT 'not a date'::date`,
    '22008': `SELECT '2026-02-30'::date`,
    '54000': `SELECT array_fill(1, ARRAY[200000000])`,
  };

  function probe(mount: (a: express.Express) => void) {
    const a = express();
    a.get('/:code', async (req) => {
      await t.db.raw(failing[req.params.code as keyof typeof failing]);
    });
    mount(a);
    return a;
  }

  it('the API answers 400 invalid_parameter by SQLSTATE, logged at warn without a stack', async () => {
    const a = probe((x) => x.use(errorHandler(logger)));
    for (const code of Object.keys(failing)) {
      lines.length = 0;
      const res = await request(a).get(`/${code}`);
      expect(res, code).toHaveStatus(400);
      expect(res.body.code).toBe('invalid_parameter');
      expect(errorLines(), code).toEqual([]);
      expect(withStack(), code).toEqual([]);
      expect(lines.some((l) => l.level === 40 && l.sqlstate === code), code).toBe(true);
    }
  });

  it('the HTML pages answer a 400 page, logged at warn without a stack', async () => {
    const a = probe((x) => x.use(htmlErrorHandler(logger)));
    for (const code of ['22021', '22P02', '54000']) {
      lines.length = 0;
      const res = await request(a).get(`/${code}`);
      expect(res, code).toHaveStatus(400);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(errorLines(), code).toEqual([]);
      expect(withStack(), code).toEqual([]);
    }
  });
});
