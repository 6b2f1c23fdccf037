import { describe, expect, it } from 'vitest';
import { parseCsvFeed } from '../../src/ingest/adapters/index.js';
import { offerType } from '../../src/ingest/adapters/common.js';
import { parseCount } from '../../src/ingest/counts.js';
import { parseFeedDate } from '../../src/ingest/feed-dates.js';
import type { ParsedFeed } from '../../src/ingest/types.js';
import { accepted, csvFeed, csvRow, jsonFeedOne, normalizeFeed, rejectReason } from './helpers.js';

// An outside probe of stop 50, acting as new agencies: what a person reads one way is read so; what is
// ambiguous is still refused.

const norm = (feed: ParsedFeed) => normalizeFeed(feed);
const ok = accepted;
const csvOne = async (f: Parameters<typeof csvRow>[0]) => norm(await parseCsvFeed(csvFeed([csvRow({ ref: 'R1', ...f })])))[0];
const csvAction = async (f: Parameters<typeof csvRow>[0]) => (await parseCsvFeed(csvFeed([csvRow({ ref: 'R1', ...f })]))).records[0].action;

const jsonOne = jsonFeedOne;
const jsonListing = async (listing: Record<string, unknown>) => ok((await jsonOne(listing)).result);
const jsonReason = async (listing: Record<string, unknown>) => {
  const { feed, result } = await jsonOne(listing);
  return feed.rejects[0]?.reason ?? (result ? rejectReason(result) : 'no record');
};
const count = (v: string, what: 'rooms' | 'bedrooms') => parseCount(v, what);
const date = (v: unknown) => parseFeedDate(v).ok && (parseFeedDate(v) as { value: Date | null }).value?.toISOString();

describe('JSON geo: other keys and a bare pair under "coordinates"', () => {
  it('x and y, x the longitude', async () => {
    const l = await jsonListing({ geo: { x: 6.1319, y: 49.6116 } });
    expect([l.lat, l.lng]).toEqual([49.6116, 6.1319]);
  });

  it('a pair under "coordinates" with no type: GeoJSON order, put right when swapped', async () => {
    const swapped = await jsonListing({ geo: { coordinates: [49.6116, 6.1319] } });
    expect([swapped.lat, swapped.lng]).toEqual([49.6116, 6.1319]);
    const geojson = await jsonListing({ geo: { coordinates: [6.1319, 49.6116] } });
    expect([geojson.lat, geojson.lng]).toEqual([49.6116, 6.1319]);
  });

  it('keys in another letter case: Lat/Lon, LAT/LNG, Latitude/Longitude, a GeoJSON point in capitals', async () => {
    for (const geo of [{ Lat: 49.6116, Lon: 6.1319 }, { LAT: 49.6116, LNG: 6.1319 }, { Latitude: 49.6116, Longitude: 6.1319 }, { Type: 'Point', Coordinates: [6.1319, 49.6116] }]) {
      const l = await jsonListing({ geo });
      expect([l.lat, l.lng], JSON.stringify(geo)).toEqual([49.6116, 6.1319]);
    }
  });

  it('keeps: a documented key wins over another spelling; two spellings of one key, a single figure, a pair outside Luxembourg give no position', async () => {
    const documented = await jsonListing({ geo: { Lat: 50.1, latitude: 49.6116, lon: 6.1319 } });
    expect([documented.lat, documented.lng]).toEqual([49.6116, 6.1319]);
    for (const geo of [{ Lat: 49.6116, LAT: 49.62, Lon: 6.1319 }, { coordinates: [49.6116] }, { x: 77000, y: 75000 }]) {
      const l = await jsonListing({ geo });
      expect([l.lat, l.lng], JSON.stringify(geo)).toEqual([null, null]);
    }
  });
});

