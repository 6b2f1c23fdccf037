// The twelfth evaluation set (the sixth kept here; README.md beside this file): written at stop 45
// by an outside session ("feeds12") that saw neither the rule nor the other sets nor the dedup
// sections of docs/feed-operators.md, kept as it wrote it but for the paths (the reference data
// of the repository's data/, the folder to write to as an argument). An independent generator
// of agency feeds for Luxembourg, with known truth.
// Usage: npx tsx test/ingest/eval/twelfth-set.ts OUTDIR   (SEED=12345 by default; the probe also ran 777)
//        then npm run eval:dedup -- --sets dir:OUTDIR
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const OUT = process.argv[2] ?? 'test-output/dedup-eval/twelfth-feeds';
fs.mkdirSync(OUT, { recursive: true });

// ---------- PRNG ----------
let seed = Number(process.env.SEED ?? 12345);
function rnd(): number { seed |= 0; seed = (seed + 0x6d2b79f5) | 0; let t = Math.imul(seed ^ (seed >>> 15), 1 | seed); t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t; return ((t ^ (t >>> 14)) >>> 0) / 4294967296; }
const ri = (a: number, b: number) => a + Math.floor(rnd() * (b - a + 1));
const rf = (a: number, b: number) => a + rnd() * (b - a);
const pick = <T>(a: T[]): T => a[Math.floor(rnd() * a.length)];
const chance = (p: number) => rnd() < p;
function shuffle<T>(a: T[]): T[] { for (let i = a.length - 1; i > 0; i--) { const j = Math.floor(rnd() * (i + 1)); [a[i], a[j]] = [a[j], a[i]]; } return a; }
function weighted<T>(items: T[], w: number[]): T { const s = w.reduce((x, y) => x + y, 0); let r = rnd() * s; for (let i = 0; i < items.length; i++) { r -= w[i]; if (r <= 0) return items[i]; } return items[items.length - 1]; }

// ---------- reference data ----------
function readCsv(f: string): Record<string, string>[] {
  const lines = fs.readFileSync(f, 'utf8').replace(/^\uFEFF/, '').split(/\r?\n/).filter(Boolean);
  const parse = (l: string) => { const out: string[] = []; let cur = ''; let q = false; for (const ch of l) { if (ch === '"') q = !q; else if (ch === ',' && !q) { out.push(cur); cur = ''; } else cur += ch; } out.push(cur); return out; };
  const h = parse(lines[0]);
  return lines.slice(1).map((l) => { const v = parse(l); const o: Record<string, string> = {}; h.forEach((k, i) => (o[k] = v[i] ?? '')); return o; });
}
const D = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../../data');
const communes = readCsv(`${D}/communes.csv`);
const localities = readCsv(`${D}/localities.csv`);
const rents = readCsv(`${D}/rents.csv`);
const communeByName = new Map(communes.map((c) => [c.name, c]));
const rentByCommune = new Map(rents.map((r) => [r.commune, r]));

// locality names that are unique (no other locality or commune bears the name elsewhere)
const nameCount = new Map<string, Set<string>>();
const addName = (n: string, commune: string) => { const k = n.toLowerCase(); if (!nameCount.has(k)) nameCount.set(k, new Set()); nameCount.get(k)!.add(commune); };
for (const l of localities) { addName(l.locality, l.commune); for (const a of l.alt_names.split(';').filter(Boolean)) addName(a, l.commune); }
for (const c of communes) { addName(c.name, c.name); addName(c.name_lb, c.name); addName(c.name_de, c.name); }
const SKIP = new Set(['park', 'grenz', 'sommet', 'brill', 'uecht', 'centre', 'al esch', 'universitéit', 'bruch']);
const usableLocs = localities.filter((l) => {
  if (SKIP.has(l.locality.toLowerCase())) return false;
  if (l.locality.includes('/')) return true; // city quarters with two names, handled below
  return nameCount.get(l.locality.toLowerCase())!.size === 1 && l.lat && l.lng;
});
const locsByCommune = new Map<string, Record<string, string>[]>();
for (const l of usableLocs) { if (!locsByCommune.has(l.commune)) locsByCommune.set(l.commune, []); locsByCommune.get(l.commune)!.push(l); }

