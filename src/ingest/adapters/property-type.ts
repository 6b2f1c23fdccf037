// What a property type says: a home, or something that is not one (the CSV's "Type de bien",
// a JSON feed's property_type: src/ingest/adapters/csv.ts, json.ts).
import { tokens } from '../../reference/gazetteer.js';
import { NOT_HOME_WORDS, titleTexts } from './common.js';

// What a property type starts with when it is no home, beyond NOT_HOME_WORDS: parking spaces,
// cellars, workshops and halls, shops and practices, a business, land that is no plot, lodging
// by the night. Only the type's head is read (its words before "avec", "mit", "with"...): a
// home's type names its extras after it ("Maison avec garage", "Rez-de-jardin avec cave",
// "Neubau Wohnung mit Tiefgarage", "T3 avec parking": a regression probe of stop 46 found 443
// of 1,102 such types rejected when any word was read).
const NOT_HOME_FIRST_WORDS = new Set([
  'emplacement', 'emplacements', 'box', 'boxes', 'carport', 'carports', 'tiefgarage', 'tiefgaragenstellplatz', 'stellplatze',
  'einstellplatz', 'aussenstellplatz', 'parkplatz', 'garagenplatz', 'einzelgarage', 'doppelgarage', 'cave', 'caves', 'cellier',
  'keller', 'kellerraum', 'lagerraum', 'buro', 'buero', 'buros', 'bueros', 'buroflache', 'praxis', 'praxisraume', 'cabinet',
  'werkstatt', 'hangar', 'hangars', 'halle', 'hallen', 'lagerhalle', 'warehouse', 'storage', 'restaurant', 'restaurants', 'cafe',
  'bar', 'magasin', 'boutique', 'laden', 'ladenlokal', 'shop', 'retail', 'pharmacie', 'fonds', 'industriel', 'industrielle',
  'gewerbeflache', 'baugrundstuck', 'bauland', 'plot', 'local', 'locaux',
  // Land that is no building plot, and lodging by the night (noted and left in stop 46).
  'verger', 'vergers', 'wiese', 'wiesen', 'weide', 'weideland', 'acker', 'ackerland', 'prairie', 'paturage', 'foret',
  'bois', 'wald', 'waldgrundstuck', 'vigne', 'vignes', 'weinberg', 'landwirtschaftliche', 'hotel', 'hotels', 'gite', 'gites',
  // An outside probe of stop 47: imported as homes.
  'atelier', 'ateliers', 'hall', 'halls', 'stockage', 'depot', 'depots', 'commerces', 'parcelle', 'parcelles', 'coworking',
  'baugrund', 'gastronomie', 'einzelhandel', 'kiosk', 'kiosque', 'industrial', 'workshop', 'workshops', 'offices',
  // A third regression probe of stop 47 found these imported, as before: shops and premises, car
  // parks and houses of a business, woodland.
  'store', 'stores', 'business', 'geschaft', 'geschafte', 'buttek', 'woodland', 'parkhaus', 'autohaus', 'gasthaus', 'gastehaus',
  'arztehaus', 'kaufhaus', 'gartenhaus', 'tonstudio',
  // An outside probe of stop 48: a garage box and a vineyard, imported as homes.
  'garagenbox', 'vignoble', 'vignobles',
]);
// Words of praise or age before the type ("Superbe garage", "Nouveau bureau", "Neues Büro"):
// the type is the word after them.
const PRAISE = new Set([
  'nouveau', 'nouvel', 'nouvelle', 'neuf', 'neuve', 'superbe', 'beau', 'bel', 'belle', 'magnifique', 'joli', 'jolie', 'grand', 'grande',
  'petit', 'petite', 'spacieux', 'spacieuse', 'lumineux', 'lumineuse', 'charmant', 'charmante', 'new', 'beautiful', 'spacious', 'large',
  'small', 'bright', 'neu', 'neue', 'neuer', 'neues', 'schone', 'schoner', 'schones', 'grosse', 'grosser', 'grosses', 'helle', 'heller',
  'helles',
]);
// A first word that says what kind of space follows ("Surface industrielle", "Espace de
// bureaux", "Immeuble de rapport", "Lot à bâtir", "Station-service"): not a home when a word of
// the head says so. ("Immeuble" alone, or "Lot 3 - Appartement", is a home.)
const CONTAINERS = new Set([
  'surface', 'surfaces', 'espace', 'espaces', 'plateau', 'plateaux', 'immeuble', 'immeubles', 'batiment', 'batiments', 'cellule',
  'cellules', 'salle', 'salles', 'station', 'unite', 'unites', 'lot', 'lots', 'place', 'places', 'building', 'buildings', 'unit',
  'units', 'space', 'spaces', 'co', 'pas', 'murs',
]);
const NOT_HOME_HEAD_WORDS = new Set([
  'rapport', 'stationnement', 'coworking', 'working', 'fitness', 'sport', 'service', 'services', 'industrial', 'batir', 'constructible',
  'constructibles', 'porte', 'stockage', 'commerces', 'activite', 'activites', 'artisanal', 'artisanale', 'retail', 'plot',
  // "Place de parc", Luxembourg's parking space (an outside probe of stop 48).
  'parc',
]);
// Words that end a type's head: what comes after them is the home's extras.
// (And where it stands: "Immeuble sur terrain de 5 ares".)
const EXTRAS = new Set(['avec', 'mit', 'mat', 'with', 'et', 'and', 'und', 'inkl', 'incl', 'including', 'plus', 'sowie', 'comprenant', 'incluant', 'sur', 'auf', 'on']);
// German compounds ending in a space that is no home ("Tiefgaragenplatz", "Produktionshalle",
// "Verkaufsfläche", "Gewerbeeinheit"), unless a home's ("Wohnfläche", "Wohneinheit").
// (Not -objekt, -immobilie, -raum: "Sanierungsobjekt", "Neubauimmobilie", "Dachraum" are homes.)
const NOT_HOME_ENDINGS = ['platz', 'platze', 'halle', 'hallen', 'flache', 'flachen', 'grundstuck', 'garage', 'garagen', 'lager', 'gewerbe', 'praxis', 'laden', 'geschaft'];
const HOME_COMPOUND = /^(?:wohn|eigentumswohn|miet)/;
// And German compounds that start with a business ("Bürogebäude", "Geschäftshaus", "Gewerbeeinheit").
const BUSINESS_COMPOUND = /^(?:buro|buero|gewerbe|geschafts|laden|lager|praxis|industrie|werkstatt|hotel|gastro)[a-z]{3,}$/;
// Types that start like one of the above but are homes.
const HOMES = [/^local d habitation/, /^atelier d?\s?(?:artistes?|loft)/, /^(?:surface|espace)s? (?:de vie|habitable)/, /^hotel particulier/];
// A home named in the head makes a type a home when it starts with a word that may be one
// converted or part of one ("Industrial loft", "Atelier-logement", "Hall of residence room",
// "Lot 3 - Appartement", "Unité de logement"): a regression probe of stop 47 found such types
// rejected. Not when it starts with a word of what is no home ("Bureau loft", "Garage dans
// résidence", "Holiday apartment", "Terrain pour maison": its next regression probe found
// those imported when any first word gave way to a home named after it).
const MAY_BE_HOMES = new Set(['atelier', 'ateliers', 'hall', 'halls', 'industrial', 'workshop', 'workshops', 'hotel', 'hotels', 'gite', 'gites']);
const HOME_WORDS = new Set([
  'appartement', 'appartements', 'apartment', 'apartments', 'flat', 'flats', 'maison', 'maisons', 'house', 'houses', 'loft', 'lofts',
  'wohnung', 'wohnungen', 'haus', 'studio', 'studios', 'duplex', 'triplex', 'penthouse', 'logement', 'logements', 'villa', 'room',
  'rooms', 'zimmer', 'wunneng', 'conversion', 'home', 'homes', 'residence', 'chambre', 'chambres', 'transforme', 'transformee',
  'converti', 'convertie',
]);
// A flat ("Praxiswohnung", "Lagerhallenloft"), or a house.
const FLAT_ENDING = /(?:wohnung|wohnungen|loft)$/;
const namesHome = (words: string[]) => words.some((w) => HOME_WORDS.has(w) || FLAT_ENDING.test(w) || w.endsWith('haus'));
const namesNoHome = (words: string[]) => words.some((w) => NOT_HOME_WORDS.has(w) || NOT_HOME_FIRST_WORDS.has(w) || NOT_HOME_HEAD_WORDS.has(w));
// A lot's or a unit's number or letter ("Lot 3", "Lot B2").
const LABEL = /^(?:\d+[a-z]?|[a-z]\d*|n|no|nr)$/;
// Kinds of space that are buildings: named after a mark, what follows is theirs ("Immeuble (garage)").
const BUILDINGS = new Set(['immeuble', 'immeubles', 'batiment', 'batiments', 'building', 'buildings']);
// Two words that name what is no home together, and a home or nothing apart.
const NOT_HOME_PAIRS = new Set([
  'car park', 'car parking', 'farm land', 'medical practice', 'medical office', 'data center', 'data centre', 'droit au',
]);
// Buildings let or sold for their rents ("Immeuble de rapport", "Maison de rapport").
const INVESTMENT_BUILDINGS = new Set(['immeuble', 'maison', 'batiment', 'residence']);
// Words that say a building was made a home ("combles aménagés", "umgebaut").
const CONVERTED = new Set(['habitable', 'combles', 'amenage', 'amenagee', 'amenages', 'amenagees', 'renove', 'renovee', 'umgebaut', 'ausgebaut', 'converti', 'convertie', 'transforme', 'transformee']);
// Named alone (figures aside: "Grange 200 m²"), what is no home: a meadow, a barn, a stable, an
// attic, a shed, a showroom (an outside probe of stop 48: imported as homes). In a phrase they are
// often homes converted ("Grange rénovée", "Grenier aménagé", "Scheune umgebaut", "Showroom
// converti en loft": its regression probe found them refused when the first word decided).
const ALONE_NOT_HOME = new Set([
  'pre', 'pres', 'grange', 'granges', 'grenier', 'greniers', 'remise', 'remises', 'ecurie', 'ecuries', 'scheune', 'stall', 'stallungen',
  'showroom', 'showrooms',
]);
const withoutPraise = (ws: string[]) => (PRAISE.has(ws[0] ?? '') && ws.length > 1 ? ws.slice(1) : ws);

