// Commune and locality resolution against the reference data: one place for the API's
// `commune` filter and the importer's normalizer. Pure: built from rows, no I/O.
import { haversineKm } from '../domain/geo.js';
import { EXTRA_COMMUNE_ALIASES, EXTRA_LOCALITY_ALIASES, SHARED_SHORT_NAMES } from './place-aliases.js';

export interface CommuneRef {
  lau2: string;
  name: string;
  name_lb: string;
  name_de: string;
  canton: string;
  lat: number;
  lng: number;
}

export interface LocalityRef {
  locality: string;
  official_form: string | null;
  commune: string;
  kind: string;
  alt_names: string[];
  lat: number | null;
  lng: number | null;
}

export type Place =
  | { kind: 'commune'; commune: string }
  // A locality or quarter; `communes` has more than one entry only for a name that several
  // communes share (Eschweiler, Grundhof, ...), which the caller may narrow down.
  | {
      kind: 'locality';
      locality: string;
      communes: string[];
      // Every locality the name may be, with its commune, in the reference order (the first
      // is `locality`). More than one name only where several localities bear it: "Bonnevoie"
      // is both Bonnevoie quarters of Luxembourg, "Bruch" a quarter of Esch-sur-Alzette and
      // Brouch in Helperknapp. The importer chooses among them (src/ingest/place.ts).
      options: { locality: string; commune: string }[];
    };

// The communes a place lies in, each once, in alphabetical order (a locality's name may be borne in
// several: "Bruch" in Esch-sur-Alzette and, as Brouch, in Helperknapp).
export function placeCommunes(place: Place): string[] {
  return place.kind === 'commune' ? [place.commune] : [...new Set(place.options.map((o) => o.commune))].sort();
}

// Lower case, accents removed, everything but letters and digits dropped:
// "Lëtzebuerg" -> "letzebuerg", "ESCH/ALZETTE" -> "eschalzette".
export function placeKey(s: string): string {
  return s
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .replace(/ß/g, 'ss')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '');
}

// Linking words that typists drop, swap or shorten: "Esch/Alzette" and "Esch s/Alzette" for
// "Esch-sur-Alzette", "Reckange/Mess", "Erpeldingen an der Sauer".
const FILLERS = new Set(['sur', 's', 'sous', 'an', 'der', 'op', 'la', 'les', 'de', 'du', 'l', 'zum', 'am', 'bei']);

// The words of a text, lower case, accents removed: "Location meublée" -> location, meublee.
export function tokens(s: string): string[] {
  return s
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .replace(/ß/g, 'ss')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}

function keysOf(name: string): string[] {
  const t = tokens(name);
  const full = t.join('');
  const core = t.filter((w) => !FILLERS.has(w)).join('');
  return core && core !== full ? [full, core] : [full];
}

// Words that qualify a place without naming one ("Dudelange Centre", "Wiltz-Centre", "Ettelbruck
// Gare", which a regression probe of stop 46 found an unknown place; a postcode as in "L-4410
// Belvaux"), and the country's own name after a place ("Bertrange,
// Luxembourg", "Strassen / Lux"): a text that does not resolve as a whole is tried again
// without them. (The importer reads a postcode in a place as the postcode: src/ingest/place.ts.)
const STATION_WORDS = new Set(['gare', 'bahnhof']);
const CENTRE_WORDS = new Set(['centre', 'center', 'zentrum', 'stadtzentrum', 'centreville']);
const QUALIFIERS = new Set([...CENTRE_WORDS, 'ville', ...STATION_WORDS]);
const COUNTRY = new Set(['luxembourg', 'luxemburg', 'letzebuerg', 'lux', 'lu']);
const COUNTRY_PREFIX = ['grand', 'duche', 'de'];

function withoutQualifiers(t: string[]): string[] {
  // A postcode: "1855", "L1855", "L-1855" or "LU-1855" (split in two: the L goes with the number).
  const out = t.filter((w, i) => !QUALIFIERS.has(w) && !/^(?:lu?)?\d{4}$/.test(w) && !((w === 'l' || w === 'lu') && /^\d{4}$/.test(t[i + 1] ?? '')));
  if (out.length > 1 && COUNTRY.has(out[out.length - 1])) {
    out.pop();
    while (out.length > 1 && COUNTRY_PREFIX.includes(out[out.length - 1])) out.pop();
  }
  return out;
}

