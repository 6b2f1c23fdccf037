// Mirroring the feed with the typed client (client/api-types.ts, from `npm run gen:client`):
// an export (Pro, Enterprise) or a walk through /changes from the beginning, then a daily run
// from the stored cursor. Bring your own storage: a Mirror says how to keep a listing, drop
// one and keep the cursor.
import type { components, operations } from './api-types.js';

type Listing = components['schemas']['Listing'];
type ChangesPage = operations['listChanges']['responses']['200']['content']['application/json'];
type Problem = components['schemas']['Problem'];

export interface Mirror {
  cursor(): Promise<string | undefined>; // the cursor stored by the last run, if any
  upsert(listing: Listing): Promise<void>;
  remove(id: string): Promise<void>;
  clear(): Promise<void>; // drop every listing: a load from scratch (no cursor stored yet)
  saveCursor(cursor: string): Promise<void>; // store it with the changes before it (one transaction, ideally)
}

async function get(url: string, key: string): Promise<Response> {
  const res = await fetch(url, { headers: { Authorization: `Bearer ${key}`, 'Accept-Encoding': 'br, gzip' } });
  if (!res.ok) {
    const problem = (await res.json()) as Problem;
    throw new Error(`${problem.status} ${problem.code}: ${problem.detail}`);
  }
  return res;
}

// Pro and Enterprise: every listing in one request, from one snapshot, and the cursor from
// which /changes goes on exactly after it.
export async function exportAll(baseUrl: string, key: string, mirror: Mirror): Promise<number> {
  const res = await get(`${baseUrl}/api/v1/listings/export`, key);
  // From scratch: what an export cut short left behind may hold listings withdrawn since,
  // which no later change would name.
  await mirror.clear();
  const decoder = new TextDecoder();
  let rest = '';
  let n = 0;
  for await (const chunk of res.body!) {
    rest += decoder.decode(chunk, { stream: true });
    let nl: number;
    while ((nl = rest.indexOf('\n')) >= 0) {
      const line = rest.slice(0, nl);
      rest = rest.slice(nl + 1);
      if (line !== '') {
        await mirror.upsert(JSON.parse(line) as Listing);
        n++;
      }
    }
  }
  await mirror.saveCursor(res.headers.get('X-Changes-Cursor')!);
  return n;
}

// Every tier: the changes after the stored cursor (from the beginning without one), page
// by page until up to date. Each page counts as one request against the daily quota.
export async function syncChanges(baseUrl: string, key: string, mirror: Mirror): Promise<{ pages: number; changes: number }> {
  let cursor = await mirror.cursor();
  if (cursor === undefined) await mirror.clear(); // from scratch, as above
  let pages = 0;
  let changes = 0;
  for (;;) {
    const qs = new URLSearchParams({ limit: '1000', ...(cursor ? { since: cursor } : {}) });
    const page = (await (await get(`${baseUrl}/api/v1/changes?${qs}`, key)).json()) as ChangesPage;
    for (const change of page.data) {
      if (change.op === 'upsert') await mirror.upsert(change.listing);
      else await mirror.remove(change.id); // withdrawn, merged (into change.merged_into) or hidden
    }
    cursor = page.meta.next_cursor;
    await mirror.saveCursor(cursor);
    pages++;
    changes += page.data.length;
    if (!page.meta.has_more) return { pages, changes };
  }
}

// A mirror in memory, e.g. for a test; a real one writes to your database.
export function memoryMirror(): Mirror & { listings: Map<string, Listing> } {
  const listings = new Map<string, Listing>();
  let stored: string | undefined;
  return {
    listings,
    cursor: async () => stored,
    upsert: async (l) => void listings.set(l.id, l),
    remove: async (id) => void listings.delete(id),
    clear: async () => listings.clear(),
    saveCursor: async (c) => void (stored = c),
  };
}

// const mirror = memoryMirror();
// if (tier is Pro or Enterprise) await exportAll('http://localhost:3000', process.env.KEY!, mirror);
// await syncChanges('http://localhost:3000', process.env.KEY!, mirror); // and again every day