// Whether a property type ("Garage", "Bureau", "Local commercial", "Terrain", "Cave", "Büro",
// "Place de parking", "Immeuble de rapport", "Espace de bureaux") names something that is not a
// home, by the words of its head.
export function notAHome(text: string): boolean {
  const words = withoutPraise(tokens(text));
  const joined = words.join(' ');
  if (HOMES.some((re) => re.test(joined))) return false;
  // The head ends at a word of EXTRAS, or at a mark that begins the extras: "+", ",", ";", and
  // "(", "/", ":", " - ", which may also name what a kind of space is ("Place - parking",
  // "Lot 3 - Appartement": below). "Immeuble + garage", "Lot 1 Maison (garage)": a regression
  // probe of stop 47 found them rejected, the extras read as the head.
  const cutAtExtras = (ws: string[]) => {
    const end = ws.findIndex((w) => EXTRAS.has(w));
    return end < 0 ? ws : ws.slice(0, end);
  };
  const parts = /^([^+,;(/:|]*?)(?:\s[-–]\s|([+,;(/:|]))(.*)$/.exec(text);
  const head = withoutPraise(cutAtExtras(tokens(parts ? parts[1] : text)));
  const [first = ''] = head;
  if (INVESTMENT_BUILDINGS.has(first) && words.includes('rapport')) return true;
  if (ALONE_NOT_HOME.has(first) && head.slice(1).every((w) => /^\d|^(?:m2|m|qm|sqm|a|ares?|ha)$/.test(w)) && !namesHome(words) && !words.some((w) => CONVERTED.has(w))) return true;
  if (first === 'chambre' && words.includes('hotes')) return true;
  if (NOT_HOME_PAIRS.has(head.slice(0, 2).join(' '))) return true;
  // A business's building ("Geschäftshaus"), not a flat of one ("Praxiswohnung", "Lagerhallenloft").
  if (BUSINESS_COMPOUND.test(first)) return !FLAT_ENDING.test(first);
  if (MAY_BE_HOMES.has(first) && namesHome(head)) return false;
  if (NOT_HOME_WORDS.has(first) || NOT_HOME_FIRST_WORDS.has(first)) return true;
  if (!HOME_COMPOUND.test(first) && NOT_HOME_ENDINGS.some((e) => first.length > e.length + 2 && first.endsWith(e))) return true;
  if (CONTAINERS.has(first)) {
    // What the kind of space is: the rest of the head, or, when that is only a number, what a
    // " - ", ":", "(" or "/" names after it ("Lot 3 - Appartement", "Place (parking)").
    // (Not for a building: "Immeuble (garage)" is a building and its garage.)
    // That is read as a type of its own ("Lot 2 - Hôtel particulier" is a home).
    const named = head.slice(1).filter((w) => !LABEL.test(w));
    if (named.length === 0 && !BUILDINGS.has(first) && parts && parts[2] !== '+' && parts[2] !== ',' && parts[2] !== ';') return notAHome(parts[3]);
    return namesNoHome(named);
  }
  return false;
}

// Without a property type, the title's head says what is offered: "Place de parking intérieure",
// "Bureau 120 m² centre" (an outside probe of stop 48: imported as homes). The reason of the
// reject, or null. A title of several languages: the first one given.
// A title names its home's extras first as often as not ("Parking inclus - Appartement 2 chambres",
// "Hall d'entrée spacieux, appartement", "Halle Victor Hugo - appartement": the regression probe
// of stop 48 found such titles refused), so one that names a home anywhere, in any of its
// languages, is a home's.
// Farm buildings that are made homes.
const FARM_BUILDINGS = new Set(['grange', 'granges', 'grenier', 'greniers', 'remise', 'remises', 'ecurie', 'ecuries', 'scheune', 'stall']);
// More kinds of home a title names (the re-check of stop 48: `Parking inclus - Chalet` refused).
const TITLE_HOME_WORDS = new Set([
  'chalet', 'bungalow', 'maisonnette', 'attique', 'mansarde', 'souplex', 'fermette', 'moulin', 'presbytere', 'chateau',
  'manoir', 'cottage', 'doppelhaushalfte', 'bedsit', 'kot', 'colocation', 'wohnen', 'bungalows', 'chalets',
]);
// Words that name a home only where they stand (an outside probe of stop 49 found `Garage fermé` and
// `Local commercial rez-de-chaussée` taken for homes): a farm (`ferme`) at the head of a part or
// after what names it (`Ancienne ferme`, `Corps de ferme`), not as the adjective `fermé`; a ground
// floor (`Rez-de-jardin`) at the head of a part; `terre` only in `pied-à-terre`.
const FARM_BEFORE = new Set(['ancienne', 'vieille', 'belle', 'jolie', 'grande', 'petite', 'une', 'la', 'de', 'authentique', 'superbe']);
const weakHomeWord = (w: readonly string[], i: number): boolean =>
  (w[i] === 'ferme' && (i === 0 || FARM_BEFORE.has(w[i - 1]))) || (w[i] === 'rez' && i === 0) || (w[i] === 'terre' && w[i - 1] === 'a' && w[i - 2] === 'pied');
const partsOf = (t: string) => t.split(/\s[-–]\s|[|,:;]/);
export function titleNotAHome(title: unknown): string | null {
  const texts = titleTexts(title);
  const text = texts[0];
  // A part of the title (between " - ", "|", ",", ":" or ";") that is a farm building made a home:
  // "Parking inclus - Grange rénovée" (not "Bureau dans une grange rénovée", nor "+ grenier aménagé").
  const converted = (w: string[]) => FARM_BUILDINGS.has(w[0] ?? '') && w.some((x) => CONVERTED.has(x));
  const home = (t: string) => {
    const w = tokens(t);
    const parts = partsOf(t).map(tokens);
    return namesHome(w) || w.some((x) => TITLE_HOME_WORDS.has(x)) || parts.some((pw) => converted(pw) || pw.some((_, i) => weakHomeWord(pw, i))) || HOMES.some((re) => re.test(w.join(' ').replace(/^.*?(?=hotel particulier|local d habitation)/, '')));
  };
  if (text === undefined || texts.some(home) || !notAHome(text)) return null;
  const shown = text.trim().length > 60 ? `${text.trim().slice(0, 57)}...` : text.trim();
  return `no property type is given, and the title "${shown}" names something that is not a home`;
}
