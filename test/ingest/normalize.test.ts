import { describe, expect, it } from 'vitest';
import { parseCsvFeed, parseJsonFeed, parseOpenImmo } from '../../src/ingest/adapters/index.js';
import { normalizeRecord, type NormalizeResult } from '../../src/ingest/normalize.js';
import type { ParsedFeed } from '../../src/ingest/types.js';
import { parseArea, parsePrice } from '../../src/ingest/values.js';
import { TEST_LISTING_IDS } from '../helpers/factory.js';
import { CSV_HEADER_LINE, csvFeed, csvRow, gazetteer } from './helpers.js';

const NOW = new Date('2026-11-22T08:00:00.000Z');
const norm = (feed: ParsedFeed): NormalizeResult[] =>
  feed.records.map((r) => normalizeRecord(r, { source: 'test-src', gazetteer: gazetteer(), now: NOW, listingId: TEST_LISTING_IDS }));
const ok = (r: NormalizeResult) => {
  if (!r.ok) throw new Error(`rejected: ${r.reason}`);
  return r.listing;
};
const csvOne = async (f: Parameters<typeof csvRow>[0]) => norm(await parseCsvFeed(csvFeed([csvRow({ ref: 'R1', ...f })])))[0];
const csvListing = async (f: Parameters<typeof csvRow>[0]) => ok(await csvOne(f));
const reason = (r: NormalizeResult) => (r.ok ? 'accepted' : r.reason);

async function jsonOne(listing: Record<string, unknown>, mode = 'full') {
  const base = {
    ref: 'J1', offer: 'rent', status: 'available', title: 'Flat', price: { amount: 1500, currency: 'EUR', period: 'month' },
    surface_m2: 50, bedrooms: 1, address: { locality: 'Strassen', country: 'LU' }, geo: null, media: [], students: false,
    published_at: '2026-11-20T08:00:00Z', link: 'https://example.lu/1',
  };
  return norm(await parseJsonFeed(JSON.stringify({ mode, listings: [{ ...base, ...listing }] })))[0];
}

function immobilie(inner: string, opts: { kauf?: boolean; art?: string; fields?: string } = {}) {
  return `<?xml version="1.0" encoding="UTF-8"?><openimmo><uebertragung umfang="VOLL"/><anbieter><immobilie>
    <objektkategorie><vermarktungsart KAUF="${opts.kauf ? 'true' : 'false'}" MIETE_PACHT="${opts.kauf ? 'false' : 'true'}"/>
      <objektart>${opts.art ?? '<wohnung/>'}</objektart></objektkategorie>
    <geo><ort>Strassen</ort></geo>
    <preise><kaltmiete>1500</kaltmiete><kaufpreis>500000</kaufpreis></preise>
    <freitexte><objekttitel>Wohnung</objekttitel></freitexte>
    ${opts.fields ? `<verwaltung_objekt>${opts.fields}</verwaltung_objekt>` : ''}
    ${inner}
    <verwaltung_techn><objektnr_extern>O1</objektnr_extern></verwaltung_techn>
  </immobilie></anbieter></openimmo>`;
}
const xmlOne = async (inner: string, opts?: Parameters<typeof immobilie>[1]) => norm(await parseOpenImmo(immobilie(inner, opts)))[0];

describe('prices', () => {
  it.each([
    ['1850', 1850], ['1 850', 1850], ['1.850', 1850], ['1850,00', 1850], ['1.250.000 €', 1250000], ['€ 2 100', 2100],
    ['1.690,00', 1690], ['1\u00a0250 €', 1250], ['2150.00', 2150], ['1,250,000.50', 1250001], ['1 250,- €', 1250], ['1250 EUR', 1250],
  ])('reads %j as %i EUR', async (text, eur) => {
    expect((await csvListing({ price: text })).price_eur).toBe(eur);
  });

  it('converts a weekly rent to a month (x 52 / 12, rounded)', async () => {
    expect(ok(await jsonOne({ price: { amount: 600, currency: 'EUR', period: 'week' } })).price_eur).toBe(2600);
    expect(ok(await jsonOne({ price: { amount: 333, currency: 'EUR', period: 'week' } })).price_eur).toBe(1443);
  });

  it('rejects other currencies, in the text or in a currency field', async () => {
    expect(reason(await csvOne({ price: '4 900 CHF' }))).toBe('price in CHF: only EUR is accepted');
    expect(reason(await csvOne({ price: '$2,000' }))).toMatch(/only EUR/);
    expect(reason(await jsonOne({ price: { amount: 1500, currency: 'GBP', period: 'month' } }))).toBe('price in GBP: only EUR is accepted');
    const chf = immobilie('').replace('<kaltmiete>1500</kaltmiete>', '<kaltmiete>1500</kaltmiete><waehrung iso_waehrung="CHF"/>');
    expect(reason(norm(await parseOpenImmo(chf))[0])).toMatch(/only EUR/);
  });

  it('reads numbers and amounts without currency as EUR', async () => {
    expect(parsePrice(1850)).toEqual({ ok: true, value: { amount: 1850, currency: null, period: null, chargesIncluded: null, charges: null } });
  });

  it.each([
    ['1850 €/mois', 1850, 'EUR', 'month'], ['1.850 € / Monat', 1850, 'EUR', 'month'], ['1850 EUR per month', 1850, 'EUR', 'month'],
    ['€ 1 850 p.m.', 1850, 'EUR', 'month'], ['1850 mtl.', 1850, null, 'month'], ['450 €/semaine', 450, 'EUR', 'week'],
    ['450 EUR a week', 450, 'EUR', 'week'], ['450,- €/Woche', 450, 'EUR', 'week'],
  ])('reads the period written after a price: %j', (text, amount, currency, period) => {
    expect(parsePrice(text)).toEqual({ ok: true, value: { amount, currency, period, chargesIncluded: null, charges: null } });
  });

  it('a weekly price written as such is made monthly; a period that contradicts the feed\'s is rejected', async () => {
    expect((await csvListing({ price: '450 €/semaine' })).price_eur).toBe(1950);
    expect((await csvListing({ price: '1 850 € / mois' })).price_eur).toBe(1850);
    expect(ok(await jsonOne({ price: { amount: '450 per week', currency: 'EUR', period: 'week' } })).price_eur).toBe(1950);
    expect(reason(await jsonOne({ price: { amount: '450 per week', currency: 'EUR', period: 'month' } }))).toMatch(/contradicts period "month"/);
    expect(reason(await csvOne({ price: '1850 ou 1900' }))).toMatch(/holds two figures: which one is the price\?/);
  });
});

