import { createRequire } from 'node:module';
import { placeKey, type Gazetteer } from '../reference/gazetteer.js';

// The names and postcodes that place a record abroad, and the country's own names, for
// place.ts.

// A part that names no place is passed over (a street, a residence, "proche commerces"),
// unless it names a place abroad: a town of the border region or a country. Then the record
// may not be in Luxembourg at all ("Arlon / Steinfort", "Rodange / Athus", "Thionville,
// Luxembourg"), and the reading fails.
export const ABROAD = new Set(
  [
    // Belgium (the province of Luxembourg and around)
    'Arlon', 'Aarlen', 'Athus', 'Aubange', 'Messancy', 'Martelange', 'Bastogne', 'Habay', 'Virton', 'Étalle', 'Neufchâteau',
    'Libramont', 'Florenville', 'Halanzy', 'Musson', 'Saint-Léger', 'Vielsalm', 'Gouvy', 'Houffalize', 'Liège', 'Namur', 'Bruxelles',
    // France (Lorraine)
    'Thionville', 'Metz', 'Longwy', 'Mont-Saint-Martin', 'Audun-le-Tiche', 'Villerupt', 'Hettange-Grande', 'Cattenom', 'Sierck-les-Bains',
    'Apach', 'Yutz', 'Hayange', 'Fontoy', 'Russange', 'Ottange', 'Volmerange-les-Mines', 'Zoufftgen', 'Evrange', 'Basse-Ham',
    'Guénange', 'Florange', 'Fameck', 'Uckange', 'Longlaville', 'Herserange', 'Saulnes', 'Réhon', 'Mexy', 'Nancy',
    // Germany (Saarland, Rhineland-Palatinate)
    'Trier', 'Trèves', 'Konz', 'Saarburg', 'Perl', 'Nennig', 'Merzig', 'Saarlouis', 'Saarbrücken', 'Bitburg', 'Igel', 'Wincheringen',
    'Nittel', 'Palzem', 'Mettlach', 'Prüm', 'Irrel', 'Echternacherbrück',
    // Villages of the border itself (an outside probe: with their own coordinates, in Luxembourg's
    // bounding box, they were placed in the Luxembourg commune across the border). Only names no
    // place of Luxembourg bears.
    'Sterpenich', 'Autelbas', 'Ouren', 'Burg-Reuland', 'Sélange', 'Habay-la-Neuve', 'Guerlange', 'Rachecourt', 'Battincourt', 'Nobressart',
    'Heinstert', 'Tintange', 'Beho', 'Wolkrange', 'Toernich', 'Guirsch', 'Tontelange', 'Nothomb', 'Parette', 'Sainlez',
    'Hussigny-Godbrange', 'Roussy-le-Village', 'Basse-Rentgen', 'Mondorff', 'Puttelange-lès-Thionville', 'Contz-les-Bains', 'Kanfen',
    'Entrange', 'Aumetz', 'Tressange', 'Crusnes', 'Longuyon', 'Manderen', 'Launstroff', 'Waldwisse', 'Merschweiller', 'Kirsch-lès-Sierck',
    'Boler', 'Breistroff', 'Garche', 'Thil', 'Errouville', 'Lexy', 'Cosnes', 'Gorcy',
    'Besch', 'Wellen', 'Temmels', 'Oberbillig', 'Langsur', 'Ralingen', 'Bollendorf', 'Wallendorf', 'Körperich', 'Dasburg', 'Mesenich',
    'Grewenich', 'Metzdorf', 'Minden', 'Echternacherbruck', 'Gentingen', 'Roth an der Our', 'Schankweiler', 'Wasserliesch', 'Könen', 'Tawern',
    'Fellerich', 'Sinz', 'Borg',
    // Countries and regions
    'France', 'Frankreich', 'Belgique', 'Belgium', 'Belgien', 'Deutschland', 'Germany', 'Allemagne', 'Lorraine', 'Wallonie',
    'Saarland', 'Sarre', 'Rheinland-Pfalz', 'Frontière', 'Grenze',
  ].map(placeKey),
);
// A foreign postcode beside such a town: "B-6700 Arlon", "57100 Thionville", "D-54290 Trier".
const FOREIGN_POSTCODE = /(?:^|\s)(?:[BFD]\s*-\s*)?\d{4,5}(?=\s|$)/gi;
// The key of a place text to look up in ABROAD and ALSO_ABROAD, a postcode beside it left out.
export const abroadKey = (text: string): string => placeKey(text.replace(FOREIGN_POSTCODE, ' '));
// A postcode that is another country's whatever the town: a country's letter before it
// ("B-6700", "F-57570", "D-66706", "DE-54308") or five digits (France's and Germany's; Luxembourg's
// have four). In a place text or in the postcode's own field.
export const OTHER_COUNTRY_POSTCODE = /(?:^|[\s,;(/])((?:[BFD]|BE|FR|DE)\s*-\s*\d{4,5}|\d{5})(?=$|[\s,;)/])/i;
// Names a town abroad bears as well as a place of Luxembourg: "Perl" (Perlé's German name),
// "Rédange" (Redange's French name, and a town of Lorraine). Read as the place of Luxembourg,
// unless the record's coordinates are far from it (resolvePlace).
export const ALSO_ABROAD = new Set(['Perl', 'Rédange'].map(placeKey));

