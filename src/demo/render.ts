import { DateTime } from 'luxon';
import type { Agency } from './agencies.js';
import { copyPrice, type Copy, type DemoProperty } from './market.js';
import { Rng } from './random.js';

// Renders an agency's copies into a feed file of its format, with the variations of
// docs/feed-formats.md: price and area notations, postcodes with or without "L-", bedrooms instead
// of rooms, fractional rooms, weekly rents, swapped or missing coordinates, floor plans and
// videos beside the photos, byte-order marks, CRLF line ends, extra columns, and the
// records each agency gets wrong. Every choice a record's formatting makes comes from the
// copy's own seed, so the same record looks the same in every delivery.

export interface FeedItem {
  p: DemoProperty;
  c: Copy;
  // json feeds keep a listing a while after it was let or sold, with that status.
  status: 'available' | 'let' | 'sold' | 'reserved';
}

const ZONE = 'Europe/Luxembourg';

export function renderFeed(agency: Agency, items: FeedItem[], at: number): Buffer {
  const text = agency.format === 'openimmo' ? renderOpenImmo(agency, items, at) : agency.format === 'csv' ? renderCsv(agency, items, at) : renderJson(agency, items, at);
  return Buffer.from((agency.noise.bom ? '\ufeff' : '') + text, 'utf8');
}

export function imageUrls(c: Copy): string[] {
  const slug = c.externalId.toLowerCase().replace(/[^a-z0-9]+/g, '-');
  return Array.from({ length: c.imageCount }, (_, i) => `https://img.${c.source}.example/${slug}/${i + 1}.jpg`);
}

function link(agency: Agency, c: Copy): string {
  return `https://www.${agency.name}.example/${agency.urlPath}/${encodeURIComponent(c.externalId)}`;
}

function localTime(ms: number): DateTime {
  return DateTime.fromMillis(Math.floor(ms / 60_000) * 60_000, { zone: ZONE });
}

// 1250000 -> "1.250.000" (sep ".") or "1 250 000" (sep " ").
function thousands(n: number, sep: string): string {
  return String(Math.round(n)).replace(/\B(?=(\d{3})+(?!\d))/g, sep);
}

function decimalComma(n: number): string {
  return String(n).replace('.', ',');
}

// --- openimmo ---------------------------------------------------------------------------

