import { parse } from 'csv-parse/sync';
import type { ListingType } from '../../domain/listing.js';
import { placeKey } from '../../reference/gazetteer.js';
import { FeedParseError, MAX_FIELD_CHARS } from '../errors.js';
import { cleanExternalId } from '../normalize.js';
import type { ParsedFeed, RawRecord, Reject } from '../types.js';
import { decodeFeed } from './common.js';

export const CSV_HEADER = [
  'Référence', "Type d'offre", 'Type de bien', 'Titre', 'Prix', 'Surface', 'Pièces', 'Chambres', 'Localité',
  'Code postal', 'Latitude', 'Longitude', 'Photos', 'Étudiants', 'Date de création', 'Lien',
] as const;

const OFFERS: Record<string, ListingType> = {
  location: 'RENT', vente: 'SALE', colocation: 'FLATSHARE', souslocation: 'SUBLET',
  rent: 'RENT', sale: 'SALE', flatshare: 'FLATSHARE', sublet: 'SUBLET',
};

export function parseCsvFeed(input: Buffer | string): ParsedFeed {
  const text = decodeFeed(input);
  // The header first, on its own: a file in another layout (commas, other columns) is then
  // refused for what it is, not for the first quoting error further down.
  let header: string[] | undefined;
  try {
    header = (parse(text, { delimiter: ';', quote: '"', relax_column_count: true, to: 1, max_record_size: MAX_FIELD_CHARS }) as string[][])[0];
  } catch {
    header = undefined;
  }
  if (header) checkHeader(header);
  let rows: { record: string[]; info: { lines: number } }[];
  try {
    rows = parse(text, {
      delimiter: ';',
      quote: '"',
      relax_column_count: true,
      skip_empty_lines: true,
      info: true,
      max_record_size: MAX_FIELD_CHARS,
    }) as unknown as { record: string[]; info: { lines: number } }[];
  } catch (e) {
    const err = e as { message: string; code?: string; lines?: number };
    const where = err.lines ? ` near line ${err.lines}` : '';
    throw new FeedParseError(`the CSV cannot be read${where}: ${err.message}`);
  }
  if (rows.length === 0) throw new FeedParseError('the CSV has no header row');
  checkHeader(rows[0].record);

  const records: RawRecord[] = [];
  const rejects: Reject[] = [];
  for (const { record: f, info } of rows.slice(1)) {
    const position = `line ${info.lines}`;
    if (f.length === 1 && f[0].trim() === '') continue;
    if (f.length < CSV_HEADER.length) {
      rejects.push({
        external_id: cleanExternalId(f[0]),
        position,
        reason: `the row has ${f.length} fields, ${CSV_HEADER.length} expected (a missing ';' or a cut-off line?)`,
      });
      continue;
    }
    const offerText = f[1];
    const offer = OFFERS[placeKey(offerText)];
    records.push({
      position,
      externalId: cleanExternalId(f[0]),
      action: 'upsert',
      listingType: offer ?? null,
      typeText: offerText.trim() || null,
      title: f[3],
      price: f[4],
      area: f[5],
      rooms: f[6],
      bedrooms: f[7],
      town: f[8],
      postcode: f[9],
      lat: f[10],
      lng: f[11],
      images: f[12].split('|').map((s) => s.trim()).filter(Boolean),
      students: f[13],
      date: f[14],
      dateKind: 'created',
      sourceUrl: f[15].trim() || null,
    });
  }
  return { mode: null, records, rejects };
}

function checkHeader(header: string[]): void {
  const expected = CSV_HEADER.map((h) => placeKey(h));
  for (let i = 0; i < expected.length; i++) {
    const got = header[i];
    if (got === undefined || placeKey(got) !== expected[i]) {
      const shown = got === undefined ? 'missing' : `"${got.slice(0, 40)}"`;
      throw new FeedParseError(
        `wrong CSV header: column ${i + 1} is ${shown}, expected "${CSV_HEADER[i]}" (the header must start with ${CSV_HEADER.join(';')}, separated by semicolons)`,
      );
    }
  }
}
