import { decodeHTML } from 'entities';
import { placeKey, type Gazetteer, type Place } from '../reference/gazetteer.js';
import { ABROAD, abroadKey, ALSO_ABROAD, COUNTRY_KEYS, countryAbroadAt, OTHER_COUNTRY_POSTCODE } from './abroad.js';
import { byTownAndPostcode, chooseLocality, kmFromCommune, localityIn, nearbyLocalityNamed, nearestByPoints, nearestNamesake, PLACE_COORDS_FAR_KM, villageNamed } from './place-points.js';
import { haversineKm } from '../domain/geo.js';
import { isCityPostcode, parsePostcode, postcodeFor, postcodeIn, withoutPostcodes } from './postcode.js';

// Luxembourg's bounding box (docs/feed-formats.md): coordinates outside it are dropped.
export const LU_BOX = { minLat: 49.44, maxLat: 50.19, minLng: 5.73, maxLng: 6.54 };

const inBox = (lat: number, lng: number) => lat >= LU_BOX.minLat && lat <= LU_BOX.maxLat && lng >= LU_BOX.minLng && lng <= LU_BOX.maxLng;

// Swapped pairs are recognised (a latitude of 6.1 cannot be in Luxembourg, a longitude of
// 49.6 neither); anything else outside the box is dropped, never guessed.
export function fixCoordinates(lat: number | null, lng: number | null): { lat: number; lng: number } | null {
  if (lat === null || lng === null || !Number.isFinite(lat) || !Number.isFinite(lng)) return null;
  if (inBox(lat, lng)) return { lat, lng };
  if (inBox(lng, lat)) return { lat: lng, lng: lat };
  return null;
}

export interface PlaceInput {
  town?: string | null;
  quarter?: string | null;
  postcode?: string | null;
  coords: { lat: number; lng: number } | null;
  // Coordinates the record gave that are not kept (outside Luxembourg's bounding box) but lie
  // in the countries around it (abroad.ts, nearLuxembourg): they say where the record is not.
  given?: { lat: number; lng: number } | null;
  // Coordinates the record gave that are not kept, wherever they lie (not 0, 0): named in a
  // reason, which would otherwise say none were given.
  dropped?: { lat: number; lng: number } | null;
}

// `postcode`: the one the record states, kept for deduplication when it fits the commune
// (postcodeFor), else null.
type Found = { ok: true; commune: string; locality: string | null; by: 'text' | 'postcode' | 'coordinates' };
type NotFound = { ok: false; reason: string };
// `coords`: the record's coordinates as they are kept (null when they lie far from the place
// its text names: see resolvePlace).
export type PlaceResult = (Found & { postcode: number | null; coords: { lat: number; lng: number } | null }) | NotFound;