function num(s: string | undefined): number | null { if (!s) return null; const v = Number(s); return Number.isFinite(v) && v > 0 ? v : null; }
function median(a: number[]) { const s = [...a].sort((x, y) => x - y); return s[Math.floor(s.length / 2)]; }
const natAptRentM2 = median(rents.map((r) => num(r.apt_rent_avg_eur_m2_month)).filter((x): x is number => x !== null));
const natAptSaleM2 = median(rents.map((r) => num(r.apt_sale_advertised_avg_eur_m2)).filter((x): x is number => x !== null));
const natHouseSaleM2 = median(rents.map((r) => num(r.house_sale_advertised_avg_eur_m2)).filter((x): x is number => x !== null));

// ---------- geo helpers ----------
function offset(lat: number, lng: number, meters: number, bearingDeg: number) {
  const b = (bearingDeg * Math.PI) / 180; const dLat = (meters * Math.cos(b)) / 111320; const dLng = (meters * Math.sin(b)) / (111320 * Math.cos((lat * Math.PI) / 180));
  return { lat: lat + dLat, lng: lng + dLng };
}
const r6 = (x: number) => Math.round(x * 1e6) / 1e6;

// ---------- properties ----------
type Kind = 'apartment' | 'house';
type Group = 'normal' | 'sibling' | 'lookalike' | 'twin';
interface Property {
  pid: string; kind: Kind; type: 'RENT' | 'SALE'; commune: string; loc: Record<string, string>;
  lat: number; lng: number; rooms: number; area: number; usableDelta: number; price: number; street: string; houseNo: number;
  group: Group; groupId: string | null; agencies: string[];
}
const STREETS = ['Rue de la Gare', 'Rue Principale', 'Route d\'Arlon', 'Rue des Champs', 'Rue de l\'Église', 'Avenue de la Liberté', 'Rue du Moulin', 'Rue des Jardins', 'Rue de Luxembourg', 'Rue du Parc', 'Rue des Prés', 'Rue de la Forêt', 'Boulevard Royal', 'Rue des Roses', 'Rue Neuve', 'Rue du Château'];

const communeWeights = communes.map((c) => (c.name === 'Luxembourg' ? 3 * Number(c.population) : Number(c.population)));
function pickPlace(): { commune: string; loc: Record<string, string> } {
  for (;;) { const c = weighted(communes, communeWeights); const ls = locsByCommune.get(c.name); if (ls && ls.length) return { commune: c.name, loc: pick(ls) }; }
}
function priceFor(kind: Kind, type: 'RENT' | 'SALE', commune: string, area: number): number {
  const r = rentByCommune.get(commune);
  if (type === 'RENT') { const m2 = num(r?.apt_rent_avg_eur_m2_month) ?? natAptRentM2 * 0.9; return area * m2 * (kind === 'house' ? 0.85 : 1) * rf(0.85, 1.15); }
  const m2 = kind === 'house' ? num(r?.house_sale_advertised_avg_eur_m2) ?? natHouseSaleM2 : num(r?.apt_sale_advertised_avg_eur_m2) ?? natAptSaleM2;
  return area * m2 * rf(0.85, 1.15);
}
let pidN = 0;
const props: Property[] = [];
function newProp(over: Partial<Property> = {}): Property {
  const place = over.loc ? { commune: over.commune!, loc: over.loc } : pickPlace();
  const kind: Kind = over.kind ?? (chance(0.7) ? 'apartment' : 'house');
  const type = over.type ?? (chance(0.55) ? 'RENT' : 'SALE');
  const rooms = over.rooms ?? (kind === 'apartment' ? weighted([1, 2, 3, 4, 5], [10, 35, 35, 15, 5]) : weighted([4, 5, 6, 7], [30, 35, 25, 10]));
  const area = over.area ?? Math.round((kind === 'apartment' ? (rooms === 1 ? rf(28, 45) : rooms * rf(22, 30)) : rf(110, 240)) * 10) / 10;
  const radius = place.loc.kind === 'locality' ? 700 : 550;
  const pt = over.lat !== undefined ? { lat: over.lat, lng: over.lng! } : offset(Number(place.loc.lat), Number(place.loc.lng), rf(30, radius), rf(0, 360));
  const price = over.price ?? priceFor(kind, type, place.commune, area);
  const p: Property = {
    pid: `P${String(++pidN).padStart(5, '0')}`, kind, type, commune: place.commune, loc: place.loc, lat: pt.lat, lng: pt.lng, rooms, area,
    usableDelta: Math.round(rf(0.5, 1.9) * 10) / 10, price, street: over.street ?? pick(STREETS), houseNo: over.houseNo ?? ri(1, 180),
    group: over.group ?? 'normal', groupId: over.groupId ?? null, agencies: [],
  };
  props.push(p); return p;
}

