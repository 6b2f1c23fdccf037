import { CsvError, parse } from 'csv-parse';
import { FeedParseError, MAX_FIELD_CHARS } from '../errors.js';
import type { FeedEvent, ParsedFeed } from '../types.js';
import { isHttpUrl } from '../links.js';
import { show } from '../values.js';
import { cleanExternalId, collectFeed, offerForDone, offerType } from './common.js';
import { CSV_HEADER, columnsOf, type Columns } from './csv-columns.js';
import { filledLength, fitOfTyped, leftOutAtEnd, rowOfItsOwn, TYPED_COLUMNS } from './csv-rows.js';
import { saysDone, titleSaysDone } from './deal-done.js';
import { notAHome, titleNotAHome } from './property-type.js';

export { CSV_HEADER };

// Records flow out as the text comes in: csv-parse is fed piece by piece and hands each
// record over (on_record) as soon as it is complete, so only the record being read is held.
export async function* readCsvFeed(text: AsyncIterable<string>): AsyncGenerator<FeedEvent> {
  const pending: { fields: string[]; line: number }[] = [];
  let overCounted = 0;
  // The last line of the last record read, and the empty lines skipped up to it: a record that
  // cannot be read begins after it and the empty lines since.
  let lastEnd = 0;
  let emptyBefore = 0;
  const parser = parse({
    delimiter: ';',
    quote: '"',
    // A quote inside a field that does not begin with one (`Appartement "Les Jardins" 2 ch`,
    // `Vue 24" écran`) is a character of the text, as spreadsheets write it; without this,
    // csv-parse refuses the whole file at the first one. A field that does begin with a
    // quote is still read to its closing quote, within max_record_size.
    relax_quotes: true,
    // Every line ending, mixed within a file (a header written on Windows on rows exported on
    // Linux): left to itself, csv-parse takes the header's ending for the whole file and reads
    // each row ending otherwise into the field before it.
    record_delimiter: ['\r\n', '\n', '\r'],
    relax_column_count: true,
    skip_empty_lines: true,
    // A row's characters (csv-parse counts the row, not each field): a feed's rows are a few
    // hundred; a longer one is a quote never closed, or not a feed.
    max_record_size: MAX_FIELD_CHARS,
    on_record: (record: string[], context: { lines: number; empty_lines: number }) => {
      // csv-parse counts the lines up to a record's end, and a CRLF inside a quoted field as two
      // (an outside probe: rejects after a multi-line title were reported 2 lines down per CRLF):
      // the record's position is its first line, counted once per line break.
      let breaks = 0;
      for (const f of record) {
        if (!f.includes('\n') && !f.includes('\r')) continue;
        overCounted += f.split('\r\n').length - 1;
        breaks += f.split(/\r\n|\r|\n/).length - 1;
      }
      lastEnd = context.lines - overCounted;
      emptyBefore = context.empty_lines;
      pending.push({ fields: record, line: lastEnd - breaks });
      return null;
    },
  });
  // Errors come back through write's and end's callbacks; without a listener the 'error'
  // event itself would end the process.
  parser.on('error', () => {});
  let columns: Columns | null = null;
  const events: FeedEvent[] = [];
  // The last row read, and whether the text ends with a line ending (for a file cut off).
  let last: { line: number; fields: number; needed: number } | null = null;
  // The most fields of a row with no line break in its fields, and the row with a field over
  // several lines that has the most fields (see spilled, at the end).
  let plainMost = 0;
  let multiLine: { line: number; fields: number; column: number } | null = null;
  let endsLine = true;
  // A row read with fields left out at its end (leftOutAtEnd), held until the next row shows it
  // is not the first half of a line broken inside a field that is not quoted: that half's last
  // field is cut (`49.5` of `49.5173`, `1 2` of `1 250 €`), and the next row, the rest of the
  // line, is short and out of place.
  type HeldRow = { fields: string[]; line: number; event: FeedEvent };
  let shortRow: HeldRow | null = null;
  // Software that leaves out empty trailing fields does so on many rows; a single short row is a
  // line cut off (its last field perhaps cut too), refused as before (the third regression check
  // of stop 52). So the first short row waits for a second, and is refused if none comes.
  let firstShort: HeldRow | null = null;
  let shortRows = 0;
  const release = (next: string[] | null) => {
    if (!shortRow || !columns) return;
    // The rest of a line is shorter than the header and no row of its own (rowOfItsOwn). Extra
    // columns, named or not, make it as long as a documented row (the second regression check of
    // stop 52), so the header's length counts, not the documented columns'.
    const broken = next !== null && filledLength(next) < columns.length && !rowOfItsOwn(next, columns.at);
    if (broken) events.push(tooShort(shortRow.fields, shortRow.line, columns, BROKEN_LINE));
    else if (++shortRows === 1) firstShort = shortRow;
    else {
      if (firstShort) events.push(firstShort.event);
      firstShort = null;
      events.push(shortRow.event);
    }
    shortRow = null;
  };
  // The records read so far, checked and made into events (the first one is the header).
  const take = () => {
    for (const { fields, line } of pending.splice(0)) {
      // Rows of separators only (`;;;;;`, the rows Excel writes after the last it has
      // filled) hold nothing.
      if (fields.every((f) => f.trim() === '')) continue;
      if (!columns) {
        // Excel's `sep=;` line, which tells it the separator, comes before the header.
        if (isSeparatorLine(fields)) continue;
        columns = columnsOf(fields);
        continue;
      }
      const swallowed = fields.findIndex((f) => holdsRows(f, columns!));
      if (swallowed !== -1) {
        // A quote opened at the start of a field and closed only rows later: the rows between
        // are inside that field. Reading on would lose them without a word (and a full
        // snapshot would withdraw their listings), so the file is refused, as it was before
        // quotes were relaxed.
        throw new FeedParseError(
          `the CSV cannot be read near line ${line}: column ${swallowed + 1} holds what looks like whole rows (a quote that opens it is not closed before the rows that follow)`,
        );
      }
      // A quote that opens a field and is closed by the first quote of a later row (a quoted
      // title there): the field holds the rest of its own row, a line break and the start of the
      // next row, whose remaining fields become this row's. The next row is lost without a word
      // (the regression probe of stop 44: a snapshot withdrew it, and this row took its price).
      const tookNext = fields.findIndex((f, i) => holdsRestOfRow(f, i, columns!));
      if (tookNext !== -1) {
        throw new FeedParseError(
          `the CSV cannot be read near line ${line}: column ${tookNext + 1} holds the rest of its row and the start of the next (a quote that opens it is closed only by a quote of a later row)`,
        );
      }
      // The same closed by the next row's quoted field in the same column: the field's later line
      // is the next row's start, its typed columns' values in place (a price, an area, rooms...).
      const startsRow = fields.findIndex((f) => holdsRowStart(f, columns!));
      if (startsRow !== -1) {
        throw new FeedParseError(
          `the CSV cannot be read near line ${line}: column ${startsRow + 1} holds the start of the next row (a quote that opens it is closed only by a quote of a later row)`,
        );
      }
      // Rows with a field over several lines are judged at the end, against the others (spilled).
      // Fields are counted up to the last that holds something: padding (`;;;;`) and the empty
      // trailing columns some rows leave out and others write are not fields of the row.
      const broken = fields.findIndex((f) => /[\r\n]/.test(f));
      const held = filledLength(fields);
      if (broken === -1) plainMost = Math.max(plainMost, held);
      else if (!multiLine || held > multiLine.fields) multiLine = { line, fields: held, column: broken + 1 };
      last = { line, fields: fields.length, needed: columns.needed };
      release(fields);
      const event = toEvent(fields, line, columns);
      if (fields.length < columns.needed && event.kind === 'record') shortRow = { fields, line, event };
      else events.push(event);
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
      // An opening quote never closed: csv-parse names the line where the file ends (or where the
      // field grew past the limit), not the line of the quote. The record holding it begins after
      // the last one read (an outside probe).
      const skipped = Math.max(0, ((e as CsvError & { empty_lines?: number }).empty_lines ?? emptyBefore) - emptyBefore);
      const at = `the CSV cannot be read from line ${lastEnd + 1 + skipped}`;
      if (e.code === 'CSV_QUOTE_NOT_CLOSED') throw new FeedParseError(`${at}: a field of the row there opens a quote that is not closed before the end of the file`);
      // csv-parse bounds a row, not a field: a row of two fields of 600,000 characters was refused
      // as "a field" that "does not end" (an outside probe of stop 59).
      if (e.code === 'CSV_MAX_RECORD_SIZE') {
        throw new FeedParseError(`${at}: the row there is longer than ${MAX_FIELD_CHARS.toLocaleString('en')} characters, which no row of a feed may be (a quote that opens a field and is not closed makes the rest of the file one row)`);
      }
      const lines = (e as CsvError & { lines?: number }).lines;
      const where = lines ? ` near line ${lines - overCounted}` : '';
      throw new FeedParseError(`the CSV cannot be read${where}: ${e.message}`);
    }
    take();
  };
  for await (const piece of text) {
    if (piece.length > 0) endsLine = /[\r\n]$/.test(piece);
    await run((done) => parser.write(piece, done));
    yield* events.splice(0);
  }
  await run((done) => {
    parser.once('error', done);
    parser.end(() => done());
  });
  // A last row short of fields with no line ending after it: the file was cut off in that row
  // (a transfer broken off, a disk full). Refused whole, as a truncated XML or JSON file is: a
  // full snapshot would otherwise withdraw every listing after the cut (an outside probe: a file
  // cut 20 bytes into its 7th row of 10 withdrew 3, exit code 0).
  const cut = last as { line: number; fields: number; needed: number } | null;
  if (!endsLine && cut && cut.fields < cut.needed) {
    throw new FeedParseError(`the CSV ends in the middle of a row: line ${cut.line} has ${cut.fields} fields of ${cut.needed}, and no line ending follows (a file cut off?)`);
  }
  // A quote that opens a field and is closed only by a quoted field of the next row further left
  // than it (the link or the agent left open, closed by the next row's quoted title, date or
  // reference): the start of the next row is in the field, and the rest of that row's fields are
  // this row's, so it has more filled fields than the header and any other row of the file. The
  // next row was lost without a word (exit 0), and a full snapshot withdrew it (stop 45). A row
  // with a field over several lines and no more filled fields than those is read: titles,
  // descriptions, agents' names over two lines, extra columns and trailing separators alike (two
  // first forms of this check, on the raw field count and on the words of the field's later
  // lines, refused such files: regression probes of stop 45).
  const columnsRead = columns as Columns | null;
  const spilled = multiLine as { line: number; fields: number; column: number } | null;
  if (columnsRead && spilled) {
    // One more than the header or any other row is let through: a note in an unnamed column of
    // one row. (One more from a spilled row is the next row's start in the same column or next
    // to it, which holdsRowStart tells.)
    const most = Math.max(plainMost, columnsRead.length);
    if (spilled.fields > most + 1) {
      throw new FeedParseError(
        `the CSV cannot be read near line ${spilled.line}: column ${spilled.column} holds a line break and its row has ${spilled.fields} filled fields, more than the header or any other row (${most}): a quote that opens it is closed only by a quote of a later row`,
      );
    }
  }
  release(null);
  const alone = firstShort as HeldRow | null;
  if (alone && columnsRead) events.push(tooShort(alone.fields, alone.line, columnsRead, CUT_OFF_ALONE));
  yield* events.splice(0);
  if (!columns) throw new FeedParseError('the CSV has no header row');
}

