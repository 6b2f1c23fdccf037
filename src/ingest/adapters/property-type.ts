// What a property type says: a home, or something that is not one (the CSV's "Type de bien",
// a JSON feed's property_type: src/ingest/adapters/csv.ts, json.ts).
import { tokens } from '../../reference/gazetteer.js';
import { NOT_HOME_WORDS } from './common.js';

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
  'verger', 'vergers', 'wiese', 'wiesen', 'weide', 'weideland', 'acker', 'ackerland', 'pre', 'pres', 'prairie', 'paturage', 'foret',
  'bois', 'wald', 'waldgrundstuck', 'vigne', 'vignes', 'weinberg', 'landwirtschaftliche', 'hotel', 'hotels', 'gite', 'gites',
  // An outside probe of stop 47: imported as homes.
  'atelier', 'ateliers', 'hall', 'halls', 'stockage', 'depot', 'depots', 'remise', 'remises', 'commerces', 'parcelle', 'parcelles',
  'coworking', 'baugrund', 'gastronomie', 'einzelhandel', 'kiosk', 'kiosque', 'industrial', 'workshop', 'workshops', 'offices',
]);
// A first word that says what kind of space follows ("Surface industrielle", "Espace de
// bureaux", "Immeuble de rapport", "Lot à bâtir", "Station-service"): not a home when a word of
// the head says so. ("Immeuble" alone, or "Lot 3 - Appartement", is a home.)
const CONTAINERS = new Set([
  'surface', 'surfaces', 'espace', 'espaces', 'plateau', 'plateaux', 'immeuble', 'immeubles', 'batiment', 'batiments', 'cellule',
  'cellules', 'salle', 'salles', 'station', 'unite', 'unites', 'lot', 'lots', 'place', 'places', 'building', 'buildings', 'unit',
  'units', 'space', 'spaces', 'co', 'pas',
]);
const NOT_HOME_HEAD_WORDS = new Set([
  'rapport', 'stationnement', 'coworking', 'working', 'fitness', 'sport', 'service', 'services', 'industrial', 'batir', 'constructible',
  'constructibles', 'porte', 'stockage', 'commerces', 'activite', 'activites', 'artisanal', 'artisanale', 'retail', 'plot',
]);
// Words that end a type's head: what comes after them is the home's extras.
const EXTRAS = new Set(['avec', 'mit', 'with', 'et', 'and', 'und', 'inkl', 'incl', 'including', 'plus', 'sowie', 'comprenant', 'incluant']);
// German compounds ending in a space that is no home ("Tiefgaragenplatz", "Produktionshalle",
// "Verkaufsfläche", "Gewerbeeinheit"), unless a home's ("Wohnfläche", "Wohneinheit").
const NOT_HOME_ENDINGS = ['platz', 'platze', 'halle', 'hallen', 'flache', 'flachen', 'grundstuck', 'garage', 'garagen', 'lager', 'raum', 'raume', 'gewerbe', 'praxis', 'laden', 'geschaft', 'objekt', 'immobilie'];
const HOME_COMPOUND = /^(?:wohn|eigentumswohn|miet)/;
// And German compounds that start with a business ("Bürogebäude", "Geschäftshaus", "Gewerbeeinheit").
const BUSINESS_COMPOUND = /^(?:buro|buero|gewerbe|geschafts|laden|lager|praxis|industrie|werkstatt|hotel|gastro)[a-z]{3,}$/;
// Types that start like one of the above but are homes.
const HOMES = [/^local d habitation/, /^atelier d?\s?(?:artistes?|loft)/, /^(?:surface|espace)s? (?:de vie|habitable)/];

// Whether a property type ("Garage", "Bureau", "Local commercial", "Terrain", "Cave", "Büro",
// "Place de parking", "Immeuble de rapport", "Espace de bureaux") names something that is not a
// home, by the words of its head.
export function notAHome(text: string): boolean {
  const words = tokens(text);
  const joined = words.join(' ');
  if (HOMES.some((re) => re.test(joined))) return false;
  const end = words.findIndex((w) => EXTRAS.has(w));
  const head = end < 0 ? words : words.slice(0, end);
  const [first = ''] = head;
  if (NOT_HOME_WORDS.has(first) || NOT_HOME_FIRST_WORDS.has(first) || BUSINESS_COMPOUND.test(first)) return true;
  if (!HOME_COMPOUND.test(first) && NOT_HOME_ENDINGS.some((e) => first.length > e.length + 2 && first.endsWith(e))) return true;
  if (CONTAINERS.has(first)) {
    return head.slice(1).some((w) => NOT_HOME_WORDS.has(w) || NOT_HOME_FIRST_WORDS.has(w) || NOT_HOME_HEAD_WORDS.has(w));
  }
  return first === 'chambre' && words.includes('hotes');
}