describe('areas, rooms and bedrooms', () => {
  it('reads a count written with its word (3 pièces, 3 Zimmer, T3, 2 ch.) and a figure written as approximate', async () => {
    for (const rooms of ['3 pièces', '3 Zimmer', '3 pcs', 'T3', 'F3']) expect((await csvListing({ rooms })).rooms, rooms).toBe(3);
    expect((await csvListing({ bedrooms: '2 ch.' })).rooms).toBe(3);
    expect((await csvListing({ area: 'env. 85 m²' })).area_m2).toBe(85);
    expect((await csvListing({ price: 'ca. 1 850 €' })).price_eur).toBe(1850);
    expect(reason(await csvOne({ rooms: '3+1' }))).toMatch(/rooms "3\+1" is not one count/);
  });

  it('reads "not stated" (-, n/a, nc) as an empty field: unknown, or no price', async () => {
    const l = await csvListing({ area: '-', rooms: 'n/a', bedrooms: 'nc', students: '-' });
    expect([l.area_m2, l.rooms, l.accepts_students]).toEqual([null, null, false]);
    expect(reason(await csvOne({ price: 'n/a' }))).toBe('no price');
  });

  it.each([['85', 85], ['85,5', 85.5], ['85.5', 85.5], ['85,5 m²', 85.5], ['85 m2', 85], ['', null]])('area %j is %j', async (text, m2) => {
    expect((await csvListing({ area: text })).area_m2).toBe(m2);
  });

  it('parses an area number as is', () => expect(parseArea(74.0)).toEqual({ ok: true, value: 74 }));
  it('reads an area that rounds to 0 m2 (stored to the hundredth) as not given, like 0', () => {
    expect(['0', '0,001', 0.004, '0.00'].map((a) => parseArea(a))).toEqual(Array(4).fill({ ok: true, value: null }));
    // Above it but under 5 m2: not even a room, refused (the record is rejected with the reason).
    expect(parseArea('0,4')).toEqual({ ok: false, reason: 'area "0,4" is not plausible for a dwelling (read as 0.4 m2)' });
    // A JSON number too large for the hundredths: said as read, not as "Infinity" (an outside probe).
    expect(parseArea(1e308)).toMatchObject({ ok: false, reason: expect.stringMatching(/is not plausible for a dwelling \(read as 1e\+308 m2\)$/) });
  });

  it('takes rooms when given, else bedrooms + 1 (a studio with 0 bedrooms has 1 room)', async () => {
    expect((await csvListing({ rooms: '4', bedrooms: '2' })).rooms).toBe(4);
    expect((await csvListing({ bedrooms: '2' })).rooms).toBe(3);
    expect((await csvListing({ bedrooms: '0' })).rooms).toBe(1);
    expect((await csvListing({})).rooms).toBeNull();
    expect(ok(await jsonOne({ bedrooms: 2 })).rooms).toBe(3);
  });

  it('rounds fractional openimmo rooms down', async () => {
    expect(ok(await xmlOne('<flaechen><anzahl_zimmer>2.5</anzahl_zimmer><wohnflaeche>60.25</wohnflaeche></flaechen>')).rooms).toBe(2);
    expect(ok(await xmlOne('<flaechen><anzahl_zimmer>2.5</anzahl_zimmer><wohnflaeche>60.25</wohnflaeche></flaechen>')).area_m2).toBe(60.25);
  });
});

describe('listing types', () => {
  it.each([
    ['Location', 'RENT'], ['LOCATION', 'RENT'], ['location', 'RENT'], ['Vente', 'SALE'], ['VENTE', 'SALE'],
    ['Colocation', 'FLATSHARE'], ['Sous-location', 'SUBLET'], ['SOUS-LOCATION', 'SUBLET'], ['sous location', 'SUBLET'],
  ])('csv %j is %s', async (offer, type) => {
    expect((await csvListing({ offer })).listing_type).toBe(type);
  });

  it.each([['rent', 'RENT'], ['sale', 'SALE'], ['flatshare', 'FLATSHARE'], ['sublet', 'SUBLET']])('json %j is %s', async (offer, type) => {
    expect(ok(await jsonOne({ offer })).listing_type).toBe(type);
  });

  it.each([
    ['RENT', 'RENT'], ['Rental', 'RENT'], ['location', 'RENT'], ['Miete', 'RENT'], ['Vente', 'SALE'], ['Kauf', 'SALE'],
    ['Flat-share', 'FLATSHARE'], ['Colocation', 'FLATSHARE'], ['WG', 'FLATSHARE'], ['Sous-location', 'SUBLET'], ['Sublease', 'SUBLET'], ['Untermiete', 'SUBLET'],
  ])('the other words for a kind of offer: json %j is %s', async (offer, type) => {
    expect(ok(await jsonOne({ offer })).listing_type).toBe(type);
    expect((await csvListing({ offer })).listing_type).toBe(type);
  });

  it('an offer no language names is rejected, with its text', async () => {
    expect(reason(await jsonOne({ offer: 'exchange' }))).toBe('unknown kind of offer "exchange"');
  });

  it('openimmo: MIETE_PACHT is RENT, KAUF is SALE, zimmer is FLATSHARE, untervermietung=1 is SUBLET', async () => {
    expect(ok(await xmlOne('')).listing_type).toBe('RENT');
    const sale = ok(await xmlOne('', { kauf: true }));
    expect([sale.listing_type, sale.price_eur]).toEqual(['SALE', 500000]);
    expect(ok(await xmlOne('', { art: '<zimmer zimmertyp="ZIMMER"/>' })).listing_type).toBe('FLATSHARE');
    const sublet = '<user_defined_simplefield feldname="untervermietung">1</user_defined_simplefield>';
    expect(ok(await xmlOne('', { fields: sublet })).listing_type).toBe('SUBLET');
  });

  it('openimmo: warmmiete when there is no kaltmiete', async () => {
    const feed = (await parseOpenImmo(immobilie('').replace('<kaltmiete>1500</kaltmiete>', '<warmmiete>1700</warmmiete>')));
    expect(ok(norm(feed)[0]).price_eur).toBe(1700);
  });

  it('openimmo: nettokaltmiete before warmmiete when there is no kaltmiete', async () => {
    const xml = immobilie('').replace('<kaltmiete>1500</kaltmiete>', '<warmmiete>1700</warmmiete><nettokaltmiete>1550</nettokaltmiete>');
    expect(ok(norm(await parseOpenImmo(xml))[0]).price_eur).toBe(1550);
  });

  it('openimmo: the namespace written with a prefix (<oi:openimmo>) reads as without', async () => {
    const prefixed = immobilie('')
      .replace(/<(\/?)([a-z_]+)/g, '<$1oi:$2')
      .replace('<oi:openimmo>', '<oi:openimmo xmlns:oi="http://www.openimmo.de">');
    const [l] = norm(await parseOpenImmo(prefixed)).map(ok);
    expect([l.external_id, l.listing_type, l.price_eur, l.commune]).toEqual(['O1', 'RENT', 1500, 'Strassen']);
  });
});

