import type { ListingType } from '../../../src/domain/listing.js';

// One listing as an agency's software holds it, before it is written in that agency's
// format. Every value is what the agency states (its own rounding, its own area, its own
// place name), not the truth; the writers below only lay it out as docs/feed-formats.md describes.
// Text fields (`priceText`, `areaText`, `roomsText`) win over the numbers when given: they
// are the cell as typed.
export interface AgencyRecord {
  ref: string;
  type: ListingType;
  kind: 'studio' | 'flat' | 'house' | 'room';
  title: string | Record<string, string>;
  price: number;
  priceText?: string;
  // openimmo: the rent is given as warmmiete (charges included) and no kaltmiete.
  warmRent?: boolean;
  // json: a weekly price (the amount is then per week).
  weekly?: boolean;
  area: number | null;
  areaText?: string;
  rooms?: number | null;
  roomsText?: string;
  bedrooms?: number | null;
  // openimmo: ort; csv: Localité; json: address.locality (or address.commune when `commune`).
  town?: string | null;
  // openimmo: regionaler_zusatz; json: address.locality beside address.commune.
  quarter?: string | null;
  // json only: the town is given as address.commune (the quarter then as address.locality).
  townIsCommune?: boolean;
  postcode?: string | null;
  street?: string | null;
  lat?: number | null;
  lng?: number | null;
  // Digits after the decimal point of the coordinates as the agency writes them.
  coordDigits?: number;
  images: string[];
  students: boolean | null;
  // Creation date (csv, json) or last change (openimmo stand_vom).
  date: Date;
  link?: string | null;
}

export type FeedFormat = 'openimmo' | 'csv' | 'json';

export interface FeedFile {
  source: string;
  format: FeedFormat;
  fileName: string;
  text: string;
  records: number;
}

const xmlEscape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

const coord = (v: number, digits: number, comma = false) => {
  const s = v.toFixed(digits);
  return comma ? s.replace('.', ',') : s;
};

function hasCoords(r: AgencyRecord): r is AgencyRecord & { lat: number; lng: number } {
  return typeof r.lat === 'number' && typeof r.lng === 'number';
}

function titleText(t: AgencyRecord['title']): string {
  if (typeof t === 'string') return t;
  return t.de ?? t.fr ?? t.en ?? Object.values(t)[0] ?? '';
}

function isoDate(d: Date): string {
  return d.toISOString().slice(0, 10);
}