// Resolves the commune (and locality when known) of a record, with the postcode it states.
// The text and the coordinates are checked against each other (an outside probe: "Perl", the
// German town, was stored as Perlé 38 km away with Perl's coordinates; "Luxembourg", the
// country, as the City with coordinates and a postcode of Wiltz, and never merged with the
// same flat of another agency named Wiltz). The text settles the commune unless it is only
// the country's name (then the coordinates do: a country names no commune) or a town abroad's
// name (then the record is rejected); coordinates far from the place a text names are
// dropped, since one of the two is wrong and a radius search must not find the listing there.
export function resolvePlace(gz: Gazetteer, input: PlaceInput): PlaceResult {
  const texts = [clean(input.town), clean(input.quarter)].filter((t): t is string => t !== null);
  // Coordinates in another country: the text may still name the place (they are dropped then);
  // without a text that does, the record may not be in Luxembourg (countryAbroadAt).
  // Coordinates outside the box but in the countries around (Trier, Thionville) are abroad too
  // (an outside probe: "Luxembourg" with Trier's was the City, the coordinates dropped first).
  const at = input.coords ?? input.given ?? null;
  const abroadAt = at ? countryAbroadAt(gz, at) : null;
  if (abroadAt !== null) {
    // A name a town abroad bears too ("Perl"), with them: that town.
    const alsoAbroad = texts.find((t) => ALSO_ABROAD.has(abroadKey(t)));
    if (alsoAbroad !== undefined) return abroadReason(alsoAbroad, alsoAbroad);
    const byText = onlyCountry(texts) ? null : resolvePlace(gz, { ...input, coords: null, given: null });
    if (byText?.ok) return byText;
    // The text rejected as abroad itself: its own reason.
    if (byText && byText.reason.includes(MAY_BE_ABROAD)) return byText;
    const { lat, lng } = at!;
    return { ok: false, reason: `the coordinates (${lat}, ${lng}) lie in ${abroadAt}${byText ? ` (and ${byText.reason})` : ''}: ${MAY_BE_ABROAD}; give its commune, or its coordinates in Luxembourg` };
  }
  // A postcode typed into the place ("L-4410 Belvaux") counts as the postcode; the gazetteer
  // reads the place without it.
  const postcode = parsePostcode(input.postcode) ?? postcodeIn(clean(input.town)) ?? postcodeIn(clean(input.quarter));
  let found = resolveCommune(gz, input, postcode);
  // Placed in Luxembourg, but with another country's postcode: rejected (an outside probe:
  // "F-57570 Mondorff", "54308 Langsur" or a postcode field "D-66706" were placed in the
  // Luxembourg commune across the border, the postcode dropped as a slip).
  const foreign = [input.postcode, input.town, input.quarter].map((t) => (typeof t === 'string' ? OTHER_COUNTRY_POSTCODE.exec(t)?.[1] : undefined)).find((c) => c !== undefined);
  if (found.ok && foreign !== undefined) {
    return { ok: false, reason: `the postcode "${foreign.slice(0, 12)}" is another country's: ${MAY_BE_ABROAD}; give a Luxembourg postcode (L-1234) or none` };
  }
  let coords = input.coords;
  if (found.ok && found.by === 'text' && coords && kmFromCommune(gz, found.commune, coords) > PLACE_COORDS_FAR_KM) {
    const abroad = texts.find((t) => ABROAD.has(abroadKey(t)) || ALSO_ABROAD.has(abroadKey(t)));
    if (abroad !== undefined) return abroadReason(abroad, abroad);
    // The name is also a locality of another commune, near the coordinates: that one (an outside
    // probe: "Fischbach" 2.9 km from Clervaux's Fischbach was the commune Fischbach, 35 km away).
    // Only the country's name, once or in parts ("Luxembourg, Luxembourg": a city field and a
    // country field written one after the other): the coordinates decide.
    const namesake = nearbyLocalityNamed(gz, texts, coords);
    if (namesake) found = { ok: true, ...namesake, by: 'text' };
    else if (onlyCountry(texts)) found = { ok: true, commune: gz.nearestCommune(coords.lat, coords.lng).commune, locality: null, by: 'coordinates' };
    else coords = null;
  }
  return found.ok ? { ...found, postcode: postcodeFor(postcode, gz.commune(found.commune)?.canton), coords } : found;
}

// The texts name nothing but the country, once or in parts ("Luxembourg, Luxembourg": a city
// field and a country field written one after the other), or nothing at all.
function onlyCountry(texts: string[]): boolean {
  return texts.every((t) => t.split(PART_SEPARATORS).every((p) => p.trim() === '' || COUNTRY_KEYS.has(placeKey(p))));
}

const MAY_BE_ABROAD = 'the record may not be in Luxembourg';
const abroadReason = (shown: string, abroad: string): NotFound => ({
  ok: false,
  reason: `"${shown.slice(0, 80)}" names a place abroad ("${abroad.slice(0, 40)}"): ${MAY_BE_ABROAD}; give the commune alone`,
});

// Names every town has for a quarter of its own ("Centre", "Gare"): the gazetteer knows them as
// the City's quarters (Ville Haute's other name, and Gare), but a record whose postcode lies
// outside the City, or whose coordinates lie more than 2.5 km from that quarter, means its own
// town's (an outside probe of stop 46: "Centre" with Esch's coordinates, "Gare" with
// Ettelbruck's or with an Esch postcode were stored in the City, their coordinates and postcode
// dropped). Such a name then settles nothing: the postcode, the coordinates or the text's other
// parts do.
const TOWN_QUARTER_KEYS = new Set(['centre', 'centreville', 'gare', 'quartiergare', 'zentrum', 'stadtzentrum', 'bahnhof']);
const TOWN_QUARTER_KM = 2.5;
const isTownQuarter = (text: string) => TOWN_QUARTER_KEYS.has(placeKey(withoutPostcodes(text)));
function townQuarterElsewhere(gz: Gazetteer, text: string, postcode: number | null, coords: { lat: number; lng: number } | null): boolean {
  if (!isTownQuarter(text)) return false;
  if (postcode !== null && !isCityPostcode(postcode)) return true;
  if (!coords) return false;
  const quarter = villageNamed(gz, withoutPostcodes(text), 'Luxembourg');
  const point = gz.localitiesOf('Luxembourg').find((l) => l.locality === quarter);
  return !point || point.lat === null || point.lng === null || haversineKm(coords.lat, coords.lng, point.lat, point.lng) > TOWN_QUARTER_KM;
}

