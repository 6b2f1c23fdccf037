import { CsvError, parse } from 'csv-parse';
import { placeKey } from '../../reference/gazetteer.js';
import { FeedParseError, MAX_FIELD_CHARS } from '../errors.js';
import type { FeedEvent, ParsedFeed } from '../types.js';
import { cleanExternalId, collectFeed, offerType } from './common.js';

export const CSV_HEADER = [
  'Référence', "Type d'offre", 'Type de bien', 'Titre', 'Prix', 'Surface', 'Pièces', 'Chambres', 'Localité',
  'Code postal', 'Latitude', 'Longitude', 'Photos', 'Étudiants', 'Date de création', 'Lien',
] as const;


// Records flow out as the text comes in: csv-parse is fed piece by piece and hands each
// record over (on_record) as soon as it is complete, so only the record being read is held.
export async function* readCsvFeed(text: AsyncIterable<string>): AsyncGenerator<FeedEvent> {
  const pending: { fields: string[]; line: number }[] = [];
  const parser = parse({
    delimiter: ';',
    quote: '"',
    relax_column_count: true,
    skip_empty_lines: true,
    max_record_size: MAX_FIELD_CHARS,
    on_record: (record: string[], context: { lines: number }) => {
      pending.push({ fields: record, line: context.lines });
      return null;
    },
  });
  // Errors come back through write's and end's callbacks; without a listener the 'error'
  // event itself would end the process.
  parser.on('error', () => {});
  let header: string[] | null = null;
  const events: FeedEvent[] = [];
  // The records read so far, checked and made into events (the first one is the header).
  const take = () => {
    for (const { fields, line } of pending.splice(0)) {
      if (!header) {
        checkHeader(fields);
        header = fields;
        continue;
      }
      const e = toEvent(fields, line);
      if (e) events.push(e);
    }
  };
  const run = async (step: (done: (err?: Error | null) => void) => void) => {
    try {
      await new Promise<void>((resolve, reject) => step((err) => (err ? reject(err) : resolve())));
    } catch (e) {
      // A file in another layout (commas, other columns) is refused for what it is, not for
      // the first quoting error further down.
      take();
      if (!(e instanceof CsvError)) throw e;
      const lines = (e as CsvError & { lines?: number }).lines;
      const where = lines ? ` near line ${lines}` : '';
      throw new FeedParseError(`the CSV cannot be read${where}: ${e.message}`);
    }
    take();
  };
  for await (const piece of text) {
    await run((done) => parser.write(piece, done));
    yield* events.splice(0);
  }
  await run((done) => {
    parser.once('error', done);
    parser.end(() => done());
  });
  yield* events.splice(0);
  if (!header) throw new FeedParseError('the CSV has no header row');
}

// The CSV of a whole file in memory (tests, tools).
export function parseCsvFeed(input: Buffer | string): Promise<ParsedFeed> {
  return collectFeed(readCsvFeed, input);
}

function toEvent(f: string[], line: number): FeedEvent | null {
  const position = `line ${line}`;
  if (f.length === 1 && f[0].trim() === '') return null;
  if (f.length < CSV_HEADER.length) {
    return {
      kind: 'reject',
      reject: {
        external_id: cleanExternalId(f[0]),
        position,
        reason: `the row has ${f.length} fields, ${CSV_HEADER.length} expected (a missing ';' or a cut-off line?)`,
      },
    };
  }
  const offerText = f[1];
  const offer = offerType(offerText);
  return {
    kind: 'record',
    record: {
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
    },
  };
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