// A field that holds whole rows: a line after its first with as many separators as a row has,
// most of its typed columns of their form or not stated (a row may state few values, some not
// of their form: `Prix sur demande`). A description may hold as many semicolons in a line, but
// words where those columns stand ("Équipements : cuisine équipée; lave-vaisselle; four; …": an
// outside probe of stop 48 had such a file refused; its regression probe, sparse rows lost when
// more was asked of the line).
function holdsRows(field: string, columns: Columns): boolean {
  return field.split(/\r\n|\r|\n/).slice(1).some((line) => {
    const pieces = line.split(';');
    if (pieces.length - 1 < CSV_HEADER.length - 1) return false;
    const typed = fitOfTyped(TYPED_COLUMNS.filter(([k]) => columns.at[k] < pieces.length).map(([k, check]) => [pieces[columns.at[k]], check]));
    return typed.count - typed.fits <= typed.count / 2;
  });
}

// A field (at index `i`) whose first line is the rest of its own row: as many separators as the
// row has columns after it, and where the documented columns after it stand, values of their
// form or not stated (a price, an area, a yes or no, a date...; `-`), two of them at least, one
// stated. A description or a list of photos with semicolons in its first line (an outside probe:
// "cuisine équipée ; lave-vaisselle ; four ...", in a column before the price) is not.
function holdsRestOfRow(field: string, i: number, columns: Columns): boolean {
  const end = field.search(/[\r\n]/);
  if (end === -1) return false;
  const pieces = field.slice(0, end).split(';');
  if (pieces.length - 1 < columns.length - 1 - i) return false;
  const typed = fitOfTyped(TYPED_COLUMNS.filter(([k]) => columns.at[k] > i).map(([k, check]) => [pieces[columns.at[k] - i] ?? '', check]));
  return typed.count >= 2 && typed.fits === typed.count && typed.stated >= 1;
}