// Order: the texts the record gives (quarter with its town, town, quarter), each in any
// language form, case or accent; a name several communes share is narrowed by the town, the
// postcode, then the coordinates; the coordinates alone come last (nearest reference point).
function resolveCommune(gz: Gazetteer, input: PlaceInput, postcode: number | null): Found | NotFound {
  const town = clean(input.town);
  const quarter = clean(input.quarter);
  const texts = [quarter && town ? `${quarter} ${town}` : null, town, quarter].filter((t): t is string => !!t);
  const townPlace = town ? gz.resolve(town) : null;
  const townCommunes = townPlace ? communesOf(townPlace) : [];

  let ambiguous: { name: string; communes: string[] } | null = null;
  // Only the country's name ("Luxembourg"), with a postcode outside the City: the country, not
  // the City (an outside probe: "Luxembourg" with L-4410, Belvaux's, was the City, the postcode
  // dropped as a slip). The coordinates decide, or the record is refused.
  const outsideCity = postcode !== null && (postcode < 1000 || postcode >= 3000);
  let countryOnly = false;
  let townQuarter: string | null = null;
  for (const text of texts) {
    if (outsideCity && onlyCountry([withoutPostcodes(text)])) {
      countryOnly = true;
      continue;
    }
    if (townQuarterElsewhere(gz, text, postcode, input.coords)) {
      townQuarter = text;
      continue;
    }
    const place = gz.resolve(text);
    if (!place) continue;
    if (place.kind === 'commune') {
      // A short name several communes answer to ("Esch") is settled by the postcode and the
      // coordinates, else it is the commune it stands for.
      const shared = gz.sharedBy(text);
      const commune = shared.length > 1 ? (narrow(gz, shared, [], postcode, input.coords) ?? nearestByPoints(gz, shared, input.coords) ?? place.commune) : place.commune;
      // The town is only a commune; a quarter the gazetteer knows in that commune is kept. A
      // short name settled as another commune's village ("Erpeldange" in Wiltz) is that village.
      // A town's centre ("Hesperange Centre") is its own village.
      const locality = text === town && quarter ? localityIn(gz, quarter, commune, input.coords) : commune !== place.commune ? villageNamed(gz, text, commune) : gz.townCentre(text, commune);
      return { ok: true, commune, locality, by: 'text' };
    }
    if (new Set(place.options.map((o) => o.locality)).size > 1) {
      const chosen = chooseLocality(gz, place.options, townCommunes, postcode, input.coords);
      return { ok: true, commune: chosen.commune, locality: chosen.locality, by: 'text' };
    }
    const narrowed = narrow(gz, place.communes, townCommunes, postcode, input.coords) ?? nearestNamesake(gz, place.options, input.coords);
    if (narrowed) return { ok: true, commune: narrowed, locality: place.locality, by: 'text' };
    ambiguous ??= { name: place.locality, communes: place.communes };
  }

  // Parts that name places of different communes ("Esch-sur-Alzette, Dudelange"): the
  // coordinates may still settle it; if not, the reason says so.
  let differing: string[] | null = null;
  let abroad: string | null = null;
  if (!ambiguous) {
    const parts = fromParts(gz, [town, quarter], postcode, input.coords);
    if (parts && 'differing' in parts) differing = parts.differing;
    else if (parts && 'abroad' in parts) abroad = parts.abroad;
    else if (parts) return { ok: true, ...parts, by: 'text' };
    // A text that is a town abroad as a whole ("Arlon", "B-6700 Arlon").
    abroad ??= texts.find((t) => ABROAD.has(abroadKey(t))) ?? null;
  }
  // A town abroad named: rejected, coordinates or not. Coordinates cannot show the record is in
  // Luxembourg: Arlon, Athus, Longwy and Perl lie in Luxembourg's bounding box, and Athus and
  // Perl within 2.5 km of a Luxembourg village (an outside probe: such records were stored in
  // the nearest commune of Luxembourg, Arlon's as Habscht).
  if (abroad) return abroadReason(town ?? quarter ?? '', abroad);
  if (!ambiguous && postcode !== null && isCityPostcode(postcode)) {
    return { ok: true, commune: 'Luxembourg', locality: null, by: 'postcode' };
  }
  if (input.coords) {
    const near = gz.nearestCommune(input.coords.lat, input.coords.lng);
    if (!ambiguous || ambiguous.communes.includes(near.commune)) {
      return { ok: true, commune: near.commune, locality: ambiguous ? ambiguous.name : null, by: 'coordinates' };
    }
    // A locality of several communes whose points are one (Blumenthal: Bech's and Junglinster's),
    // the coordinates nearest a third commune's: the namesake commune with a reference point
    // nearest them, within PLACE_COORDS_FAR_KM (an outside probe: 124 of 415 Blumenthal records
    // 0.5-1 km north of the village were rejected, asked for the coordinates they gave).
    const nearest = nearestByPoints(gz, ambiguous.communes, input.coords);
    if (nearest !== null) return { ok: true, commune: nearest, locality: ambiguous.name, by: 'coordinates' };
  }
  if (ambiguous) {
    return {
      ok: false,
      reason:
        postcode === null
          ? `"${ambiguous.name}" is a locality of several communes (${ambiguous.communes.join(', ')}); give a postcode or coordinates`
          : `"${ambiguous.name}" is a locality of several communes (${ambiguous.communes.join(', ')}), and the postcode ${postcode} does not tell them apart; give the commune or coordinates`,
    };
  }
  if (townQuarter !== null && !input.coords) {
    return { ok: false, reason: `"${townQuarter.slice(0, 40)}" names a quarter every town has, and the postcode ${postcode} is not the City's; give the commune or coordinates` };
  }
  if (texts.length === 0 || countryOnly) {
    return {
      ok: false,
      reason:
        postcode !== null
          ? `${countryOnly ? `"${(town ?? quarter ?? '').slice(0, 40)}" names the country, and ` : ''}the postcode ${postcode} alone does not say which commune (only 1000-2999, Luxembourg City, does); give the commune or locality, or coordinates`
          : input.dropped
            ? `no commune, locality or postcode given, and the coordinates (${input.dropped.lat}, ${input.dropped.lng}) are outside Luxembourg`
            : 'no commune, locality, postcode or coordinates given',
    };
  }
  const shown = town ?? quarter ?? '';
  if (differing) {
    return { ok: false, reason: `"${shown.slice(0, 80)}" names places of different communes (${differing.join(', ')}); give one, or coordinates` };
  }
  const slip = confirmedSlip(gz, shown, postcode);
  if (slip) return { ok: true, ...slip, by: 'text' };
  const hints = gz.suggest(shown, 3);
  return {
    ok: false,
    reason: `unknown commune or locality "${shown.slice(0, 80)}"${hints.length ? ` (did you mean ${hints.join(', ')}?)` : ''}`,
  };
}