// OpenImmo 1.2.x subset (docs/feed-formats.md section 1).
export function writeOpenImmo(records: AgencyRecord[], opts: { firma: string; anbieternr: string }): string {
  const out: string[] = [];
  out.push('<?xml version="1.0" encoding="UTF-8"?>');
  out.push('<openimmo>');
  out.push(`  <uebertragung art="OFFLINE" umfang="VOLL" modus="NEW" version="1.2.7" sendersoftware="EvalSoft" techn_email="it@example.lu"/>`);
  out.push('  <anbieter>');
  out.push(`    <anbieternr>${xmlEscape(opts.anbieternr)}</anbieternr>`);
  out.push(`    <firma>${xmlEscape(opts.firma)}</firma>`);
  for (const r of records) {
    const sale = r.type === 'SALE';
    const objektart =
      r.type === 'FLATSHARE'
        ? '<zimmer zimmertyp="ZIMMER"/>'
        : r.kind === 'house'
          ? '<haus haustyp="EINFAMILIENHAUS"/>'
          : `<wohnung wohnungtyp="${r.kind === 'studio' ? 'APARTMENT' : 'ETAGE'}"/>`;
    out.push('    <immobilie>');
    out.push('      <objektkategorie>');
    out.push('        <nutzungsart WOHNEN="true" GEWERBE="false"/>');
    out.push(`        <vermarktungsart KAUF="${sale}" MIETE_PACHT="${!sale}"/>`);
    out.push(`        <objektart>${objektart}</objektart>`);
    out.push('      </objektkategorie>');
    out.push('      <geo>');
    if (r.postcode) out.push(`        <plz>${xmlEscape(r.postcode)}</plz>`);
    if (r.town) out.push(`        <ort>${xmlEscape(r.town)}</ort>`);
    if (r.quarter) out.push(`        <regionaler_zusatz>${xmlEscape(r.quarter)}</regionaler_zusatz>`);
    if (r.street) out.push(`        <strasse>${xmlEscape(r.street)}</strasse>`);
    if (hasCoords(r)) {
      const d = r.coordDigits ?? 6;
      out.push(`        <geokoordinaten breitengrad="${coord(r.lat, d)}" laengengrad="${coord(r.lng, d)}"/>`);
    }
    out.push('        <land iso_land="LUX"/>');
    out.push('      </geo>');
    out.push('      <preise>');
    const price = r.priceText ?? r.price.toFixed(2);
    if (sale) out.push(`        <kaufpreis>${xmlEscape(price)}</kaufpreis>`);
    else if (r.warmRent) out.push(`        <warmmiete>${xmlEscape(price)}</warmmiete>`);
    else out.push(`        <kaltmiete>${xmlEscape(price)}</kaltmiete>`);
    out.push('        <waehrung iso_waehrung="EUR"/>');
    out.push('      </preise>');
    const area = r.areaText ?? (r.area === null ? null : r.area.toFixed(2));
    const rooms = r.roomsText ?? (r.rooms === null || r.rooms === undefined ? null : String(r.rooms));
    if (area !== null || rooms !== null) {
      out.push('      <flaechen>');
      if (area !== null) out.push(`        <wohnflaeche>${xmlEscape(area)}</wohnflaeche>`);
      if (rooms !== null) out.push(`        <anzahl_zimmer>${xmlEscape(rooms)}</anzahl_zimmer>`);
      out.push('      </flaechen>');
    }
    out.push(`      <freitexte><objekttitel>${xmlEscape(titleText(r.title))}</objekttitel></freitexte>`);
    if (r.images.length) {
      out.push('      <anhaenge>');
      for (const url of r.images) out.push(`        <anhang location="REMOTE" gruppe="BILD"><daten><pfad>${xmlEscape(url)}</pfad></daten></anhang>`);
      out.push('      </anhaenge>');
    }
    if (r.students !== null || r.type === 'SUBLET') {
      out.push('      <verwaltung_objekt>');
      if (r.type === 'SUBLET') out.push('        <user_defined_simplefield feldname="untervermietung">1</user_defined_simplefield>');
      if (r.students !== null) out.push(`        <user_defined_simplefield feldname="studenten">${r.students ? 1 : 0}</user_defined_simplefield>`);
      out.push('      </verwaltung_objekt>');
    }
    out.push('      <verwaltung_techn>');
    out.push(`        <objektnr_extern>${xmlEscape(r.ref)}</objektnr_extern>`);
    out.push('        <aktion aktionart="CHANGE"/>');
    out.push(`        <stand_vom>${isoDate(r.date)}</stand_vom>`);
    out.push('      </verwaltung_techn>');
    out.push('    </immobilie>');
  }
  out.push('  </anbieter>');
  out.push('</openimmo>');
  return out.join('\n') + '\n';
}

const CSV_HEADER =
  "Référence;Type d'offre;Type de bien;Titre;Prix;Surface;Pièces;Chambres;Localité;Code postal;Latitude;Longitude;Photos;Étudiants;Date de création;Lien";
const CSV_OFFER: Record<ListingType, string> = { RENT: 'Location', SALE: 'Vente', FLATSHARE: 'Colocation', SUBLET: 'Sous-location' };
const CSV_KIND: Record<AgencyRecord['kind'], string> = { studio: 'Studio', flat: 'Appartement', house: 'Maison', room: 'Chambre' };