describe('communes and localities', () => {
  it.each([
    ['Luxembourg', 'Luxembourg', null], ['Lëtzebuerg', 'Luxembourg', null], ['Luxemburg', 'Luxembourg', null], ['LUXEMBOURG', 'Luxembourg', null],
    ['Luxembourg-Gare', 'Luxembourg', 'Gare'], ['Kirchberg', 'Luxembourg', 'Kirchberg'], ['ESCH/ALZETTE', 'Esch-sur-Alzette', null],
    ['Esch-Uelzecht', 'Esch-sur-Alzette', null], ['esch sur alzette', 'Esch-sur-Alzette', null], ['PETANGE', 'Pétange', null],
    ['Petange', 'Pétange', null], ['Péiteng', 'Pétange', null], ['Belvaux', 'Sanem', 'Belvaux'], ['Beles', 'Sanem', 'Belvaux'],
    ['Belval', 'Esch-sur-Alzette', 'Belval'], ['Kirchberg (Luxembourg)', 'Luxembourg', 'Kirchberg'],
    // A postcode typed into the place, a "centre", the country's name after the place. A town's
    // centre is its own village (since stop 50: "Hesperange Centre" is not Howald), unless the town
    // has quarters (Esch-sur-Alzette's centre is among them).
    ['L-4410 Belvaux', 'Sanem', 'Belvaux'], ['Belvaux (4410)', 'Sanem', 'Belvaux'], ['Dudelange Centre', 'Dudelange', 'Dudelange'],
    ['Wiltz-Centre', 'Wiltz', 'Wiltz'], ['Hesperange Centre', 'Hesperange', 'Hesperange'], ['Hesperange', 'Hesperange', null], ['Ettelbruck Gare', 'Ettelbruck', null],
    ['Belval-Université', 'Esch-sur-Alzette', 'Belval'], ['Luxembourg Zentrum', 'Luxembourg', 'Ville Haute'], ['Luxembourg Bahnhof', 'Luxembourg', 'Gare'], ['Ettelbruck Bahnhof', 'Ettelbruck', null], ['Dudelange Stadtzentrum', 'Dudelange', 'Dudelange'], ['Esch/Alzette - Centre', 'Esch-sur-Alzette', null], ['Bertrange, Luxembourg', 'Bertrange', null],
    // The capital's postal form (an outside probe: refused as "l"): the L goes with the number.
    ['L-1855 Luxembourg', 'Luxembourg', null], ['L-1855 Lëtzebuerg', 'Luxembourg', null], ['L-1855, Luxembourg', 'Luxembourg', null],
    ['Strassen / Lux', 'Strassen', null], ['Mamer, Grand-Duché de Luxembourg', 'Mamer', null], ['Lux-Kirchberg', 'Luxembourg', 'Kirchberg'],
    // A district the reference data lacks, and two names of one quarter.
    ["Cloche d'Or", 'Luxembourg', 'Gasperich'], ["Gasperich/Cloche d'Or", 'Luxembourg', 'Gasperich'],
    // "sur" shortened (an outside probe: refused as unknown), a Luxembourgish village name.
    ['ESCH S/ALZETTE', 'Esch-sur-Alzette', null], ['Esch s/Alzette', 'Esch-sur-Alzette', null], ['Esch-s-Alzette', 'Esch-sur-Alzette', null],
    ['Uewerpallen', 'Beckerich', 'Oberpallen'],
    // The City's quarters and Belvaux in Luxembourgish, "Luxbg" (an outside probe: unknown places).
    ['Kierchbierg', 'Luxembourg', 'Kirchberg'], ['Lampertsbierg', 'Luxembourg', 'Limpertsberg'], ['Bieles', 'Sanem', 'Belvaux'],
    ['Luxbg-Kirchberg', 'Luxembourg', 'Kirchberg'], ['Gaasperech', 'Luxembourg', 'Gasperich'], ['Hollerech', 'Luxembourg', 'Hollerich'],
  ])('%j resolves to %s (%s)', async (place, commune, locality) => {
    const l = (await csvListing({ place }));
    expect([l.commune, l.locality]).toEqual([commune, locality]);
  });

  it('openimmo: town plus quarter keeps the quarter as locality', async () => {
    const l = ok(norm(await parseOpenImmo(immobilie('').replace('<ort>Strassen</ort>', '<ort>Luxembourg</ort><regionaler_zusatz>Belair</regionaler_zusatz>')))[0]);
    expect([l.commune, l.locality]).toEqual(['Luxembourg', 'Belair']);
  });

  it('a locality several communes share is settled by the postcode, else the coordinates, else rejected', async () => {
    expect((await csvListing({ place: 'Eschweiler', postcode: 'L-9654' })).commune).toBe('Wiltz');
    expect((await csvListing({ place: 'Eschweiler', postcode: '6155' })).commune).toBe('Junglinster');
    const gz = gazetteer();
    const wiltzEschweiler = gz.localitiesOf('Wiltz').find((l) => l.locality === 'Eschweiler')!;
    expect((await csvListing({ place: 'Eschweiler', lat: String(wiltzEschweiler.lat), lng: String(wiltzEschweiler.lng) })).commune).toBe('Wiltz');
    expect(reason(await csvOne({ place: 'Eschweiler' }))).toMatch(/several communes \(Junglinster, Wiltz\); give a postcode or coordinates$/);
    // A postcode of a region both communes lie in does not settle it: the reason says so (an
    // outside probe's records with a postcode were asked for one).
    const both = gz.resolve('Kalkesbach');
    expect(both).toMatchObject({ kind: 'locality' });
    expect(reason(await csvOne({ place: 'Kalkesbach', postcode: 'L-6158' }))).toMatch(/several communes \(.+\), and the postcode 6158 does not tell them apart; give the commune or coordinates$/);
    // A postcode typed into the place narrows as the postcode column does.
    expect((await csvListing({ place: 'L-9654 Eschweiler' })).commune).toBe('Wiltz');
    expect((await csvListing({ place: 'Eschweiler (6155)' })).commune).toBe('Junglinster');
  });

  it('a "centre" or "ville" alone names no place', async () => {
    expect(reason(await csvOne({ place: 'Centre-Ville' }))).toMatch(/unknown commune or locality/);
    expect(reason(await csvOne({ place: 'Ville' }))).toMatch(/unknown commune or locality/);
  });

  it('a name two quarters of one commune bear (Bonnevoie) is the quarter nearest the coordinates, else the commune alone', async () => {
    const gz = gazetteer();
    const quarter = (name: string) => gz.localitiesOf('Luxembourg').find((l) => l.locality === name)!;
    const sud = quarter('Bonnevoie-Sud');
    const nord = quarter('Bonnevoie-Nord / Verlorenkost');
    // 150 m from each quarter's point, towards the other.
    const near = (a: typeof sud, b: typeof sud) => ({ lat: String(a.lat! + (b.lat! - a.lat!) * 0.15), lng: String(a.lng! + (b.lng! - a.lng!) * 0.15) });
    for (const place of ['Bonnevoie', 'Luxembourg-Bonnevoie', 'Bonneweg']) {
      const s = await csvListing({ place, ...near(sud, nord) });
      expect([s.commune, s.locality]).toEqual(['Luxembourg', 'Bonnevoie-Sud']);
      const n = await csvListing({ place, ...near(nord, sud) });
      expect([n.commune, n.locality]).toEqual(['Luxembourg', 'Bonnevoie-Nord / Verlorenkost']);
      // Without coordinates either quarter would be a guess that another record could contradict.
      const none = await csvListing({ place });
      expect([none.commune, none.locality]).toEqual(['Luxembourg', null]);
    }
    // The quarter beside its town (openimmo's ort and regionaler_zusatz) is chosen the same way.
    const xml = immobilie('').replace('<ort>Strassen</ort>', '<ort>Luxembourg</ort><regionaler_zusatz>Bonnevoie</regionaler_zusatz>');
    expect(ok(norm(await parseOpenImmo(xml))[0]).locality).toBeNull();
    // Named in full, a quarter is itself.
    expect((await csvListing({ place: 'Bonnevoie-Sud' })).locality).toBe('Bonnevoie-Sud');
  });

  it('a name that localities of two communes bear (Bruch: a quarter of Esch-sur-Alzette; Brouch in Helperknapp) is settled by the postcode or the coordinates', async () => {
    const brouch = gazetteer().localitiesOf('Helperknapp').find((l) => l.locality === 'Brouch')!;
    const byCoords = await csvListing({ place: 'Bruch', lat: String(brouch.lat), lng: String(brouch.lng) });
    expect([byCoords.commune, byCoords.locality]).toEqual(['Helperknapp', 'Brouch']);
    const byPostcode = await csvListing({ place: 'Bruch', postcode: 'L-7415' });
    expect([byPostcode.commune, byPostcode.locality]).toEqual(['Helperknapp', 'Brouch']);
    const byTown = await csvListing({ place: 'Bruch (Helperknapp)' });
    expect([byTown.commune, byTown.locality]).toEqual(['Helperknapp', 'Brouch']);
    // Nothing to tell them apart: the first in the reference data, as the name stands for.
    const bare = await csvListing({ place: 'Bruch' });
    expect([bare.commune, bare.locality]).toEqual(['Esch-sur-Alzette', 'Bruch']);
  });

  it('a City postcode (1xxx, 2xxx) places an unknown quarter name in Luxembourg', async () => {
    expect((await csvListing({ place: 'Centre-Ville Haut', postcode: 'L-1611' })).commune).toBe('Luxembourg');
  });

  it('falls back to the coordinates when the text does not resolve', async () => {
    const l = (await csvListing({ place: 'Résidence Les Jardins', lat: '49.5125', lng: '5.9298' }));
    expect(l.commune).toBe('Sanem');
  });

  it('rejects an unknown place, with suggestions', async () => {
    expect(reason(await csvOne({ place: 'Luxembourgg' }))).toMatch(/unknown commune or locality "Luxembourgg" \(did you mean Luxembourg/);
    expect(reason(await csvOne({ place: 'Atlantis' }))).toMatch(/unknown commune or locality "Atlantis"/);
    expect(reason(await csvOne({ place: ' ' }))).toBe('no commune, locality, postcode or coordinates given');
  });

  // (Until stop 55 the reason said no coordinates were given: an outside probe's record in Paris.)
  it('names the coordinates a record gave outside Luxembourg when nothing else places it', async () => {
    expect(reason(await csvOne({ place: '', lat: '48.8566', lng: '2.3522' }))).toBe(
      'no commune, locality or postcode given, and the coordinates (48.8566, 2.3522) are outside Luxembourg',
    );
    expect(reason(await csvOne({ place: '', lat: '0', lng: '0' }))).toBe('no commune, locality, postcode or coordinates given');
  });
});

describe('postcodes (kept for deduplication only)', () => {
  it('keeps the postcode a record states, in its field or typed into its place, in any of its written forms', async () => {
    expect((await csvListing({ place: 'Belvaux', postcode: 'L-4410' })).postcode).toBe(4410);
    expect((await csvListing({ place: 'Belvaux', postcode: '4410' })).postcode).toBe(4410);
    expect((await csvListing({ place: 'L-4410 Belvaux' })).postcode).toBe(4410);
    expect(ok(await jsonOne({ address: { locality: 'Kirchberg', postcode: 'L1855', country: 'LU' } })).postcode).toBe(1855);
    const xml = immobilie('').replace('<geo><ort>Strassen</ort></geo>', '<geo><plz>L-8010</plz><ort>Strassen</ort></geo>');
    expect(ok(norm(await parseOpenImmo(xml))[0]).postcode).toBe(8010);
    expect((await csvListing({ place: 'Belvaux' })).postcode).toBeNull();
  });

  it('drops a postcode of another part of the country than the commune (a slip says nothing of the street), and one that is no postcode', async () => {
    // 9xxx is the north; Belvaux is in the south-west.
    expect((await csvListing({ place: 'Belvaux', postcode: 'L-9010' })).postcode).toBeNull();
    expect((await csvListing({ place: 'Belvaux', postcode: 'n/a' })).postcode).toBeNull();
  });

  // An outside probe: records of villages across the border with their own postcode (B-6700,
  // F-57570, 54308) were placed in the Luxembourg commune across it, the postcode dropped.
  it("rejects a record with another country's postcode, in its field or in the place", async () => {
    for (const [place, postcode] of [['Belvaux', '57100'], ['Sterpenich', 'B-6700'], ['Mondorf', 'F-57570'], ['F-57570 Mondorff', null], ['54308 Langsur', null], ['Perl', 'D-66706'], ['Steinfort', 'BE-6700']] as const) {
      expect(reason(await csvOne({ place, ...(postcode ? { postcode } : {}) })), `${place} ${postcode}`).toMatch(/is another country's|names a place abroad/);
    }
    expect((await csvListing({ place: 'L-4410 Belvaux' })).commune).toBe('Sanem');
  });

  it('is not public content: the same record with or without a postcode has the same content hash', async () => {
    const a = await csvListing({ place: 'Belvaux', postcode: 'L-4410' });
    const b = await csvListing({ place: 'Belvaux' });
    expect(a.content_hash).toBe(b.content_hash);
  });
});

describe('coordinates', () => {
  it('accepts a decimal comma', async () => {
    const l = (await csvListing({ lat: '49,6005', lng: '6,1335' }));
    expect([l.lat, l.lng]).toEqual([49.6005, 6.1335]);
  });
  it('recognises and fixes swapped lat/lng', async () => {
    const l = (await csvListing({ lat: '6.1335', lng: '49.6005' }));
    expect([l.lat, l.lng]).toEqual([49.6005, 6.1335]);
  });
  it('drops coordinates outside Luxembourg and keeps the record', async () => {
    const l = (await csvListing({ lat: '48.8566', lng: '2.3522' }));
    expect([l.lat, l.lng, l.commune]).toEqual([null, null, 'Strassen']);
    expect([ok(await jsonOne({ geo: { lat: 0, lon: 0 } })).lat]).toEqual([null]);
    // latitude and longitude spelt out are read as lat and lon.
    const spelt = ok(await jsonOne({ geo: { latitude: 49.61, longitude: 6.13 } }));
    expect([spelt.lat, spelt.lng]).toEqual([49.61, 6.13]);
  });
  it('drops a half pair', async () => {
    expect((await csvListing({ lat: '49.6' })).lat).toBeNull();
  });
});

describe('dates (Europe/Luxembourg local time to UTC)', () => {
  it('csv: the columns are found by name, in any order and with others among them', async () => {
    const header = CSV_HEADER_LINE.replace(/^\uFEFF/, '').split(';');
    const row = csvRow({ ref: 'R9', offer: 'Vente', price: '650.000', area: '120,5', rooms: '5', place: 'Belvaux', postcode: 'L-4410', lat: '49,5125', lng: '5,9298', students: 'non', link: 'https://x.example/9' }).split(';');
    // Reversed, with an agent's name inserted after the third column.
    const order = [...header.keys()].reverse();
    const pick = (cells: string[], extra: string) => [...order.slice(0, 3).map((k) => cells[k]), extra, ...order.slice(3).map((k) => cells[k])].join(';');
    const [l] = norm(await parseCsvFeed(`${pick(header, 'Agent')}\n${pick(row, 'Anne')}\n`)).map(ok);
    expect([l.external_id, l.listing_type, l.price_eur, l.area_m2, l.rooms, l.commune, l.locality, l.lat, l.source_url])
      .toEqual(['R9', 'SALE', 650000, 120.5, 5, 'Sanem', 'Belvaux', 49.5125, 'https://x.example/9']);
    // A documented column missing still refuses the file.
    await expect(parseCsvFeed(`${header.filter((h) => h !== 'Prix').join(';')}\n`)).rejects.toThrow(/wrong CSV header: the column "Prix" is missing/);
    // In another order, the missing one is named (an outside probe: "column 1 is "Lien"").
    const reordered = [...header.slice(1).filter((h) => h !== 'Surface'), header[0]];
    await expect(parseCsvFeed(`${reordered.join(';')}\n`)).rejects.toThrow(/wrong CSV header: the column "Surface" is missing/);
  });

  // An outside probe of stop 46: a unit in the header's brackets was set aside whatever it said.
  it('csv: a price column in another currency, in thousands or per m², or an area in square feet, refuses the file; a unit read is fine', async () => {
    const header = CSV_HEADER_LINE.replace(/^\uFEFF/, '').split(';');
    const row = csvRow({ ref: 'U1', offer: 'Location', price: '4 900', area: '120', rooms: '4', place: 'Remich', link: 'https://x.example/u1' });
    const named = (rename: Record<string, string>, extra: string[] = []) => [...header.map((h) => rename[h] ?? h), ...extra].join(';');
    for (const price of ['Prix (CHF)', 'Prix (k€)', 'Prix (USD)', 'Prix (€/m²)', 'Prix (EUR par m²)', 'Prix (Mio. €)', 'Prix (Fr.)', 'Prix (€/sqm)', 'Prix (€/an)', 'Prix (M€)', 'Prix (x 1000 €)', 'Prix (€ le m²)',
      // Noted in stop 46, read as EUR until stop 47: thousands written after the sign, or as "000".
      'Prix (€k)', 'Prix (EURk)', 'Prix (000 €)', "Prix ('000 €)", 'Prix (€ 000)', 'Prix (T€)', 'Prix (Tsd. €)']) {
      await expect(parseCsvFeed(`${named({ Prix: price })}\n${row}\n`), price).rejects.toThrow(/states a unit this importer does not read: prices are read as EUR/);
    }
    for (const area of ['Surface (sq ft)', 'Surface (ft²)', 'Surface (pieds carrés)', 'Surface (acres)']) {
      await expect(parseCsvFeed(`${named({ Surface: area })}\n${row}\n`), area).rejects.toThrow(/states a unit this importer does not read: areas are read in m²/);
    }
    // EUR as written, in the words agencies use (a regression probe of stop 46: 20 of 53 such
    // headers were refused by the first form of the check).
    for (const [price, area] of [
      ['Prix (€)', 'Surface (m²)'], ['Prix (EUR/mois)', 'Surface (m² habitables)'], ['Prix (€, charges comprises)', 'Surface (qm)'],
      ['Prix (€/mois)', 'Surface (m², terrain en ares à part)'], ['Prix (net EUR)', 'Surface'], ['Prix (HT EUR)', 'Surface'], ['Prix (EUR pro Monat)', 'Surface'],
      ['Prix (€ per month)', 'Surface'], ['Prix (Miete kalt) (EUR)', 'Surface'], ['Prix (€/Monat)', 'Surface'], ['Prix (montant EUR)', 'Surface'],
    ]) {
      const [l] = norm(await parseCsvFeed(`${named({ Prix: price, Surface: area })}\n${row}\n`)).map(ok);
      expect([l.price_eur, l.area_m2], price).toEqual([4900, 120]);
    }
    // A price per m² beside the price, before it or after: the price is the price.
    const perM2 = (before: boolean) => {
      const h = before ? ['Prix (€/m²)', ...header] : [...header, 'Prix (€/m²)'];
      const r = before ? ['41', ...row.split(';')] : [...row.split(';'), '41'];
      return `${h.join(';')}\n${r.join(';')}\n`;
    };
    for (const before of [true, false]) expect(norm(await parseCsvFeed(perM2(before))).map(ok)[0].price_eur).toBe(4900);
    // Two price columns both read as EUR: the first, as ever (`Prix (€ HC)`, then `Prix (€ CC)`).
    expect(norm(await parseCsvFeed(`${named({}, ['Prix (€ CC)'])}\n${row};5000\n`)).map(ok)[0].price_eur).toBe(4900);
  });

  it('csv winter and summer time', async () => {
    expect((await csvListing({ date: '21/11/2026 14:03' })).created_at?.toISOString()).toBe('2026-11-21T13:03:00.000Z');
    expect((await csvListing({ date: '02/07/2026 09:30' })).created_at?.toISOString()).toBe('2026-07-02T07:30:00.000Z');
  });
  it('csv dates written day first with dashes, or year first with slashes', async () => {
    for (const date of ['21-11-2026 14:03', '2026/11/21 14:03', '21.11.2026 14h03']) {
      expect((await csvListing({ date })).created_at?.toISOString(), date).toBe('2026-11-21T13:03:00.000Z');
    }
    // Mixed marks are no date: treated as a date not given (see below).
    expect((await csvListing({ date: '21/11-2026' })).created_at).toBeNull();
  });
  it('json with Z, with an offset, and without either', async () => {
    expect(ok(await jsonOne({ published_at: '2026-11-20T08:00:00Z' })).created_at?.toISOString()).toBe('2026-11-20T08:00:00.000Z');
    expect(ok(await jsonOne({ published_at: '2026-11-21T06:00:00+01:00' })).created_at?.toISOString()).toBe('2026-11-21T05:00:00.000Z');
    expect(ok(await jsonOne({ published_at: '2026-08-01T10:00:00' })).created_at?.toISOString()).toBe('2026-08-01T08:00:00.000Z');
  });
  it('openimmo stand_vom is a local date', async () => {
    const l = ok((await xmlOne('')).valueOf() as never);
    expect(l.created_at).toBeNull();
    const feed = (await parseOpenImmo(immobilie('').replace('<objektnr_extern>O1</objektnr_extern>', '<objektnr_extern>O1</objektnr_extern><stand_vom>2026-11-19</stand_vom>')));
    expect(ok(norm(feed)[0]).created_at?.toISOString()).toBe('2026-11-18T23:00:00.000Z');
  });
  it('a date in the future is capped at the import clock', async () => {
    expect((await csvListing({ date: '01/01/2030 10:00' })).created_at?.toISOString()).toBe(NOW.toISOString());
  });
  it('an unreadable date is a date not given: the listing is kept (its first import is its creation)', async () => {
    for (const date of ['31/02/2026 10:00', 'yesterday', '2026/13/45']) {
      const l = await csvListing({ date });
      expect([l.created_at, l.created_at_kind], date).toEqual([null, null]);
    }
  });
});

describe('titles, images, students, locality', () => {
  it('takes en, else fr, else de, else any language, or a plain string', async () => {
    expect(ok(await jsonOne({ title: { fr: 'Appartement', en: 'Flat', de: 'Wohnung' } })).title).toBe('Flat');
    expect(ok(await jsonOne({ title: { de: 'Wohnung', fr: 'Appartement' } })).title).toBe('Appartement');
    expect(ok(await jsonOne({ title: { lb: 'Appartement am Zentrum', de: 'Wohnung' } })).title).toBe('Wohnung');
    expect(ok(await jsonOne({ title: { lb: 'Wunneng' } })).title).toBe('Wunneng');
    expect(ok(await jsonOne({ title: { en: '  ', fr: 'Appartement' } })).title).toBe('Appartement');
    expect(ok(await jsonOne({ title: '  Plain \n title ' })).title).toBe('Plain title');
  });
  it('drops HTML tags and reads HTML entities in a title, in every format', async () => {
    expect(ok(await jsonOne({ title: 'Appartement <b>r&eacute;nov&eacute;</b><br/>Kirchberg &amp; parking' })).title).toBe('Appartement rénové Kirchberg & parking');
    expect((await csvListing({ title: 'Studio&nbsp;meubl&eacute; <span class="x">Gare</span>' })).title).toBe('Studio meublé Gare');
    const xml = immobilie('').replace('<objekttitel>Wohnung</objekttitel>', '<objekttitel><![CDATA[Sch&ouml;ne <b>Wohnung</b> &lt;3 Zimmer&gt;]]></objekttitel>');
    expect(ok(norm(await parseOpenImmo(xml))[0]).title).toBe('Schöne Wohnung <3 Zimmer>');
    // Text that only looks a little like markup stays.
    expect(ok(await jsonOne({ title: 'Flat < 50 m2, 2 > 1 rooms' })).title).toBe('Flat < 50 m2, 2 > 1 rooms');
    // A title that is nothing but markup is no title.
    expect(reason(await jsonOne({ title: '<p><br/></p>' }))).toBe('no title');
    // A script's or a style's content is no words of the title; tags spelled with entities
    // are dropped once read in every format, as the XML parser's reading already did.
    expect(ok(await jsonOne({ title: '<script>alert(1)</script>Flat <style>p{}</style>Gare' })).title).toBe('Flat Gare');
    expect((await csvListing({ title: 'Flat &lt;script&gt;alert(1)&lt;/script&gt; Gare &lt;b&gt;new&lt;/b&gt;' })).title).toBe('Flat Gare new');
    expect(ok(await jsonOne({ title: '&lt;3 rooms&gt; near &lt;Gare&gt;' })).title).toBe('<3 rooms> near');
    // A slash after the tag's name separates its attributes as a space does (an outside probe
    // found these kept), and a tag left open at the end is a tag too.
    expect(ok(await jsonOne({ title: '<svg/onload=alert(2)> Flat' })).title).toBe('Flat');
    expect(ok(await jsonOne({ title: '<img/src=x/onerror=alert(3)> Flat <i>Gare</i>' })).title).toBe('Flat Gare');
    expect((await csvListing({ title: 'Flat &lt;svg/onload=alert(1)&gt; Gare' })).title).toBe('Flat Gare');
    // Text after a "<" that no ">" closes stays (a regression probe of stop 46: "A<B" was "A").
    for (const title of ['Flat 2 < 3, rooms <4, a/b', 'A<B', 'Loyer <a discuter', 'Price <EUR 2000', 'Studio <Luxembourg-Gare>']) {
      expect(ok(await jsonOne({ title })).title, title).toBe(title);
    }
    // Invisible characters that change how a title reads go; joiners of emoji stay.
    expect(ok(await jsonOne({ title: 'Flat\u202Egnp.exe \u200BGare\u2066x\u2069 \u{1F468}\u200D\u{1F469}' })).title).toBe('Flatgnp.exe Garex \u{1F468}\u200D\u{1F469}');
  });

  it('cuts an over-long title', async () => {
    const t = ok(await jsonOne({ title: 'x'.repeat(5000) })).title;
    expect(t.length).toBe(300);
  });
  it('keeps photos only: no videos, no floor plans, no junk URLs', async () => {
    const l = ok(await jsonOne({ media: [{ type: 'photo', url: 'https://a/1.jpg' }, { type: 'video', url: 'https://a/t.mp4' }, { type: 'photo', url: 'javascript:alert(1)' }, { type: 'photo', url: 'https://a/1.jpg' }] }));
    expect(l.images).toEqual(['https://a/1.jpg']);
    const xml = ok(await xmlOne('<anhaenge><anhang gruppe="BILD"><daten><pfad>https://i/1.jpg</pfad></daten></anhang><anhang gruppe="GRUNDRISS"><daten><pfad>https://i/p.jpg</pfad></daten></anhang><anhang gruppe="FILM"><daten><pfad>https://i/f.mp4</pfad></daten></anhang></anhaenge>'));
    expect(xml.images).toEqual(['https://i/1.jpg']);
    expect((await csvListing({ photos: 'https://p/1.jpg|https://p/2.jpg| |' })).images).toEqual(['https://p/1.jpg', 'https://p/2.jpg']);
  });
  it('writes a web address holding quotes, spaces or angle brackets percent-encoded; others as given', async () => {
    const l = ok(await jsonOne({
      media: [{ type: 'photo', url: 'https://ok.example/a.jpg" onerror="alert(1)' }, { type: 'photo', url: 'https://ok.example/photo 1.JPG?w=800&h=600' }, { type: 'photo', url: 'HTTPS://Ok.Example/b.jpg' }],
      link: 'https://agency.example/listing/<12>',
    }));
    expect(l.images).toEqual(['https://ok.example/a.jpg%22%20onerror=%22alert(1)', 'https://ok.example/photo%201.JPG?w=800&h=600', 'HTTPS://Ok.Example/b.jpg']);
    expect(l.source_url).toBe('https://agency.example/listing/%3C12%3E');
  });
  it('students: oui/non/empty, booleans, openimmo 1/0', async () => {
    expect((await csvListing({ students: 'oui' })).accepts_students).toBe(true);
    expect((await csvListing({ students: 'NON' })).accepts_students).toBe(false);
    expect((await csvListing({ students: '' })).accepts_students).toBe(false);
    expect(ok(await jsonOne({ students: true })).accepts_students).toBe(true);
    expect(ok(await xmlOne('', { fields: '<user_defined_simplefield feldname="studenten">1</user_defined_simplefield>' })).accepts_students).toBe(true);
  });
  it('reads a file with a byte-order mark', async () => {
    const feed = (await parseCsvFeed(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(csvFeed([csvRow({ ref: 'B1' })]))])));
    expect(ok(norm(feed)[0]).external_id).toBe('B1');
  });
});

