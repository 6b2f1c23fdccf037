import { NATIVE_SOURCE } from '../domain/listing.js';
import { resolvePlace } from '../ingest/place.js';
import { AGENCY_BY_NAME } from './agencies.js';
import type { Rng } from './random.js';
import { aliasesOf, postcodeOf, type Place, type Reference, type Spot } from './reference.js';

// Places as each source writes them: the commune in its languages and spellings, a
// locality or quarter, a postcode, each agency its own way.

// How a copy gives its place: for openimmo ort / regionaler_zusatz / plz; for csv the
// Localité column (town) and Code postal; for json address.locality or address.commune
// (town) and address.locality (quarter); for a native post the commune text (town).
export interface PlaceText {
  town: string | null;
  quarter: string | null;
  postcode: string | null;
}

const stripAccents = (s: string) => s.normalize('NFKD').replace(/\p{M}+/gu, '');

function communeForms(place: Place): [string, number][] {
  const c = place.commune;
  return [
    [c.name, 6],
    [c.name_lb, 1.2],
    [c.name_de, 0.8],
    [c.name.toUpperCase(), 1],
    [stripAccents(c.name), 1],
    [stripAccents(c.name).toUpperCase(), 0.5],
    [c.name.toLowerCase(), 0.4],
    ...aliasesOf(c.name).map((a): [string, number] => [a, 0.6]),
  ];
}

function postcodeText(rng: Rng, place: Place, spot: Spot, missing: number): string | null {
  if (rng.chance(missing)) return null;
  const n = String(postcodeOf(place, spot.locality));
  return rng.weighted([
    [`L-${n}`, 5],
    [n, 4],
    [`L${n}`, 0.5],
    [`L ${n}`, 0.5],
  ]);
}

// A way of writing the place that the importer resolves back to the property's commune
// (and locality, or none). Candidates the gazetteer would read otherwise (a locality name
// several communes share, a compound it does not know) are replaced by plainer ones.
export function placeText(rng: Rng, ref: Reference, source: string, place: Place, spot: Spot): PlaceText {
  const commune = place.commune.name;
  const q = spot.locality;
  const city = commune === 'Luxembourg';
  const form = () => rng.weighted(communeForms(place));
  let candidate: PlaceText;
  if (source === NATIVE_SOURCE) {
    candidate = { town: q && !city && rng.chance(0.4) ? q : rng.weighted(place.typedNames), quarter: null, postcode: null };
  } else {
    const agency = AGENCY_BY_NAME.get(source)!;
    const postcode = postcodeText(rng, place, spot, agency.format === 'json' ? 0.1 : 0.25);
    if (agency.format === 'openimmo') {
      candidate = !q
        ? { town: form(), quarter: null, postcode }
        : rng.weighted<PlaceText>([
            [{ town: form(), quarter: q, postcode }, 6],
            [{ town: q, quarter: null, postcode }, 2.5],
            [{ town: form(), quarter: null, postcode }, 1],
          ]);
    } else if (agency.format === 'csv') {
      const texts: [string, number][] = !q
        ? communeForms(place)
        : city
          ? [[`Luxembourg-${q}`, 4], [q, 3], [`${q} (Luxembourg)`, 1], [`LUXEMBOURG-${q.toUpperCase()}`, 1], [form(), 1]]
          : [[q, 5], [q.toUpperCase(), 1], [stripAccents(q), 1], [`${q} (${commune})`, 1], [form(), 1.5]];
      candidate = { town: rng.weighted(texts), quarter: null, postcode };
    } else if (source === 'minett-homes') {
      candidate = { town: form(), quarter: q && rng.chance(0.85) ? q : null, postcode };
    } else {
      candidate = { town: q && rng.chance(0.9) ? q : form(), quarter: null, postcode };
    }
  }
  const fallbacks: PlaceText[] = [candidate, { town: commune, quarter: q, postcode: candidate.postcode }, { town: commune, quarter: null, postcode: null }];
  return fallbacks.find((t) => resolvesTo(ref, t, commune, q))!;
}

function resolvesTo(ref: Reference, t: PlaceText, commune: string, locality: string | null): boolean {
  const r = resolvePlace(ref.gazetteer, { town: t.town, quarter: t.quarter, postcode: t.postcode, coords: null });
  return r.ok && r.commune === commune && (r.locality === null || r.locality === locality);
}
