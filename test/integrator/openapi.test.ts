import Ajv2020Module from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import request from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestContext } from '../helpers/context.js';
import { takeMarketSnapshot } from '../../src/repositories/market-snapshots.js';
import { bearer, createKey, insertListing } from '../helpers/factory.js';

const t = useTestContext({
  app: 'api',
  deps: { config: { PUBLIC_BASE_URL: 'https://api.example.test', TRUST_PROXY: false, STATS_RATE_LIMIT_PER_MINUTE: 2 } },
  keys: ['free', 'pro'],
});
let doc: { paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: object }> }> }>>; components: object };
let listingId: string;
// CommonJS packages under NodeNext: the class and the plugin are the default exports.
const Ajv2020 = Ajv2020Module.default;
const addFormats = addFormatsModule.default;
let ajv: InstanceType<typeof Ajv2020>;

beforeAll(async () => {
  listingId = (await insertListing(t.db, { flags: [], images: ['https://img.example/1.jpg'] })).id;
  await insertListing(t.db, { flags: ['stale'], area_m2: null, rooms: null, lat: null, lng: null, locality: 'Kirchberg' });
  for (const price of [1600, 1700, 2100]) await insertListing(t.db, { price_eur: price });
  for (const price of [650_000, 720_000, 910_000]) await insertListing(t.db, { listing_type: 'SALE', price_eur: price, rooms: 3 });
  // Two days of market snapshots for /market/history.
  await takeMarketSnapshot(t.db, { day: '2026-10-20', takenAt: new Date('2026-10-20T03:00:00Z') });
  await takeMarketSnapshot(t.db, { day: '2026-11-20', takenAt: new Date('2026-11-20T03:00:00Z') });
  const res = await request(t.app).get('/api/v1/openapi.json');
  expect(res).toHaveStatus(200);
  doc = res.body;
  ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema({ ...doc, $id: 'openapi.json' });
});

// Validates a real response against the schema the document gives for its path, method,
// status and content type.
function expectConforms(path: string, res: request.Response) {
  const op = doc.paths[path]?.get;
  expect(op, `document has GET ${path}`).toBeDefined();
  const entry = op.responses[String(res.status)];
  expect(entry, `document lists status ${res.status} for ${path}`).toBeDefined();
  if (res.status === 304) return;
  const type = String(res.headers['content-type']).split(';')[0];
  const media = entry.content?.[type];
  expect(media, `document lists ${type} for ${res.status} on ${path}`).toBeDefined();
  const pointer = JSON.stringify(media!.schema);
  const schema = JSON.parse(pointer.replaceAll('"#/components/', '"openapi.json#/components/'));
  const validate = ajv.compile(schema);
  const ok = validate(res.body);
  expect(ok, `${path} ${res.status}: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(res.body).slice(0, 500)}`).toBe(true);
}