// A name one slip away from a single commune or locality (gazetteer.closest: "Diferdange"),
// taken when the postcode confirms it: its region (first digit) covers that commune's canton,
// and only one of the name's communes (an outside probe of stop 47: "Diferdange" with 4601 was
// refused, "did you mean Differdange?", as a person would not). Without a postcode, or with one
// elsewhere, the record is refused as before: the slip could be another place's.
function confirmedSlip(gz: Gazetteer, text: string, postcode: number | null): { commune: string; locality: string | null } | null {
  if (postcode === null) return null;
  const name = gz.closest(withoutPostcodes(text));
  const place = name === null ? null : gz.resolve(name);
  if (!place) return null;
  // The City's postcodes are 1000-2999, and no other commune's (a regression probe of stop 47:
  // "Luxemboug" with 8080, Bertrange's, was the City).
  const inRegion = communesOf(place).filter((c) => (c === 'Luxembourg' ? postcode < 3000 : postcode >= 3000 && postcodeFor(postcode, gz.commune(c)?.canton) !== null));
  if (inRegion.length !== 1) return null;
  const [commune] = inRegion;
  if (place.kind === 'commune') return { commune, locality: null };
  return chooseLocality(gz, place.options.filter((o) => o.commune === commune), [commune], postcode, null);
}