describe('JSON address: the town and the quarter under other keys', () => {
  it('neighbourhood, suburb, Ortsteil are the quarter beside the commune', async () => {
    for (const address of [{ locality: 'Luxembourg', neighbourhood: 'Kirchberg' }, { city: 'Luxembourg', suburb: 'Kirchberg' }, { commune: 'Luxembourg', Ortsteil: 'Kirchberg' }, { city: 'Luxembourg', quarter: 'Kirchberg' }]) {
      const l = await jsonListing({ address });
      expect([l.commune, l.locality], JSON.stringify(address)).toEqual(['Luxembourg', 'Kirchberg']);
    }
  });

  it('town, village, municipality are the place', async () => {
    expect((await jsonListing({ address: { town: 'Strassen' } })).commune).toBe('Strassen');
    expect((await jsonListing({ address: { village: 'Belvaux' } })).commune).toBe('Sanem');
    expect((await jsonListing({ address: { Municipality: 'Strassen', PostalCode: 'L-8010' } })).postcode).toBe(8010);
    const l = await jsonListing({ address: { town: 'Luxembourg', stadtteil: 'Kirchberg' } });
    expect([l.commune, l.locality]).toEqual(['Luxembourg', 'Kirchberg']);
  });

  // The re-check of stop 50: a `district` read as the quarter moved records of the City to Hesperange
  // or Strassen, and made the former district of Diekirch a commune.
  it('keeps: district, also an administrative district or a canton, is not read', async () => {
    const l = await jsonListing({ address: { commune: 'Luxembourg', district: 'Hesperange' } });
    expect([l.commune, l.locality]).toEqual(['Luxembourg', null]);
    expect(await jsonReason({ address: { district: 'Diekirch' } })).toBe('no commune, locality, postcode or coordinates given');
  });

  it('keeps: the documented keys decide where they give a place (a town beside a quarter is not read)', async () => {
    const l = await jsonListing({ address: { town: 'Strassen', quarter: 'Kirchberg' } });
    expect([l.commune, l.locality]).toEqual(['Luxembourg', 'Kirchberg']);
    const m = await jsonListing({ address: { locality: 'Kirchberg', town: 'Strassen' } });
    expect(m.commune).toBe('Luxembourg');
    expect(await jsonReason({ address: { hamlet: 'Strassen' } })).toBe('no commune, locality, postcode or coordinates given');
  });
});

describe('JSON keys in another letter case', () => {
  it('a listing written by a .NET CRM (PascalCase) reads as documented', async () => {
    const l = await jsonListing({ ref: undefined, Ref: 'J9', offer: undefined, Offer: 'rent', title: undefined, Title: 'Flat', price: undefined, Price: { Amount: 1700, Currency: 'EUR', Period: 'Month' }, address: undefined, Address: { City: 'Strassen' }, PublishedAt: '2026-11-19T08:00:00Z', published_at: undefined });
    expect([l.external_id, l.listing_type, l.title, l.price_eur, l.commune, l.created_at?.toISOString()]).toEqual(['J9', 'RENT', 'Flat', 1700, 'Strassen', '2026-11-19T08:00:00.000Z']);
  });

  it('keeps: the documented key wins when both are written', async () => {
    expect((await jsonListing({ status: 'available', Status: 'sold' })).listing_type).toBe('RENT');
    expect((await jsonListing({ price: { amount: 1500, Value: 1700, currency: 'EUR' } })).price_eur).toBe(1500);
  });
});

describe('JSON status and offer', () => {
  it.each(['vacant', 'ready', 'free', 'listed', 'Vacant'])('status %j is available', async (status) => {
    expect((await jsonListing({ status })).listing_type).toBe('RENT');
  });

  it('keeps: unlisted, not vacant and other unknown statuses rejected', async () => {
    for (const status of ['unlisted', 'not vacant', 'pending_review']) expect(await jsonReason({ status })).toBe(`unknown status ${JSON.stringify(status)}`);
  });

  it('offer "shared" is a flat share', async () => {
    expect((await jsonListing({ offer: 'shared' })).listing_type).toBe('FLATSHARE');
    expect((await jsonListing({ offer: 'Shared flat' })).listing_type).toBe('FLATSHARE');
  });
});