// The country's name, which agencies add after a street ("Route d'Esch, Luxembourg").
export const COUNTRY_KEYS = new Set(['luxembourg', 'luxemburg', 'letzebuerg', 'lux', 'lu', 'grandduchedeluxembourg', 'grandduchyofluxembourg', 'grossherzogtumluxemburg']);

// The countries around Luxembourg, for the reasons given.
const COUNTRY_NAMES: Record<string, string> = { BE: 'Belgium', FR: 'France', DE: 'Germany', NL: 'the Netherlands' };

// Coordinates within this distance of a reference point of Luxembourg (a commune's or a
// locality's) count as Luxembourg's whatever the borders say: country-coder's borders are
// simplified (3 of the 593 localities of data/localities.csv, on the Our, lie in Germany by
// them), and a house stands near its village's point. The towns across the border that records
// were placed by (Arlon, Athus, Longwy, Perl, Wehr: an outside probe) lie 1.8-10 km from one.
export const ABROAD_MARGIN_KM = 1.5;

type CountryCoder = { iso1A2Code(loc: [number, number]): string | null };
let coder: CountryCoder | null = null;

// The country other than Luxembourg whose territory holds the coordinates (its English name),
// or null. Luxembourg's bounding box holds parts of Belgium, France and Germany, with Arlon,
// Athus, Longwy and Perl; the box alone let a record with their coordinates and no place
// named, the country's name or a village the importer does not know into the nearest commune
// (an outside probe). By @rapideditor/country-coder (borders of every country, offline), loaded
// at the first coordinates it is asked about (about 9 MB of heap, 70 ms): a server that never
// imports does not carry it.
export function countryAbroadAt(gz: Gazetteer, coords: { lat: number; lng: number }): string | null {
  coder ??= createRequire(import.meta.url)('@rapideditor/country-coder') as CountryCoder;
  const code = coder.iso1A2Code([coords.lng, coords.lat]);
  if (code === 'LU' || gz.nearestCommune(coords.lat, coords.lng).km <= ABROAD_MARGIN_KM) return null;
  return code === null ? 'no country' : (COUNTRY_NAMES[code] ?? code);
}

// The region around Luxembourg (Lorraine, Wallonia's south, Saarland, Trier's): coordinates there,
// outside Luxembourg's box, are a place abroad, not a slip (0/0, metres of another grid).
const AROUND = { minLat: 48.8, maxLat: 50.8, minLng: 4.8, maxLng: 7.4 };
export function nearLuxembourg(lat: number | null, lng: number | null): { lat: number; lng: number } | null {
  if (lat === null || lng === null || !Number.isFinite(lat) || !Number.isFinite(lng)) return null;
  return lat >= AROUND.minLat && lat <= AROUND.maxLat && lng >= AROUND.minLng && lng <= AROUND.maxLng ? { lat, lng } : null;
}