// hard negatives
let gid = 0;
// sibling flats in one building: same rooms, areas 1-5 m2 apart, prices 2-6% apart
for (let g = 0; g < 150; g++) {
  const n = g < 120 ? 2 : 3; const id = `SIB${++gid}`;
  const base = newProp({ kind: 'apartment', rooms: weighted([2, 3, 4], [40, 45, 15]), group: 'sibling', groupId: id });
  for (let k = 1; k < n; k++) {
    const area = Math.round((base.area + (chance(0.5) ? 1 : -1) * rf(1, 5) * (k === 2 ? 1.0 : 1)) * 10) / 10;
    const price = base.price * (1 + (chance(0.5) ? 1 : -1) * rf(0.02, 0.06));
    newProp({ kind: 'apartment', type: base.type, commune: base.commune, loc: base.loc, lat: base.lat, lng: base.lng, rooms: base.rooms, area, price, street: base.street, houseNo: base.houseNo, group: 'sibling', groupId: id });
  }
}
// look-alike flats in one quarter: same rooms, areas within 3 m2, prices within 4%, 150-500 m apart
for (let g = 0; g < 60; g++) {
  const id = `LOOK${++gid}`;
  const cityLocs = (locsByCommune.get('Luxembourg') ?? []).concat(locsByCommune.get('Esch-sur-Alzette') ?? []);
  const loc = pick(cityLocs);
  const base = newProp({ kind: 'apartment', commune: loc.commune, loc, rooms: weighted([1, 2, 3], [20, 50, 30]), group: 'lookalike', groupId: id });
  const pt = offset(base.lat, base.lng, rf(150, 500), rf(0, 360));
  newProp({ kind: 'apartment', type: base.type, commune: base.commune, loc, lat: pt.lat, lng: pt.lng, rooms: base.rooms, area: Math.round((base.area + rf(-3, 3)) * 10) / 10, price: base.price * (1 + rf(-0.04, 0.04)), group: 'lookalike', groupId: id });
}
// twin houses: 12-25 m apart, same rooms, area same or 1 m2 apart, prices within 3%
for (let g = 0; g < 50; g++) {
  const id = `TWIN${++gid}`;
  const base = newProp({ kind: 'house', type: chance(0.8) ? 'SALE' : 'RENT', group: 'twin', groupId: id });
  const pt = offset(base.lat, base.lng, rf(12, 25), rf(0, 360));
  newProp({ kind: 'house', type: base.type, commune: base.commune, loc: base.loc, lat: pt.lat, lng: pt.lng, rooms: base.rooms, area: chance(0.5) ? base.area : base.area + (chance(0.5) ? 1 : -1), price: base.price * (1 + rf(-0.03, 0.03)), street: base.street, houseNo: base.houseNo + 2, group: 'twin', groupId: id });
}
while (props.length < 2000) newProp();