function csvCell(s: string | null | undefined): string {
  if (s === null || s === undefined) return '';
  return /[;"\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

// "21/11/2026 14:03", wall time in Luxembourg (CET/CEST: the eval dates are in winter and
// autumn; the offset is computed, not assumed).
function luxWallTime(d: Date): string {
  const parts = new Intl.DateTimeFormat('en-GB', {
    timeZone: 'Europe/Luxembourg', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', hourCycle: 'h23',
  }).formatToParts(d);
  const get = (t: string) => parts.find((p) => p.type === t)!.value;
  return `${get('day')}/${get('month')}/${get('year')} ${get('hour')}:${get('minute')}`;
}

// Agency-software CSV (docs/feed-formats.md section 2). `agentColumn` adds the extra trailing column
// some exports carry; `bom` and `crlf` are how Windows software writes files.
export function writeCsv(records: AgencyRecord[], opts: { bom?: boolean; crlf?: boolean; agentColumn?: boolean; coordComma?: boolean } = {}): string {
  const eol = opts.crlf ? '\r\n' : '\n';
  const lines = [CSV_HEADER + (opts.agentColumn ? ';Agent' : '')];
  for (const r of records) {
    const d = r.coordDigits ?? 5;
    const cells = [
      r.ref,
      CSV_OFFER[r.type],
      CSV_KIND[r.kind],
      titleText(r.title),
      r.priceText ?? String(r.price),
      r.areaText ?? (r.area === null ? '' : String(r.area)),
      r.roomsText ?? (r.rooms === null || r.rooms === undefined ? '' : String(r.rooms)),
      r.bedrooms === null || r.bedrooms === undefined ? '' : String(r.bedrooms),
      r.town ?? '',
      r.postcode ?? '',
      hasCoords(r) ? coord(r.lat, d, opts.coordComma) : '',
      hasCoords(r) ? coord(r.lng, d, opts.coordComma) : '',
      r.images.join('|'),
      r.students === null ? '' : r.students ? 'oui' : 'non',
      luxWallTime(r.date),
      r.link ?? '',
    ];
    if (opts.agentColumn) cells.push('');
    lines.push(cells.map(csvCell).join(';'));
  }
  return (opts.bom ? '\ufeff' : '') + lines.join(eol) + eol;
}

export const JSON_OFFER: Record<ListingType, string> = { RENT: 'rent', SALE: 'sale', FLATSHARE: 'flatshare', SUBLET: 'sublet' };

// A record's address object in an agency CRM's JSON (docs/feed-formats.md section 3).
export function jsonAddress(r: Pick<AgencyRecord, 'street' | 'townIsCommune' | 'town' | 'quarter' | 'postcode'>): Record<string, string> {
  const address: Record<string, string> = {};
  if (r.street) address.street = r.street;
  if (r.townIsCommune) {
    if (r.town) address.commune = r.town;
    if (r.quarter) address.locality = r.quarter;
  } else if (r.town) address.locality = r.town;
  if (r.postcode) address.postcode = r.postcode;
  address.country = 'LU';
  return address;
}

// Agency CRM export (docs/feed-formats.md section 3).
export function writeJson(records: AgencyRecord[], opts: { agency: string; generatedAt: Date }): string {
  const listings = records.map((r) => {
    const address = jsonAddress(r);
    const item: Record<string, unknown> = {
      ref: r.ref,
      offer: JSON_OFFER[r.type],
      status: 'available',
      title: r.title,
      price: { amount: r.price, currency: 'EUR', period: r.weekly ? 'week' : 'month' },
    };
    if (r.area !== null) item.surface_m2 = r.area;
    if (r.rooms !== null && r.rooms !== undefined) item.rooms = r.rooms;
    if (r.bedrooms !== null && r.bedrooms !== undefined) item.bedrooms = r.bedrooms;
    item.address = address;
    const d = r.coordDigits ?? 6;
    item.geo = hasCoords(r) ? { lat: Number(r.lat.toFixed(d)), lon: Number(r.lng.toFixed(d)) } : null;
    item.media = r.images.map((url) => ({ type: 'photo', url }));
    if (r.students !== null) item.students = r.students;
    item.published_at = r.date.toISOString().replace('.000Z', 'Z');
    if (r.link) item.link = r.link;
    return item;
  });
  return JSON.stringify({ agency: opts.agency, generated_at: opts.generatedAt.toISOString(), mode: 'full', listings }, null, 1) + '\n';
}
