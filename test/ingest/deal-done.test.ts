import { describe, expect, it } from 'vitest';
import { parseCsvFeed } from '../../src/ingest/adapters/csv.js';
import { parseJsonFeed } from '../../src/ingest/adapters/json.js';
import { parseOpenImmo } from '../../src/ingest/adapters/openimmo.js';
import { importFeed } from '../../src/ingest/index.js';
import { useTestContext } from '../helpers/context.js';
import { csvFeed, csvRow, gazetteer, normalizeFeed, rejectReason } from './helpers.js';

// A record that says its deal is done (let, sold, reserved, off the market) withdraws its
// listing, in whatever field the agency software writes it; rejected, the listing's last version
// stayed on offer (an outside probe of stop 48). What is offered when no property type is given
// is read from the title; a description over several lines with a row's worth of semicolons is
// read, not taken for rows a quote swallowed.
const json = (items: object[], mode = 'full') => JSON.stringify({ agency: 'X', mode, listings: items });
const item = (ref: string, over: object = {}) => ({
  ref, offer: 'rent', status: 'available', title: 'Appartement', price: { amount: 1500, currency: 'EUR', period: 'month' }, surface_m2: 60, bedrooms: 1,
  address: { locality: 'Strassen', postcode: 'L-8010' }, ...over,
});
const actions = async (feed: Promise<{ records: { externalId: string | null; action: string }[]; rejects: { reason: string }[] }>) => {
  const f = await feed;
  return { actions: Object.fromEntries(f.records.map((r) => [r.externalId, r.action])), rejects: f.rejects.map((r) => r.reason) };
};