// Where a place text is several things one after the other: "Esch-sur-Alzette - Lallange",
// "Luxembourg (Bonnevoie)", "Rue de Luxembourg 25, 8077 Bertrange", "Kirchberg/Weimershof".
const PART_SEPARATORS = /\s+[-–]\s+|[,;()/|]+/;
// A text that names nothing as a whole, read part by part: the parts that name a place
// (streets and words like "proche" name none) must agree on one commune, which is the
// answer; the locality is kept when they name one. Parts that name places in different
// communes settle nothing (null: the coordinates, if any, decide), and so does a part that
// names no place and is no street. A part that is only the country's name counts only when
// nothing else names a place, there are no coordinates, and the postcode (if any) is the
// City's: then it is the City ("Route d'Esch, Luxembourg").
function fromParts(
  gz: Gazetteer,
  texts: (string | null)[],
  postcode: number | null,
  coords: { lat: number; lng: number } | null,
): { commune: string; locality: string | null } | { differing: string[] } | { abroad: string } | null {
  // Each part that names a place: the communes it may be in, and the localities it names.
  const named: { communes: string[]; localities: { locality: string; commune: string }[]; shortName: boolean }[] = [];
  let country: string[] | null = null;
  const townQuarters: string[] = [];
  for (const text of texts) {
    const parts = text ? text.split(PART_SEPARATORS).map((p) => p.trim()).filter(Boolean) : [];
    if (parts.length < 2) continue;
    for (const part of parts) {
      if (ABROAD.has(abroadKey(part))) return { abroad: part };
      // "Centre" or "Gare": read once the other parts are (below), and not when the postcode or
      // the coordinates lie elsewhere (townQuarterElsewhere).
      if (isTownQuarter(part)) {
        if (!townQuarterElsewhere(gz, part, postcode, coords)) townQuarters.push(part);
        continue;
      }
      const p = gz.resolve(part);
      if (!p) continue;
      if (COUNTRY_KEYS.has(placeKey(part))) {
        country ??= communesOf(p);
        continue;
      }
      // A short name several communes answer to ("Esch") may be any of them here.
      const shared = p.kind === 'commune' ? gz.sharedBy(part) : [];
      named.push({
        communes: shared.length > 1 ? shared : communesOf(p),
        localities: p.kind === 'locality' ? p.options : [],
        shortName: shared.length > 1,
      });
    }
  }
  // A town's "Centre" or "Gare" counts beside the City's name ("Luxembourg-Hollerich/Gare"), or
  // alone; beside another town's, it is that town's and names no more.
  for (const part of townQuarters) {
    const p = gz.resolve(part);
    const communes = p ? communesOf(p) : [];
    if (p && named.every((n) => n.communes.some((c) => communes.includes(c)))) {
      named.push({ communes, localities: p.kind === 'locality' ? p.options : [], shortName: false });
    }
  }
  if (named.length === 0) {
    if (!country || coords || (postcode !== null && (postcode < 1000 || postcode >= 3000))) return null;
    named.push({ communes: country, localities: [], shortName: false });
  }
  let common = named[0].communes;
  for (const n of named.slice(1)) common = common.filter((c) => n.communes.includes(c));
  if (common.length === 0 && !country) return { differing: [...new Set(named.flatMap((n) => n.communes))].slice(0, 4) };
  // Several communes left: the postcode and the coordinates choose; a short name is the
  // commune it stands for (its first) when they do not.
  const commune =
    common.length === 1 ? common[0] : common.length > 1 ? (narrow(gz, common, [], postcode, coords) ?? (named.every((n) => n.shortName) ? common[0] : null)) : null;
  // One part names a place, a name several different localities bear (`Heisdorf`, `Rollingen`):
  // read as that name alone is (resolveCommune), not refused for the street beside it (an outside
  // probe: `3 rue Principale, Rollingen` was an unknown place, `Rollingen` Mersch).
  if (!commune && named.length === 1 && new Set(named[0].localities.map((o) => o.locality)).size > 1) {
    return chooseLocality(gz, named[0].localities, [], postcode, coords);
  }
  if (!commune) return null;
  const inCommune = named.filter((n) => n.localities.length > 0).map((n) => n.localities.filter((o) => o.commune === commune));
  if (inCommune.length === 0) return { commune, locality: null };
  if (inCommune.length === 1) return chooseLocality(gz, inCommune[0], [commune], postcode, coords);
  const names = new Set(inCommune.flat().map((o) => o.locality));
  return { commune, locality: names.size === 1 ? [...names][0] : null };
}


function clean(s: string | null | undefined): string | null {
  if (typeof s !== 'string') return null;
  // HTML's entities, which an XML parser leaves as written ("Wiltz&nbsp;", "P&eacute;tange"),
  // read as titles' are (normalize.ts).
  const t = (s.includes('&') ? decodeHTML(s) : s).replace(/\s+/g, ' ').trim();
  return t === '' ? null : t.slice(0, 200);
}

function communesOf(p: Place): string[] {
  return p.kind === 'commune' ? [p.commune] : [...new Set(p.options.map((o) => o.commune))];
}

function narrow(
  gz: Gazetteer,
  candidates: string[],
  townCommunes: string[],
  postcode: number | null,
  coords: { lat: number; lng: number } | null,
): string | null {
  if (candidates.length === 1) return candidates[0];
  let left = byTownAndPostcode(gz, candidates, (c) => c, townCommunes, postcode);
  if (left.length > 1 && coords) {
    const near = gz.nearestCommune(coords.lat, coords.lng);
    if (left.includes(near.commune)) left = [near.commune];
  }
  return left.length === 1 ? left[0] : null;
}
