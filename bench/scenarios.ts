// The benchmark scenarios of issue 6. Each produces the next request to send: a path, the
// key to send it with and the status that counts as success (429 for the Free key over its
// quota). Random choices come from the rng the runner passes in (seeded, so a run repeats).

// 'changes': a Pro key of a pool, one after the other, so that the changes feed's clients are
// as many keys as connections (/changes answers 429 at once to a key with nine requests in hand).
export type KeyKind = 'pro' | 'free' | 'changes' | null;

export interface Keys {
  pro: string;
  free: string;
  changes?: string[];
}

let changesTurn = 0;
export function keyOf(keys: Keys, kind: Exclude<KeyKind, null>): string {
  if (kind !== 'changes') return keys[kind];
  return keys.changes?.length ? keys.changes[changesTurn++ % keys.changes.length] : keys.pro;
}

export interface Req {
  path: string;
  key: KeyKind;
  expect: number;
  kind?: string; // which part of the mix (scenario 9), for its per-kind latencies
}

export interface Scenario {
  id: string;
  name: string;
  next: (rng: () => number) => Req;
  // Whether the results file shows the EXPLAIN of this scenario's SQL (not for the mix).
  explain: boolean;
  // Not driven by autocannon, timed by bench/export.ts: one whole export, or a mirror's walk
  // through the changes feed (from scratch, then after 10,000 changes).
  download?: 'export' | 'walk';
}

export interface ScenarioData {
  ids: string[]; // active, unflagged listing ids
  communes: { name: string; lat: number; lng: number; population: number }[];
  quarters: string[]; // Luxembourg City quarters, also accepted as `commune`
  cursors: string[]; // changes feed cursors at random positions
}

const L = '/api/v1/listings';
const fixed = (path: string, key: KeyKind = 'pro', expect = 200) => () => ({ path, key, expect });

function weighted<T>(rng: () => number, items: [T, number][]): T {
  let r = rng() * items.reduce((s, [, w]) => s + w, 0);
  for (const [item, w] of items) if ((r -= w) < 0) return item;
  return items[items.length - 1][0];
}
const int = (rng: () => number, lo: number, hi: number) => lo + Math.floor(rng() * (hi - lo + 1));
const pickOne = <T>(rng: () => number, xs: T[]) => xs[Math.floor(rng() * xs.length)];
const qs = (o: Record<string, string | number | undefined>) =>
  new URLSearchParams(Object.entries(o).filter((e): e is [string, string | number] => e[1] !== undefined).map(([k, v]) => [k, String(v)])).toString();