describe('each reject reason', () => {
  it.each([
    [{ ref: '' }, /no external id/],
    [{ offer: 'Leasing' }, /unknown kind of offer "Leasing"/],
    [{ offer: '' }, /kind of offer .* is missing/],
    [{ title: '' }, /^no title$/],
    [{ price: '' }, /^no price$/],
    [{ price: 'sur demande' }, /price "sur demande" is not given \(on request\)/],
    [{ price: '0' }, /is not positive/],
    // Placeholders and slips: a rent of 1 EUR (a price on request), a sale at 3 EUR.
    [{ price: '1' }, /price "1" is not plausible for a month's rent \(under 50 EUR\)/],
    [{ price: '0,5' }, /is not plausible for a month's rent/],
    [{ offer: 'Vente', price: '2.5' }, /price "2.5" is not plausible for a sale \(under 1000 EUR\)/],
    // Not even a room: 1.05 m2, 3 m2 (0 is "not given").
    [{ area: '1,05' }, /area "1,05" is not plausible for a dwelling \(read as 1.05 m2\)/],
    [{ area: '3' }, /area "3" is not plausible/],
    [{ area: '1.000.000 m²' }, /^area "1.000.000 m²" is not plausible for a dwelling \(read as 1000000 m2\)$/],
    [{ price: '4 900 CHF' }, /only EUR/],
    [{ area: 'grand' }, /area "grand" is not a number/],
    [{ area: '-5' }, /area "-5" is negative/],
    [{ rooms: 'quelques' }, /rooms "quelques" is not a number/],
    [{ bedrooms: '-1' }, /bedrooms "-1" is negative/],
    [{ students: 'peut-être' }, /students "peut-être" is neither yes nor no/],
    [{ place: 'Atlantis' }, /unknown commune or locality/],
  ])('csv %j', async (fields, re) => {
    expect(reason(await csvOne(fields as Parameters<typeof csvRow>[0]))).toMatch(re);
  });

  // A count the area cannot hold (under 5 m2 a room) is not kept; the listing is. The regression
  // probe of stop 44: refusing them lost rooms let as rents with the flat's rooms.
  it('leaves out a count the area cannot hold, and keeps the listing', async () => {
    for (const [fields, area] of [
      [{ rooms: '46', area: '62' }, 62],
      [{ bedrooms: '8', area: '40' }, 40],
      [{ offer: 'Vente', rooms: '12', area: '55' }, 55],
      [{ kind: 'Chambre', rooms: '4', area: '14' }, 14],
      [{ kind: 'Studio', bedrooms: '1', area: '9' }, 9],
    ] as const) {
      const l = await csvListing(fields);
      expect([l.rooms, l.area_m2], JSON.stringify(fields)).toEqual([null, area]);
    }
  });

  it('keeps a count the area can hold, and a flatshare or sublet room in a flat of many rooms', async () => {
    expect(ok(await csvOne({ rooms: '3', area: '45' })).rooms).toBe(3);
    expect(ok(await csvOne({ rooms: '2', area: '10' })).rooms).toBe(2);
    expect(ok(await csvOne({ offer: 'Colocation', rooms: '5', area: '14' })).rooms).toBe(5);
    expect(ok(await csvOne({ offer: 'Sous-location', rooms: '4', area: '12' })).rooms).toBe(4);
    expect(ok(await csvOne({ rooms: '46' })).rooms).toBe(46);
  });

  it('json: unknown price period, a foreign country', async () => {
    expect(reason(await jsonOne({ price: { amount: 100, currency: 'EUR', period: 'day' } }))).toMatch(/unknown price period "day"/);
    expect(reason(await jsonOne({ address: { locality: 'Metz', country: 'FR' } }))).toMatch(/country "FR" is not Luxembourg/);
  });

  // (An outside probe of stop 50: "pcm" and nine other common spellings refused a whole record.)
  it.each(['pcm', 'p.m.', 'mo', '/month', 'months', '1 month', 'per_calendar_month', 'Monat', 'mensuel', 'per mois'])('json: reads the period field %j as a month', async (period) => {
    expect(ok(await jsonOne({ price: { amount: 1850, currency: 'EUR', period } })).price_eur).toBe(1850);
  });

  it.each(['pw', 'wk', 'p.w.', 'weeks', 'per_week', 'Woche', 'semaine'])('json: reads the period field %j as a week', async (period) => {
    expect(ok(await jsonOne({ price: { amount: 600, currency: 'EUR', period } })).price_eur).toBe(2600);
  });

  it.each(['a', 'daily', 'quarterly', 'month x', 'per'])('json: keeps the period field %j unknown', async (period) => {
    expect(reason(await jsonOne({ price: { amount: 1850, currency: 'EUR', period } }))).toBe(`unknown price period ${JSON.stringify(period)} (expected month or week)`);
  });

  it('json: a sale priced per week is rejected, not converted to a month; a rent per week is', async () => {
    expect(reason(await jsonOne({ offer: 'sale', price: { amount: 600, currency: 'EUR', period: 'week' } }))).toMatch(/a sale's price .* is given per week/);
    expect(reason(await jsonOne({ offer: 'sale', price: '600 € per week' }))).toMatch(/a sale's price .* is given per week/);
    expect(ok(await jsonOne({ offer: 'rent', price: { amount: 600, currency: 'EUR', period: 'week' } })).price_eur).toBe(2600);
    expect(ok(await jsonOne({ offer: 'sale', price: { amount: 600_000, currency: 'EUR', period: 'once' } })).price_eur).toBe(600_000);
  });

  it('adapter-level rejects: a record that is not an object, an unknown status, a short csv row', async () => {
    const j = (await parseJsonFeed(JSON.stringify({ mode: 'full', listings: [42, { ref: 'X', status: 'pending_review' }] })));
    expect(j.rejects.map((r) => r.reason)).toEqual(['the record is not an object', 'unknown status "pending_review"']);
    const c = (await parseCsvFeed(csvFeed(['C1;Location;Appartement'])));
    expect(c.rejects[0]).toMatchObject({ external_id: 'C1', position: 'line 2' });
    expect(c.rejects[0].reason).toMatch(/has 3 fields, 16 expected/);
  });

  // An outside probe: a garage was "unknown kind of offer "Location (Garage: not a home)"", a
  // text the file does not hold; a ref of the wrong type was "missing".
  it('what is not a home says so, quoting the file', async () => {
    expect(reason(await csvOne({ offer: 'Location bureau' }))).toBe('the offer "Location bureau" is not a home to rent or buy');
    expect(reason(await jsonOne({ offer: 'holiday let' }))).toBe('the offer "holiday let" is not a home to rent or buy');
    expect(reason(await csvOne({ kind: 'Garage' }))).toBe('property type "Garage" is not a home');
    expect(reason(norm(await parseOpenImmo(immobilie('', { art: '<buero_praxen/>' })))[0])).toBe('objektart buero_praxen is not a home');
  });

  it('json: a ref that is neither a text nor a number is said to be so, not missing', async () => {
    const j = await parseJsonFeed(JSON.stringify({ mode: 'full', listings: [{ ref: ['EX-805'], offer: 'rent' }, { id: { x: 1 } }] }));
    expect(j.rejects.map((r) => r.reason)).toEqual(['ref ["EX-805"] is not a text or a number', 'ref {"x":1} is not a text or a number']);
    expect(reason(await jsonOne({ ref: undefined }))).toBe('no external id (the agency reference is missing)');
  });

  it('openimmo: neither rent nor sale', async () => {
    const xml = immobilie('').replace(/<vermarktungsart[^>]*\/>/, '<vermarktungsart KAUF="false" MIETE_PACHT="false"/>');
    expect(reason(norm(await parseOpenImmo(xml))[0])).toMatch(/neither MIETE_PACHT nor KAUF/);
  });
});

describe('feed modes and actions', () => {
  it('openimmo TEIL is a delta and aktionart DELETE deletes', async () => {
    const xml = immobilie('').replace('umfang="VOLL"', 'umfang="TEIL"').replace('<objektnr_extern>O1</objektnr_extern>', '<objektnr_extern>O1</objektnr_extern><aktion aktionart="DELETE"/>');
    const feed = (await parseOpenImmo(xml));
    expect(feed.mode).toBe('delta');
    expect(feed.records[0]).toMatchObject({ externalId: 'O1', action: 'delete' });
  });
  // An outside probe: OpenImmo's sale status was ignored, a sold or reserved flat published.
  it('openimmo verkaufstatus RESERVIERT and VERKAUFT withdraw, in a full snapshot too; OFFEN or none is on offer', async () => {
    const withStand = (stand: string) => immobilie(stand ? `<zustand_angaben><verkaufstatus stand="${stand}"/></zustand_angaben>` : '');
    for (const [stand, action] of [['VERKAUFT', 'withdraw'], ['RESERVIERT', 'withdraw'], ['reserviert', 'withdraw'], ['OFFEN', 'upsert'], ['', 'upsert']] as const) {
      const feed = await parseOpenImmo(withStand(stand));
      expect(feed.mode, stand).toBe('full');
      expect(feed.records[0], stand).toMatchObject({ externalId: 'O1', action });
    }
  });
  it('json statuses: deleted deletes; reserved, let and sold withdraw', async () => {
    const feed = (await parseJsonFeed(JSON.stringify({ mode: 'delta', listings: ['deleted', 'reserved', 'let', 'sold'].map((status, i) => ({ ref: `S${i}`, status })) })));
    expect(feed.mode).toBe('delta');
    expect(feed.records.map((r) => r.action)).toEqual(['delete', 'withdraw', 'withdraw', 'withdraw']);
  });
});