describe('a deal done', () => {
  it('JSON: statuses of a deal done or off the market withdraw; statuses of a listing on offer keep it; an unknown one is rejected', async () => {
    const gone = ['expired', 'off_market', 'sold STC', 'archived', 'let agreed', 'Under-Offer', 'sous compromis', 'draft', 'coming_soon', 'Verkauft', 'déjà loué', 'pending', 'Archivé'];
    // Stop 49's outside probe: `actif`, `en ligne`, `available soon` were rejected as unknown.
    const onOffer = ['price_reduced', 'new', 'for_rent', 'Disponible', 'live', 'actif', 'en ligne', 'available soon', 'Aktiv', 'publié'];
    // (A status's deal words are read for the kind of offer: a sale's for a sale.)
    const saleWords = new Set(['sold STC', 'sous compromis', 'Verkauft']);
    const feed = await actions(parseJsonFeed(json([...gone, ...onOffer, 'pending_review'].map((status, i) => item(`J${i}`, { status, ...(saleWords.has(status) ? { offer: 'sale', price: { amount: 500000, currency: 'EUR' } } : {}) })))));
    gone.forEach((_, i) => expect(feed.actions[`J${i}`], gone[i]).toBe('withdraw'));
    onOffer.forEach((_, i) => expect(feed.actions[`J${gone.length + i}`], onOffer[i]).toBe('upsert'));
    expect(feed.rejects).toEqual([expect.stringContaining('unknown status "pending_review"')]);
    // A status says the state only: its deal words withdraw whatever the kind of offer (`Vendu` on a
    // rent as `sold` does); a status on offer naming the other kind contradicts the offer (stop 49).
    const kinds = await actions(parseJsonFeed(json([
      item('S1', { offer: 'sale', status: 'Bail signé' }), item('S2', { offer: 'rent', status: 'Sous promesse' }), item('S3', { offer: 'sale', status: 'Sous promesse' }),
      item('S4', { offer: 'rent', status: 'à vendre' }), item('S5', { offer: 'rent', status: 'à louer' }), item('S6', { offer: 'rent', status: 'Vendu' }),
    ])));
    expect(kinds.actions).toMatchObject({ S1: 'withdraw', S2: 'withdraw', S3: 'withdraw', S5: 'upsert', S6: 'withdraw' });
    expect(kinds.actions.S4).toBeUndefined();
    expect(kinds.rejects).toEqual(['status "à vendre" contradicts offer "rent"']);
    // A title as a list of language versions, as the JSON may give it.
    const listed = await actions(parseJsonFeed(json([item('T1', { title: [{ lang: 'fr', text: 'LOUÉ - Appartement 2 chambres' }] })])));
    expect(listed.actions).toEqual({ T1: 'withdraw' });
  });

  it('CSV: the kind of offer or the head of the title says it; "réservé aux étudiants" and "Loué meublé" do not', async () => {
    const rows = [
      csvRow({ ref: 'C1', offer: 'Loué' }), csvRow({ ref: 'C2', offer: 'Vermietet' }), csvRow({ ref: 'C3', offer: 'Vente - VENDU' }),
      csvRow({ ref: 'C4', offer: 'Location (loué)' }), csvRow({ ref: 'C5', offer: 'Sous compromis' }), csvRow({ ref: 'C6', title: 'LOUÉ - Appartement 4' }),
      csvRow({ ref: 'C7', offer: 'Vente', title: '[VENDU] Maison' }), csvRow({ ref: 'C8', offer: 'Sale', title: 'Sold: two-bed flat' }),
      csvRow({ ref: 'K1', offer: 'Location réservée aux étudiants' }), csvRow({ ref: 'K2', title: 'Réservé aux étudiants - studio' }),
      csvRow({ ref: 'K3', title: 'Loué meublé, proche gare' }), csvRow({ ref: 'K4', title: 'Appartement - loué jusqu\'en mars' }),
      // Its regression probe: a let property for sale, "reserved" for whom, a deal that may come.
      csvRow({ ref: 'K5', offer: 'Vente - appartement loué' }), csvRow({ ref: 'K6', offer: 'Verkauf - vermietet' }),
      csvRow({ ref: 'K7', offer: 'Vente', title: 'Loué - rendement 4%' }), csvRow({ ref: 'K8', offer: 'Location - Réservé étudiants' }),
      csvRow({ ref: 'K9', title: 'Réservé : étudiants - studio' }), csvRow({ ref: 'K10', offer: 'Vente - compromis possible' }),
      csvRow({ ref: 'K11', offer: 'Vente - vendu occupé' }), csvRow({ ref: 'K12', offer: 'For sale - sold with tenant' }),
      csvRow({ ref: 'C9', offer: 'Vente', title: 'VENDU - Maison 4 chambres' }), csvRow({ ref: 'C10', offer: 'Location', title: 'Let agreed: flat' }),
    ];
    // The notes of stop 48: a promise of sale, a lease signed, an offer accepted; each for its kind.
    rows.push(
      csvRow({ ref: 'C11', offer: 'Sous compromis de vente' }), csvRow({ ref: 'C12', offer: 'Vente - sous promesse' }), csvRow({ ref: 'C13', offer: 'Location - bail signé' }),
      csvRow({ ref: 'C14', offer: 'Sale - offer accepted' }), csvRow({ ref: 'K13', offer: 'Vente - bail signé' }), csvRow({ ref: 'K14', offer: 'Location - sous promesse' }),
      csvRow({ ref: 'K15', offer: 'Vente - option' }),
    );
    const feed = await actions(parseCsvFeed(csvFeed(rows)));
    for (const ref of ['C1', 'C2', 'C3', 'C4', 'C5', 'C6', 'C7', 'C8', 'C9', 'C10', 'C11', 'C12', 'C13', 'C14']) expect(feed.actions[ref], ref).toBe('withdraw');
    for (const ref of ['K13', 'K14', 'K15']) expect(feed.actions[ref], ref).not.toBe('withdraw');
    // Its regression probe: such words at a title's head, "de vente" after them, for a sale only.
    const titled = await actions(parseCsvFeed(csvFeed([
      csvRow({ ref: 'T1', offer: 'Vente', title: 'Sous compromis de vente – Maison 4 chambres' }), csvRow({ ref: 'T2', offer: 'Vente', title: 'Sous promesse de vente - Appartement' }),
      csvRow({ ref: 'T3', offer: 'Location', title: 'Sous compromis de vente – Appartement' }), csvRow({ ref: 'T4', offer: 'Vente', title: 'Sous compromis de location - Maison' }),
    ])));
    expect(titled.actions).toMatchObject({ T1: 'withdraw', T2: 'withdraw' });
    expect([titled.actions.T3, titled.actions.T4]).not.toContain('withdraw');
    for (const ref of ['K1', 'K2', 'K3', 'K4', 'K5', 'K6', 'K7', 'K8', 'K9', 'K10', 'K11', 'K12']) expect(feed.actions[ref], ref).not.toBe('withdraw');
  });

  it('OpenImmo: a title that says it', async () => {
    const immo = (id: string, title: string) =>
      `<immobilie><objektkategorie><nutzungsart WOHNEN="true"/><vermarktungsart MIETE_PACHT="true"/><objektart><wohnung/></objektart></objektkategorie>` +
      `<geo><plz>8010</plz><ort>Strassen</ort></geo><preise><kaltmiete>1500</kaltmiete></preise><flaechen><wohnflaeche>60</wohnflaeche></flaechen>` +
      `<freitexte><objekttitel>${title}</objekttitel></freitexte><verwaltung_techn><objektnr_extern>${id}</objektnr_extern></verwaltung_techn></immobilie>`;
    const xml = `<?xml version="1.0" encoding="UTF-8"?><openimmo><anbieter>${immo('O1', 'VERMIETET - Wohnung')}${immo('O2', 'Wohnung in Strassen')}</anbieter></openimmo>`;
    const feed = await actions(parseOpenImmo(xml));
    expect(feed.actions).toEqual({ O1: 'withdraw', O2: 'upsert' });
  });

  describe('through an import', () => {
    const t = useTestContext();
    it('a listing on offer, then let: withdrawn, and counted with the deleted', async () => {
      const imp = (rows: string[]) => importFeed(t.db, { source: 'done-csv', format: 'csv', input: { text: csvFeed(rows) }, now: new Date('2026-11-20T08:00:00Z'), gazetteer: gazetteer() });
      await imp([csvRow({ ref: 'D1' }), csvRow({ ref: 'D2', area: '70' })]);
      const second = await imp([csvRow({ ref: 'D1', offer: 'Loué' }), csvRow({ ref: 'D2', area: '70' })]);
      expect(second.counts).toMatchObject({ deleted: 1, rejected: 0, withdrawn: 1 });
      const rows = await t.db('listings').where({ source: 'done-csv' }).orderBy('external_id').select('external_id', 'status');
      expect(rows).toEqual([{ external_id: 'D1', status: 'inactive' }, { external_id: 'D2', status: 'active' }]);
    });
  });
});