export function scenarios(d: ScenarioData): Scenario[] {
  const byPopulation = d.communes.map((c): [(typeof d.communes)[number], number] => [c, c.population]);
  const commune = (rng: () => number) => (rng() < 0.15 ? pickOne(rng, d.quarters) : weighted(rng, byPopulation).name);
  const byId = (rng: () => number): Req => ({ path: `${L}/${pickOne(rng, d.ids)}`, key: 'pro', expect: 200 });

  // Scenario 9: a realistic spread of parameters, so that no cache can hold every answer.
  const mixed: [string, (rng: () => number) => Req, number][] = [
    ['list', (rng) => ({ path: `${L}?${qs({ page: int(rng, 1, 5), sort: pickOne(rng, [undefined, 'price', '-price', 'createdAt']) })}`, key: 'pro', expect: 200 }), 10],
    [
      'filtered',
      (rng) => {
        const type = weighted(rng, [['RENT', 60], ['SALE', 25], ['FLATSHARE', 8], ['SUBLET', 7]] as [string, number][]);
        const [step, lo, hi] = type === 'SALE' ? [50_000, 200_000, 1_500_000] : type === 'RENT' ? [100, 500, 3500] : [50, 300, 1200];
        const min = Math.round((lo + rng() * (hi - lo)) / step) * step;
        const max = min + step * int(rng, 3, 15);
        const q = { commune: rng() < 0.85 ? commune(rng) : undefined, listing_type: type, min_price: rng() < 0.8 ? min : undefined, max_price: rng() < 0.8 ? max : undefined };
        return { path: `${L}?${qs({ ...q, min_rooms: rng() < 0.4 ? int(rng, 1, 4) : undefined, page: int(rng, 1, 3) })}`, key: 'pro', expect: 200 };
      },
      25,
    ],
    [
      'geo',
      (rng) => {
        const c = weighted(rng, byPopulation);
        // Inside the country: a commune's centre moved by up to ~2 km.
        const lat = (c.lat + (rng() - 0.5) * 0.036).toFixed(4);
        const lng = (c.lng + (rng() - 0.5) * 0.054).toFixed(4);
        const radius = (0.5 * Math.pow(30, rng())).toFixed(1); // 0.5 .. 15 km, log-uniform
        return { path: `${L}?${qs({ lat, lng, radius_km: radius, page: int(rng, 1, 3), sort: rng() < 0.2 ? 'price' : undefined })}`, key: 'pro', expect: 200 };
      },
      20,
    ],
    [
      'deep page',
      (rng) => ({ path: `${L}?${qs({ page: int(rng, 10, 400), per_page: pickOne(rng, [50, 100]), sort: pickOne(rng, ['price', '-price', 'size', '-size', 'createdAt']) })}`, key: 'pro', expect: 200 }),
      5,
    ],
    ['by id', byId, 25],
    ['market all', fixed('/api/v1/market/prices'), 3],
    ['market one', (rng) => ({ path: `/api/v1/market/prices?${qs({ commune: commune(rng) })}`, key: 'pro', expect: 200 }), 5],
    [
      'market by type and rooms',
      (rng) => ({ path: `/api/v1/market/prices?${qs({ listing_type: pickOne(rng, ['RENT', 'SALE', 'FLATSHARE']), rooms: rng() < 0.7 ? int(rng, 0, 5) : undefined, commune: rng() < 0.5 ? commune(rng) : undefined })}`, key: 'pro', expect: 200 }),
      3,
    ],
    [
      'market history',
      (rng) => ({ path: `/api/v1/market/history?${qs({ commune: weighted(rng, byPopulation).name, rooms: rng() < 0.5 ? int(rng, 1, 5) : undefined, interval: pickOne(rng, ['month', 'week']) })}`, key: 'pro', expect: 200 }),
      3,
    ],
    ['stats', fixed('/api/v1/stats', null), 2],
    ['free 429', fixed(`${L}?per_page=5`, 'free', 429), 5],
  ];
  const mix = (rng: () => number): Req => {
    const [kind, gen] = weighted(rng, mixed.map(([k, g, w]): [[string, (rng: () => number) => Req], number] => [[k, g], w]));
    return { ...gen(rng), kind };
  };

  // Scenario 10: a fresh filter or radius query on every request, never one seen before in
  // the run (so no answer, count or page cache can help); the same stream goes to the bare
  // node:http + pg baseline (bench/bare-server.ts).
  const seen = new Set<string>();
  const fresh = (rng: () => number): Req => {
    for (;;) {
      let path: string;
      if (rng() < 0.5) {
        const type = weighted(rng, [['RENT', 60], ['SALE', 25], ['FLATSHARE', 8], ['SUBLET', 7]] as [string, number][]);
        const [lo, hi] = type === 'SALE' ? [150_000, 1_500_000] : type === 'RENT' ? [500, 3500] : [300, 1200];
        const min = Math.round(lo + rng() * (hi - lo));
        const max = Math.round(min * (1.1 + rng() * 1.5));
        path = `${L}?${qs({ commune: rng() < 0.85 ? weighted(rng, byPopulation).name : undefined, listing_type: type, min_price: min, max_price: max, min_rooms: rng() < 0.4 ? int(rng, 1, 4) : undefined, page: int(rng, 1, 3) })}`;
      } else {
        const c = weighted(rng, byPopulation);
        const lat = (c.lat + (rng() - 0.5) * 0.036).toFixed(5);
        const lng = (c.lng + (rng() - 0.5) * 0.054).toFixed(5);
        const radius = (0.5 * Math.pow(30, rng())).toFixed(2);
        path = `${L}?${qs({ lat, lng, radius_km: radius, page: int(rng, 1, 3) })}`;
      }
      if (seen.has(path)) continue;
      seen.add(path);
      return { path, key: 'pro', expect: 200, kind: path.includes('radius_km') ? 'geo' : 'filtered' };
    }
  };

  return [
    { id: '1', name: 'default list', next: fixed(L), explain: true },
    { id: '2', name: 'filtered', next: fixed(`${L}?commune=Luxembourg&listing_type=RENT&min_price=1500&max_price=3000&min_rooms=2`), explain: true },
    { id: '3a', name: 'geo 2 km', next: fixed(`${L}?lat=49.6116&lng=6.1319&radius_km=2`), explain: true },
    { id: '3b', name: 'geo 15 km', next: fixed(`${L}?lat=49.6116&lng=6.1319&radius_km=15`), explain: true },
    { id: '4', name: 'deep page', next: fixed(`${L}?page=200&per_page=100&sort=-price`), explain: true },
    { id: '5', name: 'listing by id', next: byId, explain: true },
    { id: '6a', name: 'market, all communes', next: fixed('/api/v1/market/prices'), explain: true },
    { id: '6b', name: 'market, one commune', next: fixed('/api/v1/market/prices?commune=Luxembourg'), explain: true },
    { id: '6c', name: 'market, 2 rooms, all communes', next: fixed('/api/v1/market/prices?rooms=2'), explain: true },
    { id: '6d', name: 'market, SALE, all communes', next: fixed('/api/v1/market/prices?listing_type=SALE'), explain: true },
    { id: '6e', name: 'market history, a year by week', next: fixed('/api/v1/market/history?commune=Luxembourg&rooms=2&interval=week&from=2025-12-01'), explain: true },
    { id: '7', name: 'stats (no key)', next: fixed('/api/v1/stats', null), explain: true },
    { id: '8', name: 'Free key over quota', next: fixed(`${L}?per_page=5`, 'free', 429), explain: true },
    { id: '9', name: 'mixed', next: mix, explain: false },
    { id: '10', name: 'fresh query every request', next: fresh, explain: false },
    {
      id: '11',
      name: 'changes, a page of 1,000 from a random cursor',
      next: (rng) => ({ path: `/api/v1/changes?limit=1000&since=${pickOne(rng, d.cursors)}`, key: 'changes', expect: 200 }),
      explain: true,
    },
    { id: '12', name: 'export, every listing', next: fixed(`${L}/export`), explain: false, download: 'export' },
    { id: '13', name: 'changes walk, Starter key: from scratch, then a day of 10,000 changes', next: fixed('/api/v1/changes?limit=1000'), explain: false, download: 'walk' },
  ];
}

// `--scenarios 1,3,6a`: "3" selects 3a and 3b.
export function selectScenarios(all: Scenario[], spec: string | undefined): Scenario[] {
  if (!spec) return all;
  const wanted = spec.split(',').map((s) => s.trim()).filter(Boolean);
  const chosen = all.filter((s) => wanted.some((w) => s.id === w || s.id.replace(/[a-z]$/, '') === w));
  if (chosen.length === 0) throw new Error(`no scenario matches --scenarios ${spec} (ids: ${all.map((s) => s.id).join(', ')})`);
  return chosen;
}