// A field with a later line that is the start of a row (looksLikeRow). Not the words of a title,
// a description or an agent's name over several lines (a first form of this check, on an offer
// type's words, refused "Hall;chambres;salle de bain": the regression probe of stop 45).
function holdsRowStart(field: string, columns: Columns): boolean {
  return /[\r\n]/.test(field) && field.split(/\r\n|\r|\n/).slice(1).some((text) => looksLikeRow(text.split(';'), columns));
}

// Whether the pieces of a line (split at the separator) are a row or a row's start: where the
// documented typed columns stand (those it holds whole: not its last piece, which a quote may
// cut), six typed columns at least (a row's start reaching its coordinates: a table of lots or
// of charges in a description, `A.01;RDC;Appartement;Sud;685.000 €;74,5;3;2`, does not), each of
// its form or not stated (`-`, `n/a`), but one (`Prix sur demande`, `85-90 m²`), three stated.
function looksLikeRow(pieces: string[], columns: Columns): boolean {
  const typed = fitOfTyped(TYPED_COLUMNS.filter(([k]) => columns.at[k] < pieces.length - 1).map(([k, check]) => [pieces[columns.at[k]], check]));
  return typed.count >= 6 && typed.fits >= typed.count - 1 && typed.stated >= 3;
}

// The CSV of a whole file in memory (tests, tools).
export const parseCsvFeed = (input: Buffer | string): Promise<ParsedFeed> => collectFeed(readCsvFeed, input);

