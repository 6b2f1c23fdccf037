import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'csv-parse/sync';
import { dataDir } from '../lib/paths.js';

export type CsvRow = Record<string, string>;

export function readDataCsv(file: string): CsvRow[] {
  const text = readFileSync(path.join(dataDir, file), 'utf8');
  return parse(text, { columns: true, bom: true, skip_empty_lines: true }) as CsvRow[];
}

const num = (s: string | undefined): number | null => (s === undefined || s === '' ? null : Number(s));

export interface CommuneRow {
  lau2: string;
  name: string;
  name_lb: string;
  name_de: string;
  canton: string;
  canton_iso: string;
  lat: number;
  lng: number;
  area_km2: number | null;
  population: number | null;
}

export interface LocalityRow {
  locality: string;
  official_form: string | null;
  commune: string;
  lau2: string;
  kind: string;
  alt_names: string[];
  lat: number | null;
  lng: number | null;
}

export function readCommunes(): CommuneRow[] {
  return readDataCsv('communes.csv').map((r) => ({
    lau2: r.lau2,
    name: r.name,
    name_lb: r.name_lb,
    name_de: r.name_de,
    canton: r.canton,
    canton_iso: r.canton_iso,
    lat: Number(r.lat),
    lng: Number(r.lng),
    area_km2: num(r.area_km2),
    population: num(r.population),
  }));
}

export function readLocalities(): LocalityRow[] {
  return readDataCsv('localities.csv').map((r) => ({
    locality: r.locality,
    official_form: r.locality_official_form || null,
    commune: r.commune,
    lau2: r.lau2,
    kind: r.kind,
    alt_names: r.alt_names ? r.alt_names.split(';').map((s) => s.trim()).filter(Boolean) : [],
    lat: num(r.lat),
    lng: num(r.lng),
  }));
}
