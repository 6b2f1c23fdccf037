// A typed call to the API with plain fetch, using the types that `npm run gen:client`
// generates from the OpenAPI document (client/api-types.ts).
import type { components, operations } from './api-types.js';

type Listing = components['schemas']['Listing'];
type ListingsQuery = NonNullable<operations['listListings']['parameters']['query']>;
type ListingsPage = operations['listListings']['responses']['200']['content']['application/json'];
type Problem = components['schemas']['Problem'];

// Parameters left undefined (or null) are left out, never sent as "undefined".
export function queryString(query: Record<string, string | number | boolean | null | undefined>): string {
  const qs = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined && value !== null) qs.set(name, String(value));
  return qs.size ? `?${qs}` : '';
}

export async function findListings(baseUrl: string, key: string, query: ListingsQuery = {}): Promise<ListingsPage> {
  const res = await fetch(`${baseUrl}/api/v1/listings${queryString(query)}`, { headers: { Authorization: `Bearer ${key}` } });
  if (!res.ok) {
    const problem = (await res.json()) as Problem;
    throw new Error(`${problem.status} ${problem.code}: ${problem.detail}`);
  }
  return (await res.json()) as ListingsPage;
}

export function describe(l: Listing): string {
  return `${l.title} – ${l.price_eur} EUR, ${l.area_m2 ?? '?'} m², ${l.commune}${l.locality ? ` (${l.locality})` : ''}`;
}

// const page = await findListings('http://localhost:3000', process.env.KEY!, { commune: 'Kirchberg', listing_type: 'RENT', max_price: 3000 });
// for (const l of page.data) console.log(describe(l));