export interface Gazetteer {
  communes: CommuneRef[];
  resolve(input: string): Place | null;
  // The communes a short name could be ("Esch"), first the one it stands for; [] for others.
  sharedBy(input: string): string[];
  // The village of `commune`'s own name when a text that resolved to that commune names it as the
  // town's centre ("Hesperange Centre"), or null.
  townCentre(input: string, commune: string): string | null;
  // Up to `max` names (communes and localities, or with `communesOnly` communes alone) close to
  // an unknown input.
  suggest(input: string, max?: number, communesOnly?: boolean): string[];
  // The name (as a key, to resolve) of the one place an unknown input is a slip of
  // ("Diferdange": differdange), when no other lies as near (by one edit more); null otherwise.
  // For the importer, which takes it only when the record's postcode confirms it
  // (src/ingest/place.ts).
  closest(input: string): string | null;
  commune(name: string): CommuneRef | undefined;
  localitiesOf(commune: string): LocalityRef[];
  // Nearest commune by its centroid or one of its localities' points (approximate: the
  // reference data has no boundaries).
  nearestCommune(lat: number, lng: number): { commune: string; locality: string | null; km: number };
}

// One JS haversine (src/domain/geo.ts); re-exported for the importer's existing imports.
export { haversineKm } from '../domain/geo.js';

