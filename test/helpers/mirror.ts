import request from 'supertest';
import { expect } from 'vitest';
import type { App } from '../../src/app.js';
import type { ApiChange, ApiChangesPage, ApiListing, ApiListingsPage } from '../../src/http/schemas/responses.js';
import { bearer } from './factory.js';

// A client's mirror of the feed: listings by id, and the
// cursor to go on from.
export interface Mirror {
  listings: Map<string, ApiListing>;
  cursor: string | undefined;
  // Every change received, in order (for assertions on what the feed said).
  log: ApiChange[];
  pages: number;
}

export const emptyMirror = (): Mirror => ({ listings: new Map(), cursor: undefined, log: [], pages: 0 });

export function applyChange(m: Mirror, c: ApiChange): void {
  m.log.push(c);
  if (c.op === 'upsert') m.listings.set(c.id, c.listing);
  else m.listings.delete(c.id);
}

// One page of /changes from the mirror's cursor, applied.
export async function syncPage(app: App, key: string, m: Mirror, limit = 100): Promise<ApiChangesPage> {
  const qs = new URLSearchParams({ limit: String(limit), ...(m.cursor !== undefined ? { since: m.cursor } : {}) });
  const res = await request(app).get(`/api/v1/changes?${qs}`).set(bearer(key));
  expect(res, 'GET /changes').toHaveStatus(200);
  const page = res.body as ApiChangesPage;
  const ids = page.data.map((c) => c.id);
  expect(new Set(ids).size, 'a listing at most once a page').toBe(ids.length);
  for (const c of page.data) applyChange(m, c);
  m.cursor = page.meta.next_cursor;
  m.pages++;
  return page;
}

// Follows next_cursor until has_more is false.
export async function sync(app: App, key: string, m: Mirror, limit = 100): Promise<Mirror> {
  for (let i = 0; i < 100_000; i++) {
    const page = await syncPage(app, key, m, limit);
    if (!page.meta.has_more) return m;
  }
  throw new Error('the changes feed never ended');
}

// Every listing visible to the key, by crawling GET /listings page by page (the data must not
// change meanwhile).
export async function crawl(app: App, key: string): Promise<Map<string, ApiListing>> {
  const all = new Map<string, ApiListing>();
  for (let page = 1; ; page++) {
    const res = await request(app).get(`/api/v1/listings?per_page=100&page=${page}&sort=createdAt`).set(bearer(key));
    expect(res, 'GET /listings').toHaveStatus(200);
    const body = res.body as ApiListingsPage;
    for (const l of body.data) all.set(l.id, l);
    if (page * 100 >= body.meta.total) {
      expect(all.size).toBe(body.meta.total);
      return all;
    }
  }
}

export const sorted = (m: Map<string, ApiListing>) => [...m.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));

export async function expectMirrorEqualsCrawl(app: App, key: string, m: Mirror): Promise<void> {
  const crawled = await crawl(app, key);
  expect(sorted(m.listings)).toEqual(sorted(crawled));
}