// ---------- agencies ----------
interface Agency { source: string; format: 'openimmo' | 'csv' | 'json'; prefix: string }
const AG: Agency[] = [
  { source: 'probe-alpha', format: 'openimmo', prefix: 'ALP' },
  { source: 'probe-bravo', format: 'openimmo', prefix: 'BRV' },
  { source: 'probe-charlie', format: 'csv', prefix: 'CHA' },
  { source: 'probe-delta', format: 'csv', prefix: 'DLT' },
  { source: 'probe-echo', format: 'json', prefix: 'ECH' },
];
// multi-listed: 500 properties, 350 by two agencies, 150 by three
const order = shuffle(props.map((_, i) => i));
const multi = new Set(order.slice(0, 500));
order.slice(0, 500).forEach((i, k) => { props[i].agencies = shuffle(AG.map((a) => a.source)).slice(0, k < 350 ? 2 : 3); });
// single-listed: siblings/groups get distinct agencies (rotation) so that hard negatives cross sources
const groupSeen = new Map<string, string[]>();
for (const p of props) {
  if (p.agencies.length) { if (p.groupId) groupSeen.set(p.groupId, [...(groupSeen.get(p.groupId) ?? []), ...p.agencies]); continue; }
  if (p.groupId) {
    const used = groupSeen.get(p.groupId) ?? [];
    const free = AG.map((a) => a.source).filter((s) => !used.includes(s));
    const s = free.length ? pick(free) : pick(AG).source; p.agencies = [s]; groupSeen.set(p.groupId, [...used, s]);
  } else p.agencies = [pick(AG).source];
}

// ---------- listing records ----------
interface Rec {
  pid: string; source: string; ext: string; type: 'RENT' | 'SALE'; kind: Kind; price: number; area: number | null; rooms: number | null; bedrooms: number | null;
  roomsField: 'rooms' | 'bedrooms' | 'bedrooms-as-rooms' | 'none'; place: string; ort?: string; zusatz?: string; lat: number | null; lng: number | null; coordMode: string;
  title: string; created: Date; street: string; noise: string[];
}
const recs: Rec[] = [];
const counters = new Map<string, number>();
function nextExt(a: Agency) { const n = (counters.get(a.source) ?? 0) + 1; counters.set(a.source, n); return n; }

function roundTo(x: number, step: number) { return Math.round(x / step) * step; }
function altName(l: Record<string, string>): string | null { const a = l.alt_names.split(';').filter(Boolean); return a.length ? a[0] : null; }
function locName(l: Record<string, string>): string { return l.locality.includes('/') ? l.locality.split('/')[0].trim() : l.locality; }