export function buildGazetteer(communes: CommuneRef[], localities: LocalityRef[]): Gazetteer {
  const communeByKey = new Map<string, string>();
  const communeByName = new Map<string, CommuneRef>();
  for (const c of communes) {
    communeByName.set(c.name, c);
    const names = [c.name, c.name_lb, c.name_de, ...(EXTRA_COMMUNE_ALIASES[c.name] ?? [])];
    for (const n of names) for (const k of keysOf(n)) if (!communeByKey.has(k)) communeByKey.set(k, c.name);
  }

  // locality key -> canonical locality name -> communes
  const localityByKey = new Map<string, Map<string, Set<string>>>();
  const localitiesByCommune = new Map<string, LocalityRef[]>();
  const addLocalityKey = (k: string, l: LocalityRef) => {
    let byName = localityByKey.get(k);
    if (!byName) localityByKey.set(k, (byName = new Map()));
    let set = byName.get(l.locality);
    if (!set) byName.set(l.locality, (set = new Set()));
    set.add(l.commune);
  };
  for (const l of localities) {
    const list = localitiesByCommune.get(l.commune) ?? [];
    list.push(l);
    localitiesByCommune.set(l.commune, list);
    const names = [l.locality, ...(l.official_form ? [l.official_form] : []), ...l.alt_names, ...(EXTRA_LOCALITY_ALIASES[l.locality] ?? [])];
    // "Bonnevoie-Nord / Verlorenkost" is also known by each half.
    if (l.locality.includes(' / ')) names.push(...l.locality.split(' / '));
    for (const n of names) for (const k of keysOf(n)) addLocalityKey(k, l);
  }

  const communesOfQuarters = new Set(localities.filter((l) => l.kind.startsWith('quartier')).map((l) => l.commune));

  function lookup(key: string): Place | null {
    const commune = communeByKey.get(key);
    if (commune) return { kind: 'commune', commune };
    const loc = localityByKey.get(key);
    if (!loc) return null;
    // A name shared by a locality and a different locality elsewhere: the first canonical
    // name (the map keeps insertion order, i.e. the reference order) stands for the name, and
    // `options` holds them all.
    const [locality, set] = loc.entries().next().value as [string, Set<string>];
    // A locality that carries its commune's own name is the commune.
    if (set.size === 1 && communeByName.has(locality) && [...set][0] === locality) return { kind: 'commune', commune: locality };
    const options = [...loc].flatMap(([name, communes]) => [...communes].sort().map((commune) => ({ locality: name, commune })));
    return { kind: 'locality', locality, communes: [...set].sort(), options };
  }

  function resolve(input: string): Place | null {
    const t = tokens(input);
    if (t.length === 0) return null;
    const whole = resolveTokens(t);
    if (whole) return whole;
    // The country's name before a place outside the City ("Luxembourg-Howald", "Lux Bertrange":
    // an outside probe of stop 46 found them unknown places); the City's quarters with it
    // ("Luxembourg-Gare") resolve as a whole, above.
    if (t.length > 1 && COUNTRY.has(t[0]) && t[0] !== 'lu') {
      const rest = resolveTokens(t.slice(1));
      if (rest) return rest;
    }
    const bare = withoutQualifiers(t);
    if (bare.length === 0 || bare.length === t.length) return null;
    const place = resolveTokens(bare);
    // A station beside a town is the town's ("Ettelbruck Gare"); beside a quarter it is another
    // quarter ("Luxembourg-Hollerich/Gare": two quarters, read part by part by the importer).
    if (place?.kind === 'locality' && t.some((w) => STATION_WORDS.has(w))) return null;
    return place;
  }

  function resolveTokens(t: string[]): Place | null {
    const direct = lookup(t.join('')) ?? lookup(t.filter((w) => !FILLERS.has(w)).join(''));
    if (direct) return direct;
    // Compound forms: "Luxembourg-Gare", "Kirchberg (Luxembourg)", "Belvaux, Sanem".
    for (let i = 1; i < t.length; i++) {
      const left = t.slice(0, i).join('');
      const right = t.slice(i).join('');
      for (const [a, b] of [
        [left, right],
        [right, left],
      ]) {
        const c = communeByKey.get(a);
        const l = lookup(b);
        const inC = c && l?.kind === 'locality' ? l.options.filter((o) => o.commune === c) : [];
        if (inC.length > 0) return { kind: 'locality', locality: inC[0].locality, communes: [c!], options: inC };
        if (c && l?.kind === 'commune' && l.commune === c) return { kind: 'commune', commune: c };
      }
      // Two names of one locality: "Gasperich/Cloche d'Or", "Belvaux - Beles".
      const a = lookup(left);
      const b = lookup(right);
      if (a?.kind === 'locality' && b?.kind === 'locality') {
        const both = a.options.filter((o) => b.options.some((p) => p.locality === o.locality && p.commune === o.commune));
        if (both.length > 0) return { kind: 'locality', locality: both[0].locality, communes: [...new Set(both.map((o) => o.commune))].sort(), options: both };
      }
    }
    return null;
  }

  // The village a text names as the town's centre ("Hesperange Centre", "Wiltz-Centre"), given the
  // commune it resolved to, for the importer: that village, not the commune's other ones (an outside
  // probe of stop 50 found "Hesperange Centre" merged with a look-alike in Howald, the commune
  // contradicting no locality). Null for a town of quarters (Esch-sur-Alzette, the City: the
  // centre is among them) and for any other text. The listings' filter reads the text as the
  // commune, as before.
  function townCentre(input: string, commune: string): string | null {
    if (!tokens(input).some((w) => CENTRE_WORDS.has(w)) || communesOfQuarters.has(commune)) return null;
    return localityByKey.get(placeKey(commune))?.get(commune)?.has(commune) ? commune : null;
  }

  function sharedBy(input: string): string[] {
    // "L-9650 Esch", "Esch, Luxembourg": the postcode, fillers and the country aside.
    return SHARED_SHORT_NAMES[withoutQualifiers(tokens(input)).filter((w) => !FILLERS.has(w)).join('')] ?? [];
  }

  // Each name also without its filler words ("Esch-sur-Alzette" as "eschalzette"), so that a
  // name typed without them ("Esch Alzet") is near its own.
  const bareKey = (n: string) => tokens(n).filter((w) => !FILLERS.has(w)).join('');
  const suggestionNames = [...new Set([...communes.map((c) => c.name), ...localities.map((l) => l.locality)])];
  const communeNames = new Set(communes.map((c) => c.name));
  const suggestionKeys = suggestionNames.flatMap((n) => [{ name: n, key: placeKey(n) }, { name: n, key: bareKey(n) }]);
  for (const c of communes) for (const n of [c.name_lb, c.name_de]) suggestionKeys.push({ name: c.name, key: placeKey(n) }, { name: c.name, key: bareKey(n) });

  function suggest(input: string, max = 3, communesOnly = false): string[] {
    const key = placeKey(input).slice(0, 60);
    if (!key) return [];
    const bare = bareKey(input).slice(0, 60);
    const limit = Math.max(2, Math.floor(key.length / 3));
    const scored: { name: string; d: number }[] = [];
    for (const s of suggestionKeys) {
      if (communesOnly && !communeNames.has(s.name)) continue;
      // Prefix match counts as close ("esch" -> Esch-sur-Alzette, Esch-sur-Sûre).
      const d = s.key.startsWith(key) && key.length >= 3 ? 0.5 : Math.min(editDistance(key, s.key, limit), bare && bare !== key ? editDistance(bare, s.key, limit) : Infinity);
      if (d <= limit) scored.push({ name: s.name, d });
    }
    scored.sort((a, b) => a.d - b.d || a.name.localeCompare(b.name));
    const out: string[] = [];
    for (const s of scored) {
      if (!out.includes(s.name)) out.push(s.name);
      if (out.length === max) break;
    }
    return out;
  }

  // One edit in a name of 5 letters or more ("Diferdange", "Wilts"); none in shorter ones, where
  // one edit makes another name. Not two, even in long names: a place the reference data lacked
  // would be near one it has, and two edits reach more of them (a regression probe of stop 47
  // found one edit enough for that too: "Heinerscheid" is one from "Heiderscheid", "Senningen"
  // from "Lenningen"; the reference data has every one of them). A prefix is no slip ("Diff").
  // Every name a place answers to (its other languages' and aliases too), with the place it
  // names: a commune, or the localities (and their communes) of that name.
  let allKeys: { place: string; key: string }[] | null = null;
  const closestKeys = () =>
    (allKeys ??= [
      ...[...communeByKey].map(([key, name]) => ({ key, place: `commune ${name}` })),
      // (A locality of its commune's name is that commune, as lookup() reads it.)
      ...[...localityByKey].map(([key, byName]) => ({
        key,
        place: [...new Set([...byName].flatMap(([l, cs]) => [...cs].map((c) => (l === c ? `commune ${c}` : `${l} (${c})`))))].sort().join('; '),
      })),
    ]);
  function closest(input: string): string | null {
    const key = placeKey(input).slice(0, 60);
    if (key.length < 5) return null;
    // The nearest name of each place (a second regression probe of stop 47: "Iischpelt", a slip
    // of Tarchamps' "Ischpelt", was taken for Kiischpelt when other languages' names were not
    // looked at).
    const nearest = new Map<string, { d: number; key: string }>();
    for (const s of closestKeys()) {
      const d = editDistance(key, s.key, 2);
      if (d <= 2 && d < (nearest.get(s.place)?.d ?? Infinity)) nearest.set(s.place, { d, key: s.key });
    }
    const best = Math.min(...[...nearest.values()].map((n) => n.d));
    if (best > 1) return null;
    const near = [...nearest.values()].filter((n) => n.d <= best + 1);
    // The name itself, not the place's display name: resolved again, a display name such as
    // "Reckange" or "Hostert" stood for its namesakes too, and the postcode chose one of them
    // (a third regression probe of stop 47: "Reckingenn", a slip of Reckange in Mersch, with
    // 3123 was Reckange-sur-Mess).
    return near.length === 1 ? near[0].key : null;
  }

  const points: { commune: string; locality: string | null; lat: number; lng: number }[] = [
    ...communes.map((c) => ({ commune: c.name, locality: null, lat: c.lat, lng: c.lng })),
    ...localities
      .filter((l) => l.lat !== null && l.lng !== null)
      .map((l) => ({ commune: l.commune, locality: l.locality === l.commune ? null : l.locality, lat: l.lat!, lng: l.lng! })),
  ];

  function nearestCommune(lat: number, lng: number) {
    let best = points[0];
    let bestKm = Infinity;
    for (const p of points) {
      const km = haversineKm(lat, lng, p.lat, p.lng);
      if (km < bestKm) {
        bestKm = km;
        best = p;
      }
    }
    return { commune: best.commune, locality: best.locality, km: bestKm };
  }

  return {
    communes,
    resolve,
    sharedBy,
    townCentre,
    suggest,
    closest,
    commune: (name) => communeByName.get(name),
    localitiesOf: (c) => localitiesByCommune.get(c) ?? [],
    nearestCommune,
  };
}

// Levenshtein distance with an early exit once every cell of a row exceeds `limit`.
function editDistance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const v = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
      cur.push(v);
      if (v < rowMin) rowMin = v;
    }
    if (rowMin > limit) return limit + 1;
    prev = cur;
  }
  return prev[b.length];
}