describe('what is offered, without a property type', () => {
  it('the title names it: a parking space or an office is no home; a flat is', async () => {
    const rows = [
      csvRow({ ref: 'T1', kind: '', title: 'Place de parking intérieure' }), csvRow({ ref: 'T2', kind: '', title: 'Bureau 120 m² centre' }),
      csvRow({ ref: 'T3', kind: '', title: 'Appartement 2 chambres avec parking' }), csvRow({ ref: 'T4', kind: '', title: 'Bel appartement, bureau et terrasse' }),
    ];
    // Its regression probe: titles that name their extras, or a place, before the home.
    rows.push(...['Parking inclus - Appartement 2 chambres', "Hall d'entrée spacieux, appartement 2 chambres", 'Halle Victor Hugo - appartement 2 chambres',
      'Remise à neuf complète - appartement 2 chambres', 'Plateau du Kirchberg | Loft dans ancien atelier', 'Place de Paris | Hôtel particulier rénové',
      'Terrain de 6 ares - maison 4 chambres', 'Parking inclus - Grange rénovée', 'Parking inclus - Chalet',
      'Parking inclus - Ferme rénovée', 'Garage double - Ancienne ferme', 'Parking - rez-de-jardin', 'Pied-à-terre au Kirchberg'].map((title, i) => csvRow({ ref: `H${i}`, kind: '', title })));
    const reasons = normalizeFeed(await parseCsvFeed(csvFeed(rows))).map(rejectReason);
    expect(reasons[0]).toMatch(/no property type is given, and the title "Place de parking intérieure" names something that is not a home/);
    expect(reasons[1]).toMatch(/title "Bureau 120 m² centre"/);
    // A farm building made a home is a home only as a part of its own (its last re-check).
    // And stop 49's: `fermé` (closed) is no farm (`ferme`), a ground floor is a home only at a part's head.
    const near = ['Bureau rénové près de la gare', 'Bureau 120 m² dans une grange rénovée', 'Place de parking intérieure + grenier aménagé', 'Local commercial - showroom aménagé',
      'Garage fermé', 'Box fermé - Bertrange', 'Parking fermé à Kirchberg', 'Local commercial rez-de-chaussée'];
    const nearReasons = normalizeFeed(await parseCsvFeed(csvFeed(near.map((title, i) => csvRow({ ref: `N${i}`, kind: '', title }))))).map(rejectReason);
    for (const r of nearReasons) expect(r).toMatch(/names something that is not a home/);
    expect(reasons.slice(2)).toEqual(Array(15).fill('accepted'));
    const items = [item('J1', { title: { fr: 'Place de parc intérieure', en: 'Indoor parking space' } }), item('J2', { title: 'Studio meublé' })];
    expect(normalizeFeed(await parseJsonFeed(json(items))).map(rejectReason)).toEqual([expect.stringMatching(/names something that is not a home/), 'accepted']);
  });
});