for (const p of props) {
  const isMulti = p.agencies.length > 1;
  const missingCoordIdx = isMulti && chance(1 / 3) ? ri(0, p.agencies.length - 1) : -1;
  const staleIdx = isMulti && chance(0.15) ? ri(0, p.agencies.length - 1) : -1; // price cut not passed on
  const com = communeByName.get(p.commune)!;
  p.agencies.forEach((src, idx) => {
    const a = AG.find((x) => x.source === src)!;
    const noise: string[] = [];
    // price
    let price = p.price * (1 + (isMulti ? rf(-0.012, 0.012) : 0));
    if (idx === staleIdx) { price = p.price * rf(1.02, 1.028); noise.push('price-cut-not-passed'); }
    const step = p.type === 'SALE' ? ({ 'probe-alpha': 1000, 'probe-bravo': 5000, 'probe-charlie': 5000, 'probe-delta': 1000, 'probe-echo': 100 } as Record<string, number>)[src]
      : ({ 'probe-alpha': 10, 'probe-bravo': 100, 'probe-charlie': 50, 'probe-delta': 10, 'probe-echo': 1 } as Record<string, number>)[src];
    price = roundTo(price, step);
    // area
    let area: number | null;
    const v = rnd();
    if (src === 'probe-alpha') area = Math.round(p.area * 10) / 10;
    else if (src === 'probe-bravo') area = Math.round(v < 0.5 ? p.area : p.area + p.usableDelta);
    else if (src === 'probe-charlie') area = v < 0.08 ? null : Math.floor(p.area);
    else if (src === 'probe-delta') area = v < 0.6 ? Math.round((p.area + p.usableDelta) * 10) / 10 : Math.round(p.area);
    else area = Math.round(p.area * 2) / 2;
    if (area !== null && Math.abs(area - p.area) > 0.6) noise.push('usable-area');
    if (area === null) noise.push('no-area');
    // rooms
    const bedrooms = Math.max(0, p.rooms - 1);
    let rooms: number | null = null; let beds: number | null = null; let roomsField: Rec['roomsField'];
    if (src === 'probe-alpha') { rooms = p.rooms; roomsField = 'rooms'; }
    else if (src === 'probe-bravo') { if (chance(0.6)) { rooms = p.rooms; roomsField = 'rooms'; } else { roomsField = 'none'; noise.push('no-rooms'); } }
    else if (src === 'probe-charlie') { beds = bedrooms; roomsField = 'bedrooms'; }
    else if (src === 'probe-delta') { if (chance(0.15) && p.rooms > 1) { rooms = bedrooms; roomsField = 'bedrooms-as-rooms'; noise.push('bedrooms-in-rooms-field'); } else { rooms = p.rooms; roomsField = 'rooms'; } }
    else { beds = bedrooms; roomsField = 'bedrooms'; }
    // place
    const ln = locName(p.loc); const alt = altName(p.loc); const isCity = p.commune === 'Luxembourg';
    let place = ''; let ort: string | undefined; let zusatz: string | undefined;
    if (src === 'probe-alpha') { ort = com.name_de || com.name; zusatz = ln; place = `${ort} / ${zusatz}`; }
    else if (src === 'probe-bravo') {
      if (chance(0.2)) { ort = com.name_lb || com.name; noise.push('no-locality'); }
      else { ort = alt && chance(0.6) ? alt : ln; if (isCity) { zusatz = ort; ort = com.name_lb; } }
      place = [ort, zusatz].filter(Boolean).join(' / ');
    } else if (src === 'probe-charlie') { place = isCity ? `Luxembourg-${ln}` : chance(0.3) ? ln.toUpperCase() : ln; }
    else if (src === 'probe-delta') { if (chance(0.15)) { place = com.name_lb; noise.push('no-locality'); } else place = chance(0.4) && alt ? alt : ln; }
    else { place = alt && chance(0.6) ? alt : ln; }
    if (alt && place.includes(alt)) noise.push('alt-name');
    // coordinates
    const modes: Record<string, [string[], number[]]> = {
      'probe-alpha': [['building', 'street', 'none'], [70, 20, 10]],
      'probe-bravo': [['street', 'centroid', 'none'], [50, 20, 30]],
      'probe-charlie': [['centroid', 'building', 'none'], [40, 30, 30]],
      'probe-delta': [['building', 'street', 'none'], [50, 30, 20]],
      'probe-echo': [['building', 'none'], [60, 40]],
    };
    let mode = weighted(modes[src][0], modes[src][1]);
    if (isMulti) { if (idx === missingCoordIdx) mode = 'none'; else if (mode === 'none') mode = weighted(modes[src][0].filter((m) => m !== 'none'), modes[src][1].slice(0, -1)); }
    let lat: number | null = null; let lng: number | null = null;
    if (mode === 'building') { const q = offset(p.lat, p.lng, rf(0, 5), rf(0, 360)); lat = q.lat; lng = q.lng; }
    else if (mode === 'street') { const q = offset(p.lat, p.lng, rf(20, 150), rf(0, 360)); lat = q.lat; lng = q.lng; }
    else if (mode === 'centroid') { lat = Number(p.loc.lat); lng = Number(p.loc.lng); }
    noise.push(`coords-${mode}`);
    const rk = p.kind === 'apartment' ? (p.rooms === 1 ? 'Studio' : `Appartement ${bedrooms} chambre${bedrooms > 1 ? 's' : ''}`) : `Maison ${bedrooms} chambres`;
    const title = src === 'probe-alpha' || src === 'probe-bravo' ? (p.kind === 'apartment' ? `${p.rooms}-Zimmer-Wohnung in ${ln}` : `Einfamilienhaus in ${ln}`) : `${rk} - ${ln}`;
    const created = new Date(Date.UTC(2026, 9, 1) + ri(0, 55 * 86400) * 1000);
    recs.push({ pid: p.pid, source: src, ext: '', type: p.type, kind: p.kind, price, area, rooms, bedrooms: beds, roomsField, place, ort, zusatz, lat: lat === null ? null : r6(lat), lng: lng === null ? null : r6(lng), coordMode: mode, title, created, street: `${p.houseNo} ${p.street}`, noise });
  });
}
// external ids in shuffled order per agency
shuffle(recs);
for (const r of recs) { const a = AG.find((x) => x.source === r.source)!; r.ext = `${a.prefix}-${String(nextExt(a) * 7 + 1000)}`; }