const XML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' };
const esc = (s: string) => s.replace(/[&<>"']/g, (ch) => XML_ESCAPES[ch]);

function renderOpenImmo(agency: Agency, items: FeedItem[], at: number): string {
  const out = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<openimmo>',
    `  <uebertragung art="OFFLINE" umfang="VOLL" modus="NEW" version="1.2.7" sendersoftware="ImmoExport 4.2" techn_email="it@${agency.name}.example" timestamp="${localTime(at).toFormat("yyyy-MM-dd'T'HH:mm:ss")}"/>`,
    '  <anbieter>',
    `    <anbieternr>${esc(agency.name.toUpperCase())}-001</anbieternr>`,
    `    <firma>${esc(agency.display_name)} S.à r.l.</firma>`,
  ];
  for (const item of items) out.push(...immobilie(item, at));
  out.push('  </anbieter>', '</openimmo>', '');
  return out.join('\n');
}

function immobilie({ p, c }: FeedItem, at: number): string[] {
  const r = new Rng(c.style);
  const warm = r.chance(0.1);
  const cents = r.chance(0.5);
  const nebenkosten = r.int(8, 35) * 10;
  const areaCents = r.chance(0.6);
  const intern = r.int(1000, 99999);
  const titleImage = r.chance(0.5);
  const withAktion = r.chance(0.6);
  const studentsField = r.chance(0.7);
  const country = r.pick(['BEL', 'DEU', 'FRA']);
  const badArea = r.pick(['-64.00', '-1']);

  const offerBroken = c.problem === 'offer';
  const sale = p.type === 'SALE' && !offerBroken;
  const rent = p.type !== 'SALE' && !offerBroken;
  const objektart =
    p.kind === 'room' && !offerBroken
      ? '<zimmer zimmertyp="ZIMMER"/>'
      : p.kind === 'house'
        ? '<haus haustyp="EINFAMILIENHAUS"/>'
        : `<wohnung wohnungtyp="${p.kind === 'studio' ? 'APARTMENT' : 'ETAGE'}"/>`;
  const lines = [
    '    <immobilie>',
    '      <objektkategorie>',
    '        <nutzungsart WOHNEN="true" GEWERBE="false"/>',
    `        <vermarktungsart KAUF="${sale}" MIETE_PACHT="${rent}"/>`,
    `        <objektart>${objektart}</objektart>`,
    '      </objektkategorie>',
    '      <geo>',
  ];
  if (c.place.postcode) lines.push(`        <plz>${esc(c.place.postcode)}</plz>`);
  if (c.place.town) lines.push(`        <ort>${esc(c.place.town)}</ort>`);
  if (c.place.quarter) lines.push(`        <regionaler_zusatz>${esc(c.place.quarter)}</regionaler_zusatz>`);
  if (c.coords) lines.push(`        <geokoordinaten breitengrad="${c.coords.lat}" laengengrad="${c.coords.lng}"/>`);
  lines.push(`        <land iso_land="${c.problem === 'country' ? country : 'LUX'}"/>`, '      </geo>', '      <preise>');
  if (c.problem !== 'price') {
    const price = copyPrice(p, c, at);
    const shown = cents ? price.toFixed(2) : String(price);
    if (p.type === 'SALE') lines.push(`        <kaufpreis>${shown}</kaufpreis>`);
    else {
      lines.push(`        <${warm ? 'warmmiete' : 'kaltmiete'}>${shown}</${warm ? 'warmmiete' : 'kaltmiete'}>`);
      if (!warm) lines.push(`        <nebenkosten>${nebenkosten}.00</nebenkosten>`);
    }
  }
  lines.push(`        <waehrung iso_waehrung="${c.problem === 'currency' ? 'CHF' : 'EUR'}"/>`, '      </preise>', '      <flaechen>');
  if (c.problem === 'area') lines.push(`        <wohnflaeche>${badArea}</wohnflaeche>`);
  else if (c.area !== null) lines.push(`        <wohnflaeche>${areaCents ? c.area.toFixed(2) : String(c.area)}</wohnflaeche>`);
  if (c.rooms === 'rooms' || c.rooms === 'bedrooms') lines.push(`        <anzahl_zimmer>${p.rooms}</anzahl_zimmer>`);
  else if (c.rooms === 'half') lines.push(`        <anzahl_zimmer>${p.rooms}.5</anzahl_zimmer>`);
  lines.push('      </flaechen>', `      <freitexte><objekttitel>${esc(c.title)}</objekttitel></freitexte>`);
  const images = imageUrls(c);
  if (images.length || c.attachment) {
    lines.push('      <anhaenge>');
    images.forEach((url, i) => {
      const gruppe = i === 0 && titleImage ? 'TITELBILD' : 'BILD';
      lines.push(`        <anhang location="REMOTE" gruppe="${gruppe}"><daten><pfad>${esc(url)}</pfad></daten></anhang>`);
    });
    if (c.attachment === 'floorplan') {
      const url = `https://img.${c.source}.example/${c.externalId.toLowerCase()}/grundriss.pdf`;
      lines.push(`        <anhang location="REMOTE" gruppe="GRUNDRISS"><daten><pfad>${esc(url)}</pfad></daten></anhang>`);
    }
    lines.push('      </anhaenge>');
  }
  const fields: string[] = [];
  if (studentsField) fields.push(`        <user_defined_simplefield feldname="studenten">${p.students ? 1 : 0}</user_defined_simplefield>`);
  if (p.type === 'SUBLET' && !offerBroken) fields.push('        <user_defined_simplefield feldname="untervermietung">1</user_defined_simplefield>');
  if (fields.length) lines.push('      <verwaltung_objekt>', ...fields, '      </verwaltung_objekt>');
  const changed = Math.max(c.listedAt, p.priceChangedAt !== null && p.priceChangedAt <= at ? p.priceChangedAt : 0);
  lines.push(
    '      <verwaltung_techn>',
    `        <objektnr_intern>${intern}</objektnr_intern>`,
    `        <objektnr_extern>${esc(c.externalId)}</objektnr_extern>`,
    ...(withAktion ? ['        <aktion aktionart="CHANGE"/>'] : []),
    `        <stand_vom>${localTime(changed).toFormat('yyyy-MM-dd')}</stand_vom>`,
    '      </verwaltung_techn>',
    '    </immobilie>',
  );
  return lines;
}

// --- csv --------------------------------------------------------------------------------

const CSV_COLUMNS = [
  'Référence', "Type d'offre", 'Type de bien', 'Titre', 'Prix', 'Surface', 'Pièces', 'Chambres', 'Localité',
  'Code postal', 'Latitude', 'Longitude', 'Photos', 'Étudiants', 'Date de création', 'Lien',
];
const OFFER_WORDS = { RENT: 'Location', SALE: 'Vente', FLATSHARE: 'Colocation', SUBLET: 'Sous-location' } as const;
const KIND_WORDS = { studio: 'Studio', apt1: 'Appartement', apt2: 'Appartement', apt3: 'Appartement', house: 'Maison', room: 'Chambre' } as const;
const AGENTS = ['Anne', 'Marc', 'Sophie', 'Jeff', ''];

function renderCsv(agency: Agency, items: FeedItem[], at: number): string {
  // Moselle Immo's software: Windows line ends, an extra "Agent" column, quoted titles and
  // prices, decimal commas. LuxHome's: plain.
  const moselle = agency.name === 'moselle-immo';
  const eol = moselle ? '\r\n' : '\n';
  const header = moselle ? [...CSV_COLUMNS, 'Agent'] : CSV_COLUMNS;
  const lines = [header.join(';')];
  for (const item of items) lines.push(csvRow(agency, item, at, moselle));
  return lines.join(eol) + eol;
}

function csvRow(agency: Agency, { p, c }: FeedItem, at: number, moselle: boolean): string {
  const r = new Rng(c.style);
  const offerCase = r.weighted([
    ['as-is', 6],
    ['upper', moselle ? 2 : 0.5],
    ['lower', moselle ? 2 : 0.5],
  ] as const);
  const priceForm = r.int(0, 3);
  const nbsp = r.chance(0.1);
  const areaForm = r.int(0, 2);
  const bothCounts = r.chance(0.3);
  const students = r.weighted([
    ['yes-no', 6],
    ['empty', 2],
    ['caps', 1],
  ] as const);
  const agent = r.pick(AGENTS);
  const badArea = r.pick(['n/c', '-45', 'env. 80']);
  const badOffer = r.pick(['Bail commercial', 'Garage', 'Viager']);

  const case_ = (s: string) => (offerCase === 'upper' ? s.toUpperCase() : offerCase === 'lower' ? s.toLowerCase() : s);
  const offer = c.problem === 'offer' ? badOffer : case_(OFFER_WORDS[p.type]);

  let price = '';
  if (c.problem !== 'price') {
    const v = copyPrice(p, c, at);
    const sp = nbsp ? '\u00a0' : ' ';
    if (moselle) price = [`${thousands(v, sp)} €`, `${thousands(v, '.')},00`, thousands(v, '.'), `${v}`][priceForm];
    else price = [`€ ${thousands(v, sp)}`, `${v}`, `${v},00`, thousands(v, sp)][priceForm];
    if (c.problem === 'currency') price = `${thousands(v, ' ')} CHF`;
  }

  let area = '';
  if (c.problem === 'area') area = badArea;
  else if (c.area !== null) {
    if (moselle) area = [decimalComma(c.area), `${decimalComma(c.area)} m²`, String(c.area)][areaForm];
    else area = [String(c.area), `${c.area} m2`, String(c.area)][areaForm];
  }

  let rooms = '';
  let bedrooms = '';
  if (c.rooms === 'rooms' || c.rooms === 'half') {
    rooms = String(p.rooms);
    if (bothCounts && p.kind !== 'room') bedrooms = String(p.rooms - 1);
  } else if (c.rooms === 'bedrooms') bedrooms = String(p.kind === 'room' ? 1 : p.rooms - 1);
  // A room in a flatshare: "1 room"; given as bedrooms, "1 bedroom" (the importer makes it 2
  // rooms, as docs/feed-formats.md says) would be wrong, so such rows give rooms.
  if (p.kind === 'room' && c.rooms === 'bedrooms') {
    rooms = '1';
    bedrooms = '1';
  }

  const coord = (x: number) => (moselle ? decimalComma(x) : String(x));
  const fields = [
    c.externalId,
    offer,
    KIND_WORDS[p.kind],
    c.title,
    price,
    area,
    rooms,
    bedrooms,
    c.place.town ?? '',
    c.place.postcode ?? '',
    c.coords ? coord(c.coords.lat) : '',
    c.coords ? coord(c.coords.lng) : '',
    imageUrls(c).join('|'),
    students === 'empty' && !p.students ? '' : students === 'caps' ? (p.students ? 'OUI' : 'NON') : p.students ? 'oui' : 'non',
    localTime(c.listedAt).toFormat('dd/MM/yyyy HH:mm'),
    link(agency, c),
  ];
  if (moselle) fields.push(agent);
  // A line cut off by the export in its title (a record that stops before its price).
  const shown = c.problem === 'columns' ? fields.slice(0, 4) : fields;
  return shown.map((f, i) => quote(f, moselle && (i === 3 || i === 4 || i === 5))).join(';');
}

function quote(s: string, always: boolean): string {
  if (!always && !/[;"\r\n]/.test(s)) return s;
  return `"${s.replace(/"/g, '""')}"`;
}

// --- json -------------------------------------------------------------------------------

const OFFER_CODES = { RENT: 'rent', SALE: 'sale', FLATSHARE: 'flatshare', SUBLET: 'sublet' } as const;

function renderJson(agency: Agency, items: FeedItem[], at: number): string {
  if (agency.name === 'minett-homes') {
    // One listing a line, local times without an offset, plain-string media, strings for
    // some amounts: another CRM, another export.
    const head = { agency: agency.display_name, generated_at: localTime(at).toFormat("yyyy-MM-dd'T'HH:mm:ss"), mode: 'full' };
    const body = items.map((item) => '    ' + JSON.stringify(minettListing(agency, item, at)));
    return `${JSON.stringify(head).slice(0, -1)},\n  "listings": [\n${body.join(',\n')}\n  ]\n}\n`;
  }
  const doc = {
    agency: agency.display_name,
    generated_at: localTime(at).toISO({ suppressMilliseconds: true }),
    mode: 'full',
    listings: items.map((item) => capitalListing(agency, item, at)),
  };
  return JSON.stringify(doc, null, 2) + '\n';
}

function capitalListing(agency: Agency, { p, c, status }: FeedItem, at: number): Record<string, unknown> {
  const r = new Rng(c.style);
  const titleObject = r.chance(0.6) || c.altTitle !== null;
  const weekly = (p.type === 'SUBLET' || p.type === 'FLATSHARE') && r.chance(0.4);
  const street = r.chance(0.6) ? `${r.int(1, 180)}, ${r.pick(['rue de la Gare', 'route d’Arlon', 'avenue de la Liberté', 'rue Principale', 'boulevard Royal', 'rue de Luxembourg', 'rue des Jardins'])}` : null;
  const utc = r.chance(0.5);
  const currency = r.pick(['CHF', 'USD', 'GBP']);
  const badArea = r.pick(['ca. 80', 250000, -30] as const);
  const badOffer = r.pick(['commercial', 'parking', 'office']);
  const country = r.pick(['FR', 'BE', 'DE']);

  const listing: Record<string, unknown> = {
    ref: c.externalId,
    offer: c.problem === 'offer' ? badOffer : OFFER_CODES[p.type],
    status,
  };
  if (titleObject) {
    const title: Record<string, string> = { [c.lang]: c.title };
    if (c.altTitle) title[c.altTitle.lang] = c.altTitle.text;
    listing.title = title;
  } else listing.title = c.title;
  if (c.problem === 'price') listing.price = null;
  else {
    const monthly = copyPrice(p, c, at);
    listing.price = weekly
      ? { amount: Math.round((monthly * 12) / 52), currency: 'EUR', period: 'week' }
      : { amount: monthly, currency: c.problem === 'currency' ? currency : 'EUR', period: 'month' };
  }
  if (c.problem === 'area') listing.surface_m2 = badArea;
  else if (c.area !== null) listing.surface_m2 = c.area;
  if (c.rooms !== 'none') listing.bedrooms = p.kind === 'room' ? 0 : p.rooms - 1;
  const address: Record<string, unknown> = {};
  if (street) address.street = street;
  if (c.place.town) address.locality = c.place.town;
  if (c.place.postcode) address.postcode = c.place.postcode;
  address.country = c.problem === 'country' ? country : 'LU';
  listing.address = address;
  listing.geo = c.coords ? { lat: c.coords.lat, lon: c.coords.lng } : null;
  const media: { type: string; url: string }[] = imageUrls(c).map((url) => ({ type: 'photo', url }));
  if (c.attachment === 'video') media.push({ type: 'video', url: `https://cdn.${agency.name}.example/${c.externalId.toLowerCase()}/tour.mp4` });
  listing.media = media;
  listing.students = p.students;
  const published = localTime(c.listedAt);
  listing.published_at = utc ? published.toUTC().toISO({ suppressMilliseconds: true }) : published.toISO({ suppressMilliseconds: true });
  listing.link = link(agency, c);
  return listing;
}

function minettListing(agency: Agency, { p, c, status }: FeedItem, at: number): Record<string, unknown> {
  const r = new Rng(c.style);
  const amountAsText = r.chance(0.3);
  const currency = r.pick(['CHF', 'GBP']);
  const badArea = r.pick(['ca. 80', 250000] as const);
  const badOffer = r.pick(['commercial', 'garage']);
  const country = r.pick(['France', 'Belgique', 'Deutschland']);

  const listing: Record<string, unknown> = {
    ref: c.externalId,
    offer: c.problem === 'offer' ? badOffer : OFFER_CODES[p.type],
    status,
    title: c.title,
  };
  if (c.problem !== 'price') {
    const v = copyPrice(p, c, at);
    listing.price = { amount: amountAsText ? thousands(v, ' ') : v, currency: c.problem === 'currency' ? currency : 'EUR' };
  }
  if (c.problem === 'area') listing.surface_m2 = badArea;
  else if (c.area !== null) listing.surface_m2 = c.area;
  if (c.rooms === 'rooms' || c.rooms === 'half' || p.kind === 'room') listing.rooms = p.rooms;
  else if (c.rooms === 'bedrooms') listing.bedrooms = p.rooms - 1;
  const address: Record<string, unknown> = {};
  if (c.place.town) address.commune = c.place.town;
  if (c.place.quarter) address.locality = c.place.quarter;
  if (c.place.postcode) address.postcode = c.place.postcode;
  address.country = c.problem === 'country' ? country : 'Luxembourg';
  listing.address = address;
  if (c.coords) listing.geo = { lat: c.coords.lat, lng: c.coords.lng };
  listing.media = imageUrls(c);
  listing.students = p.students;
  listing.published_at = localTime(c.listedAt).toFormat("yyyy-MM-dd'T'HH:mm:ss");
  listing.link = link(agency, c);
  return listing;
}
