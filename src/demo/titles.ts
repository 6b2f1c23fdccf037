import type { ListingType } from '../domain/listing.js';
import type { Lang } from './agencies.js';
import type { Kind } from './properties.js';
import type { Rng } from './random.js';

// The titles of the copies, in French, English or German, the way agencies write them.

const ADJ: Record<Lang, string[]> = {
  fr: ['lumineux', 'rénové', 'moderne', 'spacieux', 'neuf', 'calme'],
  en: ['Bright', 'Renovated', 'Modern', 'Spacious', 'New', 'Quiet'],
  de: ['Helle', 'Renovierte', 'Moderne', 'Geräumige', 'Neue', 'Ruhige'],
};
const EXTRA: Record<Lang, string[]> = {
  fr: ['avec balcon', 'avec terrasse', 'proche gare', 'avec parking', 'meublé', 'près du tram', '& jardin', '; cave et parking'],
  en: ['with balcony', 'with terrace', 'near the station', 'with parking', 'furnished', 'near the tram', '& garden'],
  de: ['mit Balkon', 'mit Terrasse', 'nahe Bahnhof', 'mit Stellplatz', 'möbliert', 'nahe Tram', '"Neubau"'],
};

export function makeTitle(rng: Rng, lang: Lang, type: ListingType, kind: Kind, rooms: number, placeName: string, city: boolean): string {
  const beds = rooms - 1;
  // Only the capital has a tram.
  const extras = city ? EXTRA[lang] : EXTRA[lang].filter((e) => !/tram/i.test(e));
  const extra = rng.chance(0.45) ? ' ' + rng.pick(extras) : '';
  let core: string;
  if (lang === 'fr') {
    const plural = beds > 1 ? 's' : '';
    core =
      kind === 'room'
        ? rng.pick([`Chambre en colocation à ${placeName}`, `Colocation : chambre meublée à ${placeName}`, `Chambre dans colocation ${placeName}`])
        : kind === 'studio'
          ? `Studio ${rng.pick(ADJ.fr)}${extra} à ${placeName}`
          : kind === 'house'
            ? rng.pick([`Maison ${beds} chambres${extra} à ${placeName}`, `Maison avec jardin à ${placeName}`])
            : `Appartement ${beds} chambre${plural}${extra} à ${placeName}`;
    if (type === 'SALE') core = rng.chance(0.5) ? `À vendre : ${core}` : core;
    if (type === 'SUBLET') core = `Sous-location : ${core}`;
    if (type === 'RENT' && rng.chance(0.3)) core = `À louer : ${core}`;
  } else if (lang === 'en') {
    core =
      kind === 'room'
        ? rng.pick([`Room in shared flat – ${placeName}`, `Furnished room in flatshare, ${placeName}`, `Flatshare room in ${placeName}`])
        : kind === 'studio'
          ? `${rng.pick(ADJ.en)} studio${extra} in ${placeName}`
          : kind === 'house'
            ? rng.pick([`${beds}-bedroom house${extra} in ${placeName}`, `Family house with garden in ${placeName}`])
            : `${rng.pick(ADJ.en)} ${beds}-bedroom apartment${extra} in ${placeName}`;
    if (type === 'SALE') core = `For sale: ${core}`;
    if (type === 'SUBLET') core = `Sublet: ${core}`;
  } else {
    core =
      kind === 'room'
        ? rng.pick([`WG-Zimmer in ${placeName}`, `Möbliertes Zimmer in Wohngemeinschaft, ${placeName}`])
        : kind === 'studio'
          ? `${rng.pick(['Möbliertes', 'Helles', 'Modernes'])} Studio${extra} in ${placeName}`
          : kind === 'house'
            ? rng.pick([`Einfamilienhaus${extra} in ${placeName}`, `Haus mit ${beds} Schlafzimmern in ${placeName}`])
            : `${rng.pick(ADJ.de)} ${rooms}-Zimmer-Wohnung${extra} in ${placeName}`;
    if (type === 'SALE') core = `Zu verkaufen: ${core}`;
    if (type === 'SUBLET') core = `Untermiete: ${core}`;
  }
  return core;
}
