// What a CSV "Type de bien" says: a home, or something that is not one (src/ingest/adapters/csv.ts).
import { tokens } from '../../reference/gazetteer.js';
import { NOT_HOME_WORDS } from './common.js';

// What a property type starts with when it is no home, beyond NOT_HOME_WORDS: parking spaces,
// cellars, workshops and halls, shops and practices, a business. Only its first word is read:
// a home's type names its extras after it ("Maison avec garage", "Rez-de-jardin avec cave",
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
]);

// Whether a property type is something that is not a home (the CSV's "Type de bien":
// "Garage", "Bureau", "Local commercial", "Terrain", "Cave", "Büro"), by the word it starts
// with; and a parking or standing place ("Place de parking") or an investment building
// ("Immeuble de rapport"). An outside probe of stop 46 found "Place de parking",
// "Emplacement intérieur", "Tiefgarage", "Büro", "Local" imported as homes; it left land
// ("Verger", "Wiese") and lodging ("Hôtel", "Chambre d'hôtes"), rejected since stop 47.
export function notAHome(text: string): boolean {
  const words = tokens(text);
  const [first = '', second = ''] = words;
  if (NOT_HOME_WORDS.has(first) || NOT_HOME_FIRST_WORDS.has(first)) return true;
  if ((first === 'surface' || first === 'surfaces') && NOT_HOME_WORDS.has(second)) return true;
  if (first === 'place' && words.some((w) => w === 'parking' || w === 'stationnement')) return true;
  if (first === 'chambre' && words.includes('hotes')) return true;
  return first === 'immeuble' && words.includes('rapport');
}
