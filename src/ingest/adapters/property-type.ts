// What a CSV "Type de bien" says: a home, or something that is not one (src/ingest/adapters/csv.ts).
import { tokens } from '../../reference/gazetteer.js';
import { NOT_HOME_WORDS } from './common.js';

// A property type's words that name a home, wherever they stand: a home's type may name its
// extras ("Maison avec garage", "Neubau Wohnung mit Tiefgarage", "Appartement + parking").
const HOME_TYPE_WORDS = new Set([
  'appartement', 'appartements', 'appart', 'apartment', 'apartments', 'flat', 'flats', 'studio', 'studios', 'duplex', 'triplex',
  'penthouse', 'loft', 'lofts', 'maison', 'maisons', 'maisonnette', 'house', 'houses', 'home', 'villa', 'villas', 'bungalow',
  'chalet', 'fermette', 'ferme', 'bauernhaus', 'wohnung', 'wohnungen', 'etagenwohnung', 'dachgeschosswohnung', 'haus',
  'einfamilienhaus', 'mehrfamilienhaus', 'reihenhaus', 'doppelhaus', 'doppelhaushalfte', 'chambre', 'chambres', 'room', 'rooms',
  'zimmer', 'logement', 'logements', 'residence', 'mansarde', 'colocation', 'kot',
]);
// What a property type names that is no home, beyond NOT_HOME_WORDS: parking spaces, cellars,
// workshops and halls, shops and practices, a business or an investment building.
const NOT_HOME_TYPE_WORDS = new Set([
  'emplacement', 'emplacements', 'box', 'boxes', 'carport', 'carports', 'tiefgarage', 'stellplatze', 'einstellplatz', 'cave', 'caves',
  'keller', 'buro', 'buero', 'buros', 'bueros', 'praxis', 'cabinet', 'atelier', 'ateliers', 'werkstatt', 'hangar', 'hangars',
  'halle', 'hallen', 'lagerhalle', 'warehouse', 'storage', 'restaurant', 'restaurants', 'cafe', 'bar', 'magasin',
  'boutique', 'laden', 'shop', 'retail', 'fonds', 'rapport', 'industriel', 'industrielle', 'local', 'locaux', 'surface', 'surfaces',
]);

// Whether a property type is something that is not a home (the CSV's "Type de bien":
// "Garage", "Bureau", "Local commercial", "Terrain", "Place de parking", "Cave"): by the word
// it starts with; else, when no word of it names a home, by any word of it (an outside probe
// of stop 46: "Place de parking", "Emplacement intérieur", "Tiefgarage", "Büro", "Local" were
// imported as homes).
export function notAHome(text: string): boolean {
  const words = tokens(text);
  const [first = ''] = words;
  if (NOT_HOME_WORDS.has(first)) return true;
  if (words.some((w) => HOME_TYPE_WORDS.has(w))) return false;
  return words.some((w) => NOT_HOME_WORDS.has(w) || NOT_HOME_TYPE_WORDS.has(w));
}