describe('OpenAPI document', () => {
  it('is OpenAPI 3.1 with the bearer scheme, tiers in the description and every error code', () => {
    const d = doc as unknown as { openapi: string; info: { description: string }; components: { securitySchemes: object; schemas: { Problem: { properties: { code: { enum: string[] } } } } } };
    expect(d.openapi).toBe('3.1.0');
    expect(d.components.securitySchemes).toEqual({ bearerAuth: expect.objectContaining({ type: 'http', scheme: 'bearer' }) });
    expect(d.info.description).toContain('| Free | 100 | no |');
    expect(d.components.schemas.Problem.properties.code.enum).toEqual(
      expect.arrayContaining(['invalid_parameter', 'unknown_parameter', 'unauthorized', 'invalid_key', 'forbidden_for_tier', 'not_found', 'quota_exceeded', 'rate_limited', 'unavailable', 'internal']),
    );
  });

  // An outside probe: the document never named the 405 every route gives to other methods.
  it('documents 405 method_not_allowed, with Allow, on every operation', () => {
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops as Record<string, { responses: Record<string, { headers?: object }> }>)) {
        expect(op.responses['405'], `${method} ${path}`).toMatchObject({ headers: { Allow: expect.anything() } });
      }
    }
  });

  it('documents every query parameter with its rules, from the zod schemas', () => {
    const params = (doc.paths['/api/v1/listings'].get as unknown as { parameters: { name: string; schema: Record<string, unknown> }[] }).parameters;
    const byName = Object.fromEntries(params.map((p) => [p.name, p.schema]));
    expect(byName.per_page).toEqual({ type: 'integer', minimum: 1, maximum: 100, default: 20 });
    expect(byName.page).toMatchObject({ type: 'integer', minimum: 1, default: 1 });
    expect(byName.radius_km).toEqual({ type: 'number', exclusiveMinimum: 0, maximum: 100 });
    expect(byName.listing_type).toEqual({ type: 'string', enum: ['RENT', 'SALE', 'SUBLET', 'FLATSHARE'] });
    expect(byName.sort.enum).toContain('distance');
    expect(Object.keys(byName).sort()).toEqual(
      ['commune', 'min_price', 'max_price', 'min_rooms', 'listing_type', 'source', 'student', 'flagged', 'lat', 'lng', 'radius_km', 'page', 'per_page', 'sort'].sort(),
    );
  });

  // An outside probe of stop 58: maxLength 100 (JSON Schema counts code points) refused 100
  // letters with an accent each, which the API takes as 100 characters.
  it("a text parameter's documented bound takes every value the API takes", async () => {
    const accented = 'e\u0301'.repeat(100); // 100 characters, 200 code points
    for (const [path, name] of [['/api/v1/listings', 'commune'], ['/api/v1/listings', 'source'], ['/api/v1/market/prices', 'commune'], ['/api/v1/market/history', 'commune']] as const) {
      const params = (doc.paths[path].get as unknown as { parameters: { name: string; schema: object; description?: string }[] }).parameters;
      const param = params.find((p) => p.name === name)!;
      const value = name === 'source' ? accented.slice(0, 128) : accented;
      expect(ajv.validate(param.schema, value), `${path} ${name}`).toBe(true);
      expect(param.description, `${path} ${name}`).toMatch(/At most \d+ characters as people count them.* and \d+ UTF-16 code units/);
    }
    // The API takes it: a 200 (nothing found) for the listings, not a length error.
    const res = await request(t.app).get(`/api/v1/listings?source=${encodeURIComponent(accented.slice(0, 128))}`).set(bearer(t.keys.pro));
    expect(res).toHaveStatus(200);
  });

  it('every real response conforms to the document (200 and each error status)', async () => {
    const cases: [string, string, Record<string, string>][] = [
      ['/api/v1/listings', '/api/v1/listings', bearer(t.keys.pro)],
      ['/api/v1/listings', '/api/v1/listings?lat=49.6&lng=6.13&radius_km=10', bearer(t.keys.pro)],
      ['/api/v1/listings', '/api/v1/listings', bearer(t.keys.free)],
      ['/api/v1/listings', '/api/v1/listings?per_page=500', bearer(t.keys.free)],
      ['/api/v1/listings', '/api/v1/listings?price_min=1', bearer(t.keys.free)],
      ['/api/v1/listings', '/api/v1/listings?commune=Nowhere', bearer(t.keys.free)],
      ['/api/v1/listings', '/api/v1/listings', {}],
      ['/api/v1/listings', '/api/v1/listings', bearer('lfk_bad')],
      ['/api/v1/listings', '/api/v1/listings?flagged=true', bearer(t.keys.free)],
      ['/api/v1/listings/{id}', `/api/v1/listings/${listingId}`, bearer(t.keys.pro)],
      ['/api/v1/listings/{id}', '/api/v1/listings/lst_nope', bearer(t.keys.pro)],
      ['/api/v1/listings/{id}', '/api/v1/listings/lst_nope', {}],
      ['/api/v1/market/prices', '/api/v1/market/prices', bearer(t.keys.pro)],
      ['/api/v1/market/prices', '/api/v1/market/prices?commune=Vianden', bearer(t.keys.pro)],
      ['/api/v1/market/prices', '/api/v1/market/prices?commune=Kirchberg', bearer(t.keys.pro)],
      ['/api/v1/market/prices', '/api/v1/market/prices?x=1', bearer(t.keys.pro)],
      ['/api/v1/market/prices', '/api/v1/market/prices?listing_type=SALE', bearer(t.keys.pro)],
      ['/api/v1/market/prices', '/api/v1/market/prices?listing_type=SALE&rooms=3&commune=Luxembourg', bearer(t.keys.pro)],
      ['/api/v1/market/prices', '/api/v1/market/prices?rooms=2', bearer(t.keys.pro)],
      ['/api/v1/market/prices', '/api/v1/market/prices?rooms=9', bearer(t.keys.pro)],
      ['/api/v1/market/history', '/api/v1/market/history?commune=Luxembourg&from=2026-01-01&to=2026-11-30', bearer(t.keys.pro)],
      ['/api/v1/market/history', '/api/v1/market/history?commune=Luxembourg&listing_type=SALE&interval=week&from=2026-10-01&to=2026-11-30', bearer(t.keys.pro)],
      ['/api/v1/market/history', '/api/v1/market/history?commune=Luxembourg&rooms=5&from=2026-01-01&to=2026-11-30', bearer(t.keys.pro)],
      ['/api/v1/market/history', '/api/v1/market/history?commune=Kirchberg', bearer(t.keys.pro)],
      ['/api/v1/market/history', '/api/v1/market/history?commune=Luxembourg&from=2026-02-30', bearer(t.keys.pro)],
      ['/api/v1/market/history', '/api/v1/market/history', {}],
      ['/api/v1/communes', '/api/v1/communes', bearer(t.keys.pro)],
      ['/api/v1/communes', '/api/v1/communes', bearer('lfk_' + 'q'.repeat(43))],
      ['/api/v1/stats', '/api/v1/stats', {}],
      ['/api/v1/stats', '/api/v1/stats?x=1', {}],
      ['/api/v1/stats', '/api/v1/stats', {}], // third: over the test's limit of 2 a minute -> 429
      ['/healthz', '/healthz', {}],
      ['/readyz', '/readyz', {}],
    ];
    const seen = new Set<string>();
    for (const [path, url, headers] of cases) {
      const res = await request(t.app).get(url).set(headers);
      seen.add(`${path} ${res.status}`);
      expectConforms(path, res);
    }
    for (const expected of ['/api/v1/market/history 200', '/api/v1/market/history 400', '/api/v1/market/history 401', '/api/v1/listings 200', '/api/v1/listings 400', '/api/v1/listings 401', '/api/v1/listings 403', '/api/v1/listings/{id} 404', '/api/v1/stats 429']) {
      expect(seen).toContain(expected);
    }
  });

  it('a 429 quota answer conforms too', async () => {
    const k = await createKey(t.db, 'free');
    let last: request.Response | undefined;
    for (let i = 0; i < 101; i++) last = await request(t.app).get('/api/v1/communes').set(bearer(k.key));
    expect(last!).toHaveStatus(429);
    expectConforms('/api/v1/communes', last!);
  });

  it('fails when a route exists that the document lacks', () => {
    type Layer = { route?: { path: string; methods: Record<string, boolean> }; name: string; rawPath?: string; handle: { stack?: Layer[] } };
    const routes: string[] = [];
    const walk = (stack: Layer[], prefix: string) => {
      for (const layer of stack) {
        if (layer.route) {
          for (const m of Object.keys(layer.route.methods)) routes.push(`${m.toUpperCase()} ${prefix}${layer.route.path === '/' && prefix ? '' : layer.route.path}`);
        } else if (layer.name === 'router' && layer.handle.stack) {
          walk(layer.handle.stack, prefix + (layer.rawPath && layer.rawPath !== '/' ? layer.rawPath : ''));
        }
      }
    };
    walk((t.app as unknown as { router: { stack: Layer[] } }).router.stack, '');
    expect(routes.length).toBeGreaterThan(5);
    // The JSON API (everything under /api/) and the health checks must be described; the HTML
    // pages and their assets (/docs, /api-keys, /listings/:id, /web/...) are not part of it.
    const api = routes.filter((r) => / \/api\//.test(r) || / \/(healthz|readyz)$/.test(r));
    expect(api).toContain('GET /api/v1/listings/:id');
    const documented = new Set(Object.entries(doc.paths).flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p.replace(/\{(\w+)\}/g, ':$1')}`)));
    const missing = api.filter((r) => !documented.has(r));
    expect(missing, `routes missing from the OpenAPI document: ${missing.join(', ')}`).toEqual([]);
  });
});

// An outside probe: the committed openapi/openapi.json and client/api-types.ts had fallen
// behind the document the API serves (four descriptions changed, the files not regenerated).
describe('the committed OpenAPI document and client types', () => {
  it('are what `npm run gen:client` writes today', async () => {
    const { readFileSync } = await import('node:fs');
    const { execFileSync } = await import('node:child_process');
    const { buildOpenApiDocument } = await import('../../src/http/openapi.js');
    const committed = readFileSync('openapi/openapi.json', 'utf8');
    expect(committed, 'run `npm run gen:client`').toBe(JSON.stringify(buildOpenApiDocument({ serverUrl: 'http://localhost:3000' }), null, 2) + '\n');
    const types = execFileSync('node_modules/.bin/openapi-typescript', ['openapi/openapi.json'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    expect(readFileSync('client/api-types.ts', 'utf8'), 'run `npm run gen:client`').toBe(types);
  });
});