describe('CSV offer: Loc., Bail', () => {
  it('`Loc.` and `Bail` (a lease) are a rent', async () => {
    for (const offer of ['Loc.', 'Bail', 'LOC', 'Loc. meublée', 'Bail 3 ans']) expect(ok(await csvOne({ offer })).listing_type, offer).toBe('RENT');
  });

  it('with a deal word, the listing is withdrawn (`Loc. (loué)`, `Bail signé`, `Bail - vendu`)', async () => {
    for (const offer of ['Loc. (loué)', 'Bail signé', 'Bail - vendu', 'Loc. réservé']) expect(await csvAction({ offer }), offer).toBe('withdraw');
  });

  it('keeps: loose words beside another kind or a word that makes them something else are no kind', () => {
    expect(offerType('Bail - Vente')).toBe('SALE');
    expect(offerType('Shared room')).toBe('FLATSHARE');
    for (const t of ['Bail emphytéotique', 'Droit au bail', 'Shared ownership', 'Bail commercial', 'Loc. bureau', 'Appartement - loc.', 'Bail possible']) expect(offerType(t), t).toBeNull();
  });

  // The re-check of stop 50: beside words that are no home's, or that say the home is taken, a loose
  // word was read as a home on offer.
  it('keeps: a loose word beside a word of what is no home, or of a home taken or held, is no kind', async () => {
    for (const t of ['Bail rural', 'Bail à ferme', 'Bail de chasse', 'Bail professionnel', 'Bail de stationnement', 'Loc. box', 'Loc. emplacement', 'Loc. cave', 'Loc. atelier', 'Loc. jardin', 'Shared workspace', 'Shared desk', 'Loc. (reserved)', 'Bail - option', 'Shared (taken)']) {
      expect(offerType(t), t).toBeNull();
    }
    for (const offer of ['Bail rural', 'Loc. box', 'Shared workspace', 'Loc. (taken)']) expect(rejectReason(await csvOne({ offer })), offer).toMatch(/unknown kind of offer|is not a home/);
    // (Not a list of the words it may stand beside: that refused homes, its second re-check.)
    for (const t of ["Bail d'habitation", 'Loc. meublée', 'Bail 3 ans', 'Loc. appartement', 'Loc. Wohnung', 'Loc. T3', 'Loc. appartement à Strassen', 'Bail étudiant']) expect(offerType(t), t).toBe('RENT');
    expect(offerType('Shared accommodation')).toBe('FLATSHARE');
    // The third re-check: the same in the other languages, more of what is no home, and a deal word
    // beside other words (refused, not put on offer; alone it withdraws).
    for (const t of ['Loc. expired', 'Loc. gekündigt', 'Loc. vergeben', 'Loc. T3 (loué)', 'Loc. signé', 'Loc. Büro', 'Bail à céder', 'Shared flat (no vacancy)']) {
      expect(offerType(t), t).toBeNull();
    }
    for (const offer of ['Loc. T3 (loué)', 'Loc. Wohnung (vermietet)']) expect(rejectReason(await csvOne({ offer })), offer).toMatch(/unknown kind of offer/);
    for (const t of ['Loc. disponible de suite', 'Loc. available now']) expect(offerType(t), t).toBe('RENT');
    // The fourth re-check: what no home is counts only as the first word after the loose word; further on
    // it describes the home (1,230 homes were refused when any word counted).
    for (const t of ['Loc. – appartement Place Guillaume', 'Loc. appartement avec salle de bain', 'Loc.: maison avec jardin', 'Loc. appartement avec cave', 'Loc. - not furnished', 'Loc. appartement, dépôt de garantie 2 mois']) {
      expect(offerType(t), t).toBe('RENT');
    }
    expect(offerType('Shared flat with garden')).toBe('FLATSHARE');
    for (const t of ['Loc. place de parking', 'Bail réel solidaire', 'Loc. cabinet médical', 'Bail cession']) expect(offerType(t), t).toBeNull();
    // The fifth re-check: an article before that first word ("Loc. d'un box" was a home on offer), a plural.
    for (const t of ["Loc. d'un box", 'Loc. une cave', 'Loc. du box', "Loc. l'atelier", "Bail d'une ferme", 'Loc. au box', 'Loc. des jardins', 'Loc. the storage', 'Shared einen Keller']) {
      expect(offerType(t), t).toBeNull();
    }
    expect(offerType("Loc. d'un appartement")).toBe('RENT');
  });
});

