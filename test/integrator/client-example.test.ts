import { readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { describe as describeListing, findListings, queryString } from '../../client/example.js';
import { projectRoot } from '../../src/lib/paths.js';
import { useTestContext } from '../helpers/context.js';
import { insertListing } from '../helpers/factory.js';

// Issue 10, item 14: the typed-client example sent `min_rooms=undefined` (400) for a parameter
// left undefined, and README's snippet (now in docs/integrators.md) was not the code of
// client/example.ts.

const t = useTestContext({ app: 'api', keys: ['free'] });
let base: string;

beforeAll(async () => {
  ({ base } = await t.listen());
  await insertListing(t.db, { title: 'Two rooms in Kirchberg', price_eur: 2100, rooms: 2, locality: 'Kirchberg' });
  await insertListing(t.db, { title: 'Studio', price_eur: 1200, rooms: 1 });
});

describe('client/example.ts', () => {
  it('leaves undefined and null parameters out of the query string', () => {
    expect(queryString({ commune: 'Kirchberg', min_rooms: undefined, max_price: 3000, student: false, source: null })).toBe('?commune=Kirchberg&max_price=3000&student=false');
    expect(queryString({ min_rooms: undefined })).toBe('');
    expect(queryString({ commune: 'Lëtzebuerg & co' })).toBe('?commune=L%C3%ABtzebuerg+%26+co');
  });

  it('calls the API with a parameter left undefined (200, not 400 "min_rooms=undefined")', async () => {
    const filters: { min_rooms?: number } = {}; // e.g. an optional form field left empty
    const page = await findListings(base, t.keys.free, { commune: 'Luxembourg', max_price: 3000, min_rooms: filters.min_rooms, sort: 'price' });
    expect(page.meta.total).toBe(2);
    expect(page.data.map(describeListing)).toEqual(['Studio – 1200 EUR, 60 m², Luxembourg', 'Two rooms in Kirchberg – 2100 EUR, 60 m², Luxembourg (Kirchberg)']);
    expect((await findListings(base, t.keys.free)).meta.total).toBe(2);
    await expect(findListings(base, t.keys.free, { per_page: 0 })).rejects.toThrow(/^400 invalid_parameter: /);
  });

  it('is what the integrators\' guide (docs/integrators.md) shows, verbatim', () => {
    const guide = readFileSync(path.join(projectRoot, 'docs/integrators.md'), 'utf8');
    const at = guide.indexOf('`client/example.ts`, verbatim');
    expect(at).toBeGreaterThan(0);
    const open = guide.indexOf('```ts\n', at);
    const close = guide.indexOf('```\n', open + 6);
    const shown = guide
      .slice(open + 6, close)
      .split('\n')
      .map((l) => l.replace(/^ {2}/, ''))
      .join('\n')
      .trimEnd();
    expect(shown).toBe(readFileSync(path.join(projectRoot, 'client/example.ts'), 'utf8').trimEnd());
  });
});
