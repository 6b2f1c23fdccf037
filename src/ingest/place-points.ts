import { haversineKm, placeKey, type Gazetteer, type LocalityRef } from '../reference/gazetteer.js';
import { cantonsOfRegion } from './postcode.js';

// Which of several places a name may be (place.ts, resolvePlace): narrowed by the town and the
// postcode, and by the reference points of places (communes.csv, localities.csv) near a
// record's coordinates.

// Coordinates further than this from every reference point of the commune a record's text
// names (its own and its localities') are not in that commune: no commune of Luxembourg has a
// place more than about 4 km from one of its points.
export const PLACE_COORDS_FAR_KM = 8;

// The locality bearing one of `texts` as a name (any of its forms) whose point lies nearest
// `coords`, within PLACE_COORDS_FAR_KM of them; else null.
export function nearbyLocalityNamed(gz: Gazetteer, texts: string[], coords: { lat: number; lng: number }): { commune: string; locality: string } | null {
  const keys = new Set(texts.map(placeKey));
  let best: { commune: string; locality: string; km: number } | null = null;
  for (const c of gz.communes) {
    for (const l of gz.localitiesOf(c.name)) {
      if (l.lat === null || l.lng === null || !namesOf(l).some((n) => keys.has(placeKey(n)))) continue;
      const km = haversineKm(coords.lat, coords.lng, l.lat, l.lng);
      if (km <= PLACE_COORDS_FAR_KM && (!best || km < best.km)) best = { commune: c.name, locality: l.locality, km };
    }
  }
  return best && { commune: best.commune, locality: best.locality };
}

// Of `communes`, the one with a reference point nearest `coords`, within PLACE_COORDS_FAR_KM; else
// null. For a name several communes answer to when the commune the coordinates are nearest is
// none of them (an outside probe: "Esch" 1.5-4 km from Esch-sur-Sûre, nearer Goesdorf's point,
// was Esch-sur-Alzette, 45 km away, its coordinates dropped).
export function nearestByPoints(gz: Gazetteer, communes: string[], coords: { lat: number; lng: number } | null): string | null {
  if (!coords) return null;
  const [best] = communes.map((c) => ({ c, km: kmFromCommune(gz, c, coords) })).sort((x, y) => x.km - y.km);
  return best && best.km <= PLACE_COORDS_FAR_KM ? best.c : null;
}

// How far `coords` lie from the nearest reference point of `commune` (its own, its localities').
export function kmFromCommune(gz: Gazetteer, commune: string, coords: { lat: number; lng: number }): number {
  const points: { lat: number | null; lng: number | null }[] = [...gz.localitiesOf(commune), gz.commune(commune) ?? { lat: null, lng: null }];
  let best = Infinity;
  for (const p of points) if (p.lat !== null && p.lng !== null) best = Math.min(best, haversineKm(coords.lat, coords.lng, p.lat, p.lng));
  return best;
}

// The locality of `commune` that `text` names in one of its forms, or null.
export function villageNamed(gz: Gazetteer, text: string, commune: string): string | null {
  const key = placeKey(text);
  return gz.localitiesOf(commune).find((l) => namesOf(l).some((n) => placeKey(n) === key))?.locality ?? null;
}

// A locality's names: its own, its official form, its other languages'.
export const namesOf = (l: LocalityRef): string[] => [l.locality, l.official_form ?? '', ...l.alt_names];

// The locality of `commune` that `text` names (one of several bearing the name: as in
// chooseLocality), or null.
export function localityIn(gz: Gazetteer, text: string, commune: string, coords: { lat: number; lng: number } | null): string | null {
  const p = gz.resolve(text);
  const inCommune = p?.kind === 'locality' ? p.options.filter((o) => o.commune === commune) : [];
  return inCommune.length > 0 ? chooseLocality(gz, inCommune, [commune], null, coords).locality : null;
}

// Of `items`, those in the town's communes, then of those, the ones in the postcode's
// region; each step only when it leaves some.
export function byTownAndPostcode<T>(gz: Gazetteer, items: T[], communeOf: (item: T) => string, townCommunes: string[], postcode: number | null): T[] {
  let left = items;
  const byTown = left.filter((i) => townCommunes.includes(communeOf(i)));
  if (byTown.length > 0) left = byTown;
  if (left.length > 1 && postcode !== null) {
    const cantons = cantonsOfRegion(postcode);
    const byPostcode = left.filter((i) => cantons.includes(gz.commune(communeOf(i))?.canton ?? ''));
    if (byPostcode.length > 0) left = byPostcode;
  }
  return left;
}

// A name that several localities bear ("Bonnevoie": two quarters of Luxembourg; "Bruch": a
// quarter of Esch-sur-Alzette and, in Luxembourgish, Brouch in Helperknapp): narrowed by the
// town, the postcode, then the coordinates (the nearest of their points). Several quarters of
// one commune left: the commune alone, since naming one would be a guess that another
// record's quarter could contradict. Several communes left: the first in the reference
// order, which the name stands for.
export function chooseLocality(
  gz: Gazetteer,
  options: { locality: string; commune: string }[],
  townCommunes: string[],
  postcode: number | null,
  coords: { lat: number; lng: number } | null,
): { commune: string; locality: string | null } {
  let left = byTownAndPostcode(gz, options, (o) => o.commune, townCommunes, postcode);
  if (left.length > 1 && coords) {
    const km = (o: { locality: string; commune: string }) => kmFromLocality(gz, o, coords);
    left = [left.reduce((best, o) => (km(o) < km(best) ? o : best))];
  }
  if (left.length === 1) return left[0];
  if (left.every((o) => o.commune === left[0].commune)) return { commune: left[0].commune, locality: null };
  return left[0];
}

// Of the communes whose locality bears one name ("Eschweiler": Junglinster's and Wiltz's), the
// one whose locality lies nearest the coordinates, when it lies within PLACE_COORDS_FAR_KM of them
// and the others at least twice as far (an outside probe: Eschweiler 1-3 km from Junglinster's
// was rejected, the nearest commune being a neighbour of neither); else null.
export function nearestNamesake(gz: Gazetteer, options: { locality: string; commune: string }[], coords: { lat: number; lng: number } | null): string | null {
  if (!coords) return null;
  const km = options.map((o) => ({ commune: o.commune, km: kmFromLocality(gz, o, coords) })).sort((a, b) => a.km - b.km);
  const [best, next] = km;
  return best && best.km <= PLACE_COORDS_FAR_KM && (!next || next.km >= 2 * best.km) ? best.commune : null;
}

// How far `coords` lie from a locality's point (its commune's when it has none).
export function kmFromLocality(gz: Gazetteer, o: { locality: string; commune: string }, coords: { lat: number; lng: number }): number {
  const p = gz.localitiesOf(o.commune).find((l) => l.locality === o.locality);
  const at = p && p.lat !== null && p.lng !== null ? { lat: p.lat, lng: p.lng } : gz.commune(o.commune);
  return at ? haversineKm(coords.lat, coords.lng, at.lat, at.lng) : Infinity;
}