describe('a description over several lines', () => {
  it('with a line of as many semicolons as a row has, quoted and closed, is read', async () => {
    const description = 'Bel appartement lumineux.\nÉquipements : cuisine équipée; lave-vaisselle; four; micro-ondes; frigo; congélateur; lave-linge; sèche-linge; parquet; double vitrage; volets électriques; cave; garage; ascenseur; interphone; fibre; terrasse; balcon\nLibre de suite.';
    const header = 'Référence;Type d\'offre;Type de bien;Titre;Prix;Surface;Pièces;Chambres;Localité;Code postal;Latitude;Longitude;Photos;Étudiants;Date de création;Lien;Description';
    const text = `${header}\n${csvRow({ ref: 'A1' })};"${description}"\n${csvRow({ ref: 'A2' })};"Studio."\n`;
    const feed = await parseCsvFeed(text);
    expect(feed.records.map((r) => r.externalId)).toEqual(['A1', 'A2']);
  });

  it('holding whole rows (a quote never closed until rows later) still refuses the file', async () => {
    const header = 'Référence;Type d\'offre;Type de bien;Titre;Prix;Surface;Pièces;Chambres;Localité;Code postal;Latitude;Longitude;Photos;Étudiants;Date de création;Lien;Description';
    const text = `${header}\n${csvRow({ ref: 'A1' })};"Open quote\n${csvRow({ ref: 'A2' })};\n${csvRow({ ref: 'A3' })};"closed"\n`;
    await expect(parseCsvFeed(text)).rejects.toThrow(/holds what looks like whole rows|holds the start of the next row/);
    // Rows with few values, one not of its form (its regression probe: read, and two rows lost).
    const sparse = [
      'D3;Vente;Maison;"Maison 3 chambres à Mersch;Prix sur demande;130;;3;Mersch;L-7510;;;;;;https://x.example/d3',
      'D4;Vente;Maison;Maison 4 chambres à Mersch;Prix sur demande;;;;Mersch;L-7510;;;;;;https://x.example/d4',
      'D5;Vente;Maison;"Maison 5 chambres à Mersch";650.000 €;150;;5;Mersch;L-7510;;;;;;https://x.example/d5',
    ];
    await expect(parseCsvFeed(csvFeed([csvRow({ ref: 'D1' }), ...sparse]))).rejects.toThrow(/holds what looks like whole rows|holds the start of the next row/);
  });
});