describe('CSV counts', () => {
  it('`3 pièces principales` is 3 rooms; refused in a bedrooms field, saying it counts rooms', () => {
    expect(count('3 pièces principales', 'rooms')).toEqual({ ok: true, value: 3 });
    expect(count('3 pièces principales', 'bedrooms')).toEqual({ ok: false, reason: 'bedrooms "3 pièces principales" counts rooms, not bedrooms' });
  });

  it('`3 (2 chambres + séjour)` is 3 rooms, 2 bedrooms; brackets that do not add up are refused', () => {
    expect(count('3 (2 chambres + séjour)', 'rooms')).toEqual({ ok: true, value: 3 });
    expect(count('3 (2 chambres + séjour)', 'bedrooms')).toEqual({ ok: true, value: 2 });
    expect(count('3 pièces (2 chambres + salon)', 'rooms')).toEqual({ ok: true, value: 3 });
    for (const v of ['4 (2 chambres + séjour)', '3 (3 chambres + séjour)']) expect(count(v, 'rooms').ok, v).toBe(false);
  });

  it('bedrooms `2 SZ`, `2 chambre(s)`, `2 bdr`, `2 bdrm`, `2 bdrms`', async () => {
    for (const v of ['2 SZ', '2 chambre(s)', '2 bdr', '2 bdrm', '2 bdrms']) expect(count(v, 'bedrooms'), v).toEqual({ ok: true, value: 2 });
    expect(ok(await csvOne({ bedrooms: '2 SZ' })).rooms).toBe(3);
  });

  // The re-check of stop 50: refused as rooms only, where the bedrooms are said.
  it('the main rooms or the French type, with the bedrooms they include, give those bedrooms', () => {
    for (const [v, n] of [['3 pièces principales dont 2 chambres', 2], ['3 pièces principales, dont 2 ch.', 2], ['4 pièces principales dont 3 chambres', 3], ['T3 dont 2 chambres', 2], ['F4 dont 3 chambres', 3]] as const) {
      expect(count(v, 'bedrooms'), v).toEqual({ ok: true, value: n });
    }
    expect(count('T4 dont 5 chambres', 'bedrooms').ok).toBe(false);
    expect(count('T3 (dont 1 bureau)', 'bedrooms').ok).toBe(false);
  });

  it('keeps: `3 (2 chambres)` without a room word, `3+1`, ranges refused as before', () => {
    expect(count('3 (2 chambres)', 'rooms').ok).toBe(false);
    expect(count('3+1', 'rooms').ok).toBe(false);
    expect(count('3-4 bdrm', 'bedrooms')).toEqual({ ok: false, reason: 'bedrooms "3-4 bdrm" is not one count' });
  });
});

describe('dates', () => {
  it('`11/21/2026`: the month first where the day cannot be; `03/04/2026` is still the 3rd of April', () => {
    expect(date('11/21/2026')).toBe('2026-11-20T23:00:00.000Z');
    expect(date('11-21-2026 14:03')).toBe('2026-11-21T13:03:00.000Z');
    expect(date('03/04/2026')).toBe('2026-04-02T22:00:00.000Z');
  });

  it('`21/11/2026 14.03`: a time with a dot after a space', () => {
    expect(date('21/11/2026 14.03')).toBe('2026-11-21T13:03:00.000Z');
    expect(date('21.11.2026 9.05')).toBe('2026-11-21T08:05:00.000Z');
  });

  it('a weekday before a date in figures, when it is the date\'s', () => {
    for (const v of ['Sa 21.11.2026', 'samedi 21/11/2026', 'Sat, 21/11/2026', 'Samstag, 21.11.2026', 'sam. 21/11/2026']) expect(date(v), v).toBe('2026-11-20T23:00:00.000Z');
  });

  it('ISO basic with a time: `20261121T140300`, with Z or an offset', () => {
    expect(date('20261121T140300')).toBe('2026-11-21T13:03:00.000Z');
    expect(date('20261121T140300Z')).toBe('2026-11-21T14:03:00.000Z');
    expect(date('20261121T1403+0100')).toBe('2026-11-21T13:03:00.000Z');
  });

  it('keeps unread: a wrong weekday, a German "Di" on a Sunday, a month first with dots, both parts over 12, an impossible time', () => {
    for (const v of ['vendredi 21/11/2026', 'Di 22.11.2026', '11.21.2026', '13/21/2026', '02/30/2026', '21/11/2026 14.60', '20261121T250000']) expect(parseFeedDate(v), v).toEqual({ ok: true, value: null });
  });

  it('a JSON record with an ISO basic date keeps it as its creation date', async () => {
    expect((await jsonListing({ published_at: '20261121T140300' })).created_at?.toISOString()).toBe('2026-11-21T13:03:00.000Z');
  });
});