// A row refused for having fewer fields than the columns it needs, and why that may be.
function tooShort(fields: string[], line: number, { at, needed }: Pick<Columns, 'at' | 'needed'>, why: string): FeedEvent {
  const reason = `the row has ${fields.length} fields, ${needed} expected${why}`;
  return { kind: 'reject', reject: { external_id: cleanExternalId(fields[at[0]] ?? fields[0]), position: `line ${line}`, reason } };
}
const CUT_OFF = " (a missing ';' or a cut-off line?)";
const CUT_OFF_ALONE = " (a missing ';' or a cut-off line? rows that leave out their empty trailing fields are read when the file has two or more)";
const BROKEN_LINE = ', and the next line holds the rest of a row (a line break inside a field that is not quoted?)';

function toEvent(fields: string[], line: number, { at, needed }: Columns): FeedEvent {
  const position = `line ${line}`;
  const row = fields.length < needed && leftOutAtEnd(fields, at) ? [...fields, ...Array<string>(needed - fields.length).fill('')] : fields;
  if (row.length < needed) return tooShort(row, line, { at, needed }, CUT_OFF);
  // The fields in the documented order (CSV_HEADER), wherever the file has them.
  const f = at.map((k) => row[k]);
  const offerText = f[1];
  // `Loué`, `Vente - VENDU`, `Verkauft`, or a title `LOUÉ - Appartement`: the deal is done, the
  // listing withdrawn (an outside probe of stop 48: rejected, or imported as on offer).
  const kind = offerType(offerText);
  if (saysDone(...offerForDone(offerText, kind)) || titleSaysDone(f[3], kind)) {
    return { kind: 'record', record: { position, externalId: cleanExternalId(f[0]), action: 'withdraw', listingType: null } };
  }
  // A garage, an office or a plot offered for rent or sale is no listing of this feed.
  const typeReason = notAHome(f[2]) ? `property type ${show(f[2].trim())} is not a home` : f[2].trim() === '' ? titleNotAHome(f[3]) : null;
  const offer = typeReason ? null : kind;
  return {
    kind: 'record',
    record: {
      position,
      externalId: cleanExternalId(f[0]),
      action: 'upsert',
      listingType: offer ?? null,
      typeText: offerText.trim() || null,
      typeReason,
      title: f[3],
      price: f[4],
      area: f[5],
      rooms: f[6],
      bedrooms: f[7],
      town: f[8],
      postcode: f[9],
      lat: f[10],
      lng: f[11],
      images: photoUrls(f[12]),
      students: f[13],
      date: f[14],
      dateKind: 'created',
      sourceUrl: f[15].trim() || null,
    },
  };
}

// `sep=;` read with ';' as the separator ("sep=", ""), or quoted as one field.
function isSeparatorLine(fields: string[]): boolean {
  return /^sep=;?$/i.test(fields.join(';').trim());
}

// The Photos field: URLs separated by '|'. Some agency software separates them by ',', ';'
// or spaces instead: a part is split there only where the next URL begins and when every
// piece is then a URL, so a URL with a comma in it stays whole.
function photoUrls(field: string): string[] {
  return field.split('|').flatMap((part) => {
    const urls = part.split(/[\s,;]+(?=https?:\/\/)/i).map((s) => s.replace(/[\s,;]+$/, ''));
    return urls.length > 1 && urls.every(isHttpUrl) ? urls : [part];
  }).map((s) => s.trim()).filter(Boolean);
}