// ---------- writers ----------
const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
function writeOpenImmo(a: Agency, rs: Rec[]) {
  const parts = [`<?xml version="1.0" encoding="UTF-8"?>\n<openimmo>\n  <uebertragung art="OFFLINE" umfang="VOLL" modus="NEW" version="1.2.7" sendersoftware="ProbeSoft"/>\n  <anbieter>\n    <anbieternr>${a.prefix}</anbieternr>\n`];
  for (const r of rs) {
    const obj = r.kind === 'apartment' ? '<wohnung wohnungtyp="ETAGE"/>' : '<haus haustyp="EINFAMILIENHAUS"/>';
    const priceEl = r.type === 'RENT' ? `<kaltmiete>${r.price.toFixed(2)}</kaltmiete>` : `<kaufpreis>${r.price}</kaufpreis>`;
    parts.push(`    <immobilie>
      <objektkategorie><nutzungsart WOHNEN="true" GEWERBE="false"/><vermarktungsart KAUF="${r.type === 'SALE'}" MIETE_PACHT="${r.type === 'RENT'}"/><objektart>${obj}</objektart></objektkategorie>
      <geo>${r.ort ? `<ort>${esc(r.ort)}</ort>` : ''}${r.zusatz ? `<regionaler_zusatz>${esc(r.zusatz)}</regionaler_zusatz>` : ''}${r.lat !== null ? `<geokoordinaten breitengrad="${r.lat}" laengengrad="${r.lng}"/>` : ''}<land iso_land="LUX"/></geo>
      <preise>${priceEl}<waehrung iso_waehrung="EUR"/></preise>
      <flaechen>${r.area !== null ? `<wohnflaeche>${r.area}</wohnflaeche>` : ''}${r.rooms !== null ? `<anzahl_zimmer>${r.rooms}</anzahl_zimmer>` : ''}</flaechen>
      <freitexte><objekttitel>${esc(r.title)}</objekttitel></freitexte>
      <anhaenge><anhang location="REMOTE" gruppe="BILD"><daten><pfad>https://img.${a.source}.example/${r.ext}/1.jpg</pfad></daten></anhang></anhaenge>
      <verwaltung_techn><objektnr_extern>${r.ext}</objektnr_extern><stand_vom>${r.created.toISOString().slice(0, 10)}</stand_vom></verwaltung_techn>
    </immobilie>\n`);
  }
  parts.push('  </anbieter>\n</openimmo>\n');
  fs.writeFileSync(path.join(OUT, `${a.source}.openimmo.xml`), parts.join(''));
}
const csvq = (s: string) => (/[;"\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);
function fmtDateLux(d: Date) { const l = new Date(d.getTime() + 3600e3); const p = (n: number) => String(n).padStart(2, '0'); return `${p(l.getUTCDate())}/${p(l.getUTCMonth() + 1)}/${l.getUTCFullYear()} ${p(l.getUTCHours())}:${p(l.getUTCMinutes())}`; }
function writeCsv(a: Agency, rs: Rec[]) {
  const head = "Référence;Type d'offre;Type de bien;Titre;Prix;Surface;Pièces;Chambres;Localité;Code postal;Latitude;Longitude;Photos;Étudiants;Date de création;Lien";
  const rows = [head];
  for (const r of rs) {
    const prix = a.source === 'probe-charlie' ? `${r.price.toLocaleString('fr-FR').replace(/\u202f|\u00a0/g, ' ')} €` : String(r.price);
    const surf = r.area === null ? '' : a.source === 'probe-charlie' ? `${String(r.area).replace('.', ',')} m²` : String(r.area);
    const coord = (x: number | null) => (x === null ? '' : a.source === 'probe-charlie' ? String(x).replace('.', ',') : String(x));
    rows.push([r.ext, r.type === 'RENT' ? 'Location' : 'Vente', r.kind === 'apartment' ? 'Appartement' : 'Maison', r.title, prix, surf,
      r.rooms !== null ? String(r.rooms) : '', r.bedrooms !== null ? String(r.bedrooms) : '', r.place, '', coord(r.lat), coord(r.lng),
      `https://photos.${a.source}.example/${r.ext}.jpg`, 'non', fmtDateLux(r.created), `https://www.${a.source}.example/biens/${r.ext}`].map(csvq).join(';'));
  }
  fs.writeFileSync(path.join(OUT, `${a.source}.csv`), '\uFEFF' + rows.join('\r\n') + '\r\n');
}
function writeJson(a: Agency, rs: Rec[]) {
  const listings = rs.map((r) => ({
    ref: r.ext, offer: r.type === 'RENT' ? 'rent' : 'sale', status: 'available', title: { fr: r.title },
    price: { amount: r.price, currency: 'EUR', period: r.type === 'RENT' ? 'month' : undefined }, surface_m2: r.area, bedrooms: r.bedrooms,
    address: { street: r.street, locality: r.place, country: 'LU' }, geo: r.lat === null ? null : { lat: r.lat, lon: r.lng },
    media: [{ type: 'photo', url: `https://cdn.${a.source}.example/${r.ext}/01.jpg` }], students: false, published_at: r.created.toISOString(), link: `https://${a.source}.example/listing/${r.ext}`,
  }));
  fs.writeFileSync(path.join(OUT, `${a.source}.json`), JSON.stringify({ agency: a.source, generated_at: '2026-11-29T06:00:00+01:00', mode: 'full', listings }, null, 1));
}
for (const a of AG) {
  const rs = recs.filter((r) => r.source === a.source).sort((x, y) => x.ext.localeCompare(y.ext));
  if (a.format === 'openimmo') writeOpenImmo(a, rs); else if (a.format === 'csv') writeCsv(a, rs); else writeJson(a, rs);
}
// truth
const truth = {
  agencies: AG,
  properties: props.map((p) => ({ pid: p.pid, kind: p.kind, type: p.type, commune: p.commune, locality: p.loc.locality, lat: r6(p.lat), lng: r6(p.lng), rooms: p.rooms, area: p.area, price: Math.round(p.price), group: p.group, groupId: p.groupId, multi: p.agencies.length > 1, agencies: p.agencies })),
  listings: recs.map((r) => ({ pid: r.pid, source: r.source, external_id: r.ext, type: r.type, price: r.price, area: r.area, rooms: r.rooms, bedrooms: r.bedrooms, roomsField: r.roomsField, place: r.place, lat: r.lat, lng: r.lng, coordMode: r.coordMode, noise: r.noise })),
};
fs.writeFileSync(path.join(OUT, 'truth.json'), JSON.stringify(truth, null, 1));
const byAg = AG.map((a) => `${a.source}=${recs.filter((r) => r.source === a.source).length}`).join(' ');
console.log(`properties=${props.length} multi=${props.filter((p) => p.agencies.length > 1).length} listings=${recs.length} ${byAg}`);
console.log(`groups: sibling=${props.filter((p) => p.group === 'sibling').length} lookalike=${props.filter((p) => p.group === 'lookalike').length} twin=${props.filter((p) => p.group === 'twin').length}`);
void multi;
