import request from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestContext } from '../helpers/context.js';
import { bearer, insertListing } from '../helpers/factory.js';

const t = useTestContext({ app: 'api', keys: ['pro'] });

beforeAll(async () => {
  await insertListing(t.db);
});

const get = (qs: string) => request(t.app).get(`/api/v1/listings${qs}`).set(bearer(t.keys.pro));

async function expect400(qs: string, param: string, code = 'invalid_parameter') {
  const res = await get(qs);
  expect(res, qs).toHaveStatus(400);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(res.body.code).toBe(code);
  expect(res.body.status).toBe(400);
  expect(res.body.errors.map((e: { param: string }) => e.param), qs).toContain(param);
  expect(res.body.detail).toContain(param);
  return res.body;
}

describe('query validation (docs/spec/contract.md section 3)', () => {
  it('names an unknown parameter and lists the allowed ones', async () => {
    const body = await expect400('?price_min=1000', 'price_min', 'unknown_parameter');
    expect(body.detail).toContain('min_price');
    expect(body.allowed_parameters).toContain('min_price');
    await expect400('?foo=1', 'foo', 'unknown_parameter');
    await expect400('?commune[a]=x', 'commune[a]', 'unknown_parameter');
  });

  it('names unknown parameters back within bounds: a long name cut, the first 20 of many', async () => {
    const long = 'x'.repeat(5000);
    const one = await request(t.app).get(`/api/v1/listings?${long}=1`).set(bearer(t.keys.pro));
    expect(one).toHaveStatus(400);
    expect(one.body.errors).toEqual([{ param: `${'x'.repeat(64)}…`, message: 'is not a known parameter' }]);
    // An emoji across the cut is left out whole, not halved into a lone surrogate (an outside probe
    // of stop 57); so is the id a 404 quotes.
    const a63 = 'a'.repeat(63);
    for (const path of [`/api/v1/listings?${a63}%F0%9F%98%80=1`, `/api/v1/market/prices?${a63}%F0%9F%98%80=1`, `/api/v1/listings/${a63}%F0%9F%98%80bbbb`]) {
      const cut = await request(t.app).get(path).set(bearer(t.keys.pro));
      expect(cut.status, path).toBe(path.includes('?') ? 400 : 404);
      expect(cut.body.detail.isWellFormed(), cut.body.detail).toBe(true);
      expect(cut.body.detail).toContain(`${a63}…`);
      if (cut.body.errors) expect(cut.body.errors[0].param).toBe(`${a63}…`);
    }
    // A name left empty is said to be (a probe of stop 44: the detail began " is not").
    const empty = await get('?=5');
    expect(empty).toHaveStatus(400);
    expect(empty.body).toMatchObject({ code: 'unknown_parameter', errors: [{ param: '(a name left empty)', message: 'is not a known parameter' }] });
    expect(empty.body.detail).toMatch(/^\(a name left empty\) is not a known parameter; allowed parameters: /);
    expect(JSON.stringify(one.body).length).toBeLessThan(2000);
    const many = await request(t.app).get(`/api/v1/listings?${Array.from({ length: 500 }, (_, i) => `p${i}=1`).join('&')}`).set(bearer(t.keys.pro));
    expect(many).toHaveStatus(400);
    expect(many.body.errors.map((e: { param: string }) => e.param)).toEqual(Array.from({ length: 20 }, (_, i) => `p${i}`));
    expect(many.body.detail).toContain('p0 is not a known parameter (and 499 more unknown parameters, the first 20 in errors)');
    // A few: counted too (an outside probe: three unknown names, the detail named only one).
    const three = await request(t.app).get('/api/v1/listings?foo=1&bar=2&baz=3').set(bearer(t.keys.pro));
    expect(three.body.detail).toMatch(/^foo is not a known parameter \(and 2 more unknown parameters: see errors\); allowed parameters: /);
    expect(three.body.errors.map((e: { param: string }) => e.param)).toEqual(['foo', 'bar', 'baz']);
    const two = await request(t.app).get('/api/v1/listings?foo=1&bar=2').set(bearer(t.keys.pro));
    expect(two.body.detail).toMatch(/^foo is not a known parameter \(and 1 more unknown parameter: see errors\); /);
  });

  it('reads every parameter however many separators pad the query: 1,000 empty ones hide no filter and no unknown parameter', async () => {
    const pad = '&'.repeat(1000);
    await expect400(`?${pad}bogus=1`, 'bogus', 'unknown_parameter');
    await expect400(`?${pad}per_page=500`, 'per_page');
    const plain = await get('?commune=Luxembourg&listing_type=SALE');
    const padded = await get(`?${pad}commune=Luxembourg&listing_type=SALE`);
    expect(padded).toHaveStatus(200);
    expect(padded.body.meta.total).toBe(plain.body.meta.total);
  });

  it('refuses a percent-encoding that is not UTF-8 in a value or a name, as in the path', async () => {
    for (const qs of ['?commune=Lu%FFx', '?commune=Lux%C3', '?commune=%FFLuxembourg', '?%FF=1']) {
      const res = await get(qs);
      expect(res, qs).toHaveStatus(400);
      expect(res.body, qs).toMatchObject({ code: 'invalid_parameter', detail: expect.stringMatching(/UTF-8/) });
    }
    // A "%" that begins no escape at all is said to be so (an outside probe: it was "not UTF-8").
    // In a name too (a probe of stop 44: `?%=1` was an unknown parameter named "%").
    for (const qs of ['?commune=%', '?commune=%zz', '?commune=100%', '?%=1', '?a%=1', '?%']) {
      const res = await get(qs);
      expect(res, qs).toHaveStatus(400);
      expect(res.body.detail, qs).toBe('The query string holds a "%" not followed by two hexadecimal digits: write a literal % as %25');
    }
    // The path's own: a bad request, said so (its title was "Invalid query parameter").
    const path = await request(t.app).get('/api/v1/listings/%FF').set(bearer(t.keys.pro));
    expect(path).toHaveStatus(400);
    expect(path.body).toMatchObject({ code: 'invalid_parameter', title: 'Bad request', detail: 'The path holds a percent-encoding that is not UTF-8' });
    // A "%" beginning no escape in the path is said to be so too (an outside probe).
    for (const p of ['/api/v1/listings/%ZZ', '/api/v1/listings/%']) {
      const res = await request(t.app).get(p).set(bearer(t.keys.pro));
      expect(res, p).toHaveStatus(400);
      expect(res.body.detail, p).toBe('The path holds a "%" not followed by two hexadecimal digits: write a literal % as %25');
    }
    // Encoded UTF-8 and a + for a space are read as before.
    expect(await get('?commune=Esch%2Dsur%2DAlzette')).toHaveStatus(200);
    expect(await get('?commune=L%C3%ABtzebuerg')).toHaveStatus(200);
  });

  // Judged against its bounds on its digits, as any other figure: a string of digits is finite,
  // and "must be a finite number" misled (an outside probe of stop 63: 320 digits of 1).
  it('a figure too long for a double is refused as out of range, in the words of the other messages', async () => {
    const digits = '1'.repeat(320);
    const cases: Array<[string, string]> = [
      [`?min_price=${digits}`, 'min_price must be between 0 and 2147483647'],
      [`?min_rooms=${digits}`, 'min_rooms must be between 0 and 1000'],
      [`?page=${digits}`, 'page must be between 1 and 1000000'],
      [`?per_page=${digits}`, 'per_page must be between 1 and 100'],
      [`?lat=-${digits}.5&lng=6&radius_km=1`, 'lat must be between -90 and 90'],
      [`?lat=49&lng=6&radius_km=${digits}`, 'radius_km must be greater than 0 and at most 100'],
    ];
    for (const [qs, message] of cases) {
      const body = await expect400(qs, message.split(' ')[0]);
      expect(body.detail, qs).toBe(message);
      expect(body.detail).not.toMatch(/Invalid input|Infinity|finite/);
    }
  });

  it('a route that takes no parameters says so', async () => {
    const res = await request(t.app).get('/api/v1/stats?foo=1');
    expect(res).toHaveStatus(400);
    expect(res.body.code).toBe('unknown_parameter');
    expect(res.body.detail).toBe('foo is not a known parameter; this endpoint takes no query parameters');
  });

  it('refuses a parameter given twice', async () => {
    await expect400('?page=1&page=2', 'page');
    await expect400('?commune=Luxembourg&commune=Mamer', 'commune');
  });

  for (const [qs, param] of [
    ['?page=0', 'page'],
    ['?page=-1', 'page'],
    ['?page=abc', 'page'],
    ['?page=1.5', 'page'],
    ['?page=', 'page'],
    ['?per_page=0', 'per_page'],
    ['?per_page=101', 'per_page'],
    ['?per_page=1000', 'per_page'],
    ['?min_price=12abc', 'min_price'],
    ['?min_price=1e3', 'min_price'],
    ['?min_price=1.5', 'min_price'],
    ['?min_price=-1', 'min_price'],
    ['?max_price=-5', 'max_price'],
    ['?min_price=99999999999999999999', 'min_price'],
    ['?min_rooms=-1', 'min_rooms'],
    // `-0` carries a sign as `+5` does (an outside probe of stop 51: served).
    ['?min_rooms=-0', 'min_rooms'],
    ['?max_price=-00', 'max_price'],
    ['?page=-0', 'page'],
    ['?min_rooms=two', 'min_rooms'],
    ['?min_price=2000&max_price=1000', 'min_price'],
    ['?listing_type=HOUSE', 'listing_type'],
    ['?student=yes', 'student'],
    ['?student=', 'student'],
    ['?sort=cheapest', 'sort'],
    ['?sort=distance', 'sort'],
    ['?lat=49.6', 'lng'],
    ['?lat=49.6', 'radius_km'],
    ['?lat=49.6&lng=6.1', 'radius_km'],
    ['?radius_km=2', 'lat'],
    ['?lat=91&lng=6&radius_km=1', 'lat'],
    ['?lat=49&lng=181&radius_km=1', 'lng'],
    ['?lat=49&lng=6&radius_km=0', 'radius_km'],
    ['?lat=49&lng=6&radius_km=101', 'radius_km'],
    ['?lat=49&lng=6&radius_km=-1', 'radius_km'],
    ['?lat=NaN&lng=6&radius_km=1', 'lat'],
    ['?lat=Infinity&lng=6&radius_km=1', 'lat'],
    ['?lat=1e1&lng=6&radius_km=1', 'lat'],
    ['?commune=', 'commune'],
    ['?commune=Parisss', 'commune'],
    [`?commune=${'x'.repeat(5000)}`, 'commune'],
    ['?flagged=maybe', 'flagged'],
  ] as const) {
    it(`400 for ${qs.slice(0, 60)}`, async () => {
      await expect400(qs, param);
    });
  }

  it('names every missing parameter of a partial geo triple', async () => {
    const body = await expect400('?lat=49.6', 'lng');
    expect(body.errors.map((e: { param: string }) => e.param).sort()).toEqual(['lng', 'radius_km']);
  });

  it('suggests communes for a misspelt name', async () => {
    const body = await expect400('?commune=Esch-sur-Alzete', 'commune');
    expect(body.suggestions).toContain('Esch-sur-Alzette');
    expect(body.suggestions.length).toBeLessThanOrEqual(3);
    expect(body.detail).toContain('did you mean');
  });

  // An outside probe of stop 51: 60 letters each with a combining accent (120 code points) were
  // "more than 100 characters".
  it('counts a name\'s length in characters as people count them', async () => {
    const accented = (n: number) => encodeURIComponent('e\u0301'.repeat(n));
    const sixty = await expect400(`?commune=${accented(60)}`, 'commune');
    expect(sixty.detail).not.toContain('at most 100 characters');
    const long = await expect400(`?commune=${accented(101)}`, 'commune');
    expect(long.detail).toContain('at most 100 characters');
    expect(long.detail).not.toContain('code units');
  });

  // An outside probe of stop 55: one letter and 400 combining accents is one character; the
  // limit it passes is the one on code units, and the error said "at most 100 characters".
  it.each([
    ['commune', 400, 100],
    ['source', 256, 64],
  ])('names the limit of %s on UTF-16 code units when that is the one passed', async (name, units, chars) => {
    const marks = (n: number) => encodeURIComponent(`a${'\u0301'.repeat(n)}`);
    const over = await expect400(`?${name}=${marks(units)}`, name);
    expect(over.detail).toContain(`at most ${units} UTF-16 code units in all (and ${chars} characters)`);
    // One code unit less: within both limits (a commune of that name is unknown, a source is not).
    expect(JSON.stringify((await get(`?${name}=${marks(units - 1)}`)).body)).not.toMatch(/code units|at most \d+ characters/);
    // Spaces at the ends count (the bound the OpenAPI document states: an outside re-check of
    // stop 58 had 5,000 after a source taken).
    const padded = await expect400(`?${name}=native${'%20'.repeat(units)}`, name);
    expect(padded.detail).toContain(`at most ${units} UTF-16 code units in all`);
    expect(JSON.stringify((await get(`?${name}=${'%20'.repeat(units - 7)}native`)).body)).not.toMatch(/code units|at most \d+ characters/);
  });

  // Linking words are passed over wherever they stand (integrators.md): refusing a name cut
  // short after one (`Esch sur`) was tried at stop 51, and its re-check found real spellings
  // refused (`Erpeldange s/S`, `Redange sur`).
  it('reads a name with a linking word at its end as the name before it', async () => {
    const added = [await insertListing(t.db, { commune: 'Esch-sur-Alzette', locality: null }), await insertListing(t.db, { commune: 'Erpeldange-sur-Sûre', locality: null })];
    try {
      const communes = async (commune: string) => {
        const res = await get(`?commune=${encodeURIComponent(commune)}`);
        expect(res, commune).toHaveStatus(200);
        return [...new Set(res.body.data.map((l: { commune: string }) => l.commune))];
      };
      expect(await communes('Esch sur')).toEqual(['Esch-sur-Alzette']);
      expect(await communes('Erpeldange s/S')).toEqual(['Erpeldange-sur-Sûre']);
    } finally {
      await t.db('listings').whereIn('id', added.map((l) => l.id)).delete();
    }
  });

  it('suggests a commune typed without its filler words, or misspelt', async () => {
    for (const [typed, meant] of [
      ['Esch Alzet', 'Esch-sur-Alzette'],
      ['Diffrdange', 'Differdange'],
      ['Diekrich', 'Diekirch'],
    ] as const) {
      const body = await expect400(`?commune=${encodeURIComponent(typed)}`, 'commune');
      expect(body.suggestions, typed).toContain(meant);
    }
  });

  it('accepts every valid form', async () => {
    for (const qs of [
      '?page=1&per_page=100',
      '?per_page=1',
      '?listing_type=rent',
      '?listing_type=FlatShare',
      '?student=true',
      '?student=1',
      '?student=false',
      '?student=0',
      '?lat=49.6116&lng=6.1319&radius_km=100',
      '?lat=-90&lng=-180&radius_km=0.001',
      '?sort=-price',
      '?sort=createdAt',
      '?min_price=0&max_price=0',
      '?min_price=1000&max_price=1000',
      '?flagged=true',
    ]) {
      const res = await get(qs);
      expect(res, qs).toHaveStatus(200);
    }
  });

  it('treats SQL-looking and hostile values as bad input or no match, never a 500', async () => {
    const hostile = [
      "?commune=' OR 1=1 --",
      '?commune=Luxembourg%27%3B%20DROP%20TABLE%20listings%3B--',
      "?source=' OR '1'='1",
      '?source=%00',
      '?sort=price;DROP TABLE listings',
      '?listing_type=RENT%27--',
      '?commune=%F0%9F%8F%A0',
      '?commune=%E0%A4%A',
      `?source=${'a'.repeat(8000)}`,
      '?page=1%00',
    ];
    for (const qs of hostile) {
      const res = await get(qs);
      expect([200, 400], `${qs.slice(0, 60)} -> ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`).toContain(res.status);
      if (res.status === 200) expect(res.body.data).toEqual([]);
    }
    const [{ count }] = await t.db('listings').count<{ count: number }[]>('* as count');
    expect(Number(count)).toBe(1);
  });

  // Stop 45, an outside probe: a decimal just beyond a bound read as the bound once made a double
  // (lat=90.000000000000001 was served); the long s (ſ) read as S and the Kelvin sign as k, so
  // `ſale` was SALE and `weeK` week; /openapi.json took any query string.
  it('a decimal just beyond a bound is refused, one just within it served; letter case is folded for ASCII letters only', async () => {
    await expect400('?lat=90.000000000000001&lng=6&radius_km=1', 'lat');
    await expect400('?lat=-90.0000000000000001&lng=6&radius_km=1', 'lat');
    await expect400('?lat=49&lng=180.00000000000001&radius_km=1', 'lng');
    await expect400('?lat=49&lng=6&radius_km=100.0000000000000001', 'radius_km');
    for (const qs of ['?lat=89.99999999999999999&lng=6&radius_km=1', '?lat=90.000&lng=-180&radius_km=100.0', '?lat=49&lng=6&radius_km=99.99999999999999999']) expect(await get(qs), qs).toHaveStatus(200);
    await expect400('?listing_type=%C5%BFALE', 'listing_type');
    expect(await get('?listing_type=sAlE&student=TRUE')).toHaveStatus(200);
    const kelvin = await request(t.app).get('/api/v1/market/history?commune=Luxembourg&interval=wee%E2%84%AA').set(bearer(t.keys.pro));
    expect(kelvin.body.errors).toEqual([{ param: 'interval', message: 'must be one of week, month' }]);
    for (const qs of ['?x=1', '?%FF']) {
      const doc = await request(t.app).get(`/api/v1/openapi.json${qs}`);
      expect(doc, qs).toHaveStatus(400);
      expect(doc.body.code, qs).toBe(qs === '?x=1' ? 'unknown_parameter' : 'invalid_parameter');
    }
    expect(await request(t.app).get('/api/v1/openapi.json')).toHaveStatus(200);
  });

  // An outside probe of stop 46: invisible characters inside a name were dropped, and the name
  // served as if they were not there.
  it('a name with an invisible character in it is refused, on the API and on /market', async () => {
    // Also every other code point that shows nothing (stop 56: U+17B4, U+2065, U+FFF0, U+E0080).
    for (const c of ['%E2%80%8B', '%E2%80%AE', '%C2%AD', '%EF%BB%BF', '%EF%B8%8F', '%E2%80%8D', '%E2%81%A0', '%F3%A0%84%80', '%E1%A0%8B', '%CD%8F', '%E3%85%A4', '%E1%9E%B4', '%E2%81%A5', '%EF%BF%B0', '%F3%A0%82%80']) {
      const body = await expect400(`?commune=Lux${c}embourg`, 'commune');
      expect(body.errors[0].message).toMatch(/must not contain invisible characters/);
      await expect400(`?commune=Luxembourg${c}`, 'commune');
      await expect400(`?source=native${c}`, 'source');
      const page = await request(t.app).get(`/market?commune=Lux${c}embourg`);
      expect(page, c).toHaveStatus(400);
      expect(page.text).toContain('commune must not contain invisible characters');
    }
    // The country's name before a place outside the City is that place (as the importer reads it).
    for (const c of ['Luxembourg-Howald', 'Lux%20Bertrange', 'Luxembourg%20-%20Hesperange']) expect(await get(`?commune=${c}`), c).toHaveStatus(200);
    // Accents written as combining marks (NFD) are letters, not invisible.
    expect(await get('?commune=Le%CC%88tzebuerg')).toHaveStatus(200);
    expect(await request(t.app).get('/market?commune=Le%CC%88tzebuerg')).toHaveStatus(200);
  });

  // An outside probe of stop 56: symbols, emoji, private-use characters and noncharacters inside a
  // name were dropped with the rest of what is not a letter or a digit, and the name served.
  it('a name with a symbol, an emoji, a private-use character or a noncharacter in it is refused, on the API and on /market', async () => {
    for (const c of ['%F0%9F%98%80', '%EE%80%80', '%EF%BF%BE', '%3C', '%7C', '%2B', '%E2%82%AC']) {
      const body = await expect400(`?commune=Lux${c}embourg`, 'commune');
      expect(body.errors[0].message, c).toMatch(/must not contain symbols, emoji or private-use characters/);
      await expect400(`?source=native${c}`, 'source');
      const page = await request(t.app).get(`/market?commune=Lux${c}embourg`);
      expect(page, c).toHaveStatus(400);
      expect(page.text).toContain('commune must not contain symbols');
    }
    // Punctuation between words stays a separator, as hyphens and spaces are.
    // ... and so are an acute or grave accent typed for an apostrophe (its re-check).
    for (const name of ['Esch%2FAlzette', 'Esch-sur-Alzette', 'Esch%20s%2F%20Alzette', 'Vall%C3%A9e%20de%20l%C2%B4Ernz', 'Vall%C3%A9e%20de%20l%60Ernz']) {
      expect(await get(`?commune=${name}`), name).toHaveStatus(200);
    }
  });

  // An outside probe of stop 47: a tab or a line break at a name's end was trimmed (200), inside
  // it refused.
  it('a control character at either end of a name is refused as inside it; spaces at the ends are trimmed', async () => {
    // The line and paragraph separators too (stop 56).
    for (const c of ['%0A', '%09', '%0D%0A', '%0B', '%0C', '%E2%80%A8', '%E2%80%A9']) {
      const body = await expect400(`?commune=Luxembourg${c}`, 'commune');
      expect(body.errors[0].message).toBe('must not contain control characters');
      await expect400(`?commune=${c}Luxembourg`, 'commune');
      await expect400(`?source=${c}native${c}`, 'source');
      const history = await request(t.app).get(`/api/v1/market/history?commune=Strassen${c}`).set(bearer(t.keys.pro));
      expect(history, c).toHaveStatus(400);
    }
    expect(await get('?commune=%20Luxembourg%20')).toHaveStatus(200);
  });

  it("market history's interval in any letter case, as listing_type", async () => {
    const res = await request(t.app).get('/api/v1/market/history?commune=Luxembourg&interval=WEEK').set(bearer(t.keys.pro));
    expect(res).toHaveStatus(200);
    expect(res.body.meta.interval).toBe('week');
    const bad = await request(t.app).get('/api/v1/market/history?commune=Luxembourg&interval=Day').set(bearer(t.keys.pro));
    expect(bad.body.errors).toEqual([{ param: 'interval', message: 'must be one of week, month' }]);
  });

  it('a path no route serves is named whole in the 404 (the API prefix was dropped)', async () => {
    for (const p of ['/api/v1', '/api/v1/', '/api/v1//listings', '/api/v1/nothing-here']) {
      const res = await request(t.app).get(`${p}?x=1`).set(bearer(t.keys.pro));
      expect(res, p).toHaveStatus(404);
      expect(res.body, p).toMatchObject({ code: 'not_found', detail: `No route for GET ${p}` });
    }
  });

  it('the single-listing route refuses query parameters and answers 404 for odd ids', async () => {
    const res = await request(t.app).get('/api/v1/listings/lst_x?foo=1').set(bearer(t.keys.pro));
    expect(res).toHaveStatus(400);
    for (const id of ['%27%20OR%201%3D1', 'x'.repeat(500), '..%2F..%2Fetc%2Fpasswd', '%00']) {
      const r = await request(t.app).get(`/api/v1/listings/${id}`).set(bearer(t.keys.pro));
      expect(r, id).toHaveStatus(404);
      expect(r.body.code).toBe('not_found');
    }
  });

  it('market prices and stats refuse unknown parameters too', async () => {
    const m = await request(t.app).get('/api/v1/market/prices?comune=Mamer').set(bearer(t.keys.pro));
    expect(m).toHaveStatus(400);
    expect(m.body.code).toBe('unknown_parameter');
    const s = await request(t.app).get('/api/v1/stats?x=1');
    expect(s).toHaveStatus(400);
    expect(s.body.code).toBe('unknown_parameter');
    const c = await request(t.app).get('/api/v1/market/prices?commune=Nowhereville').set(bearer(t.keys.pro));
    expect(c).toHaveStatus(400);
    expect(c.body.errors[0].param).toBe('commune');
  });
});
