import type { Knex } from 'knex';
import { placeKey, type CommuneRef, type LocalityRef } from '../reference/gazetteer.js';

// The reference tables of the communes and their localities (loaded by migrations from data/).

export interface CommuneRecord {
  lau2: string;
  name: string;
  name_lb: string;
  name_de: string;
  canton: string;
  canton_iso: string;
  lat: number;
  lng: number;
  population: number | null;
  localities: { name: string; kind: 'locality' | 'quarter' }[];
}

// The 100 communes in French alphabetical order, each with its localities and quarters (the
// locality that bears the commune's own name, in any of its forms, left out).
export async function listCommunes(db: Knex): Promise<CommuneRecord[]> {
  const [communes, localities] = await Promise.all([
    db('communes').select('lau2', 'name', 'name_lb', 'name_de', 'canton', 'canton_iso', 'lat', 'lng', 'population').orderBy('name'),
    db('localities').select('commune', 'locality', 'kind').orderBy('locality'),
  ]);
  // The commune's own name in any of its forms: "Pütscheid", Putscheid's German name, is the
  // commune to the listings' filter as it is to the importer (an outside probe of stop 50 found it
  // offered as a locality that no filter could select alone).
  const ownNames = new Set((communes as { name: string; name_lb: string; name_de: string }[]).flatMap((c) => [c.name, c.name_lb, c.name_de].map((n) => `${c.name}\u0000${placeKey(n)}`)));
  const byCommune = new Map<string, CommuneRecord['localities']>();
  for (const l of localities) {
    if (ownNames.has(`${l.commune}\u0000${placeKey(l.locality)}`)) continue;
    const list = byCommune.get(l.commune) ?? [];
    list.push({ name: l.locality, kind: l.kind === 'locality' ? 'locality' : 'quarter' });
    byCommune.set(l.commune, list);
  }
  const collator = new Intl.Collator('fr', { sensitivity: 'base' });
  return (communes as Omit<CommuneRecord, 'localities'>[])
    .sort((a, b) => collator.compare(a.name, b.name))
    .map((c) => ({ ...c, localities: byCommune.get(c.name) ?? [] }));
}

// The rows the gazetteer (src/reference/gazetteer.ts) is built from.
export async function findGazetteerRows(db: Knex): Promise<{ communes: CommuneRef[]; localities: LocalityRef[] }> {
  const communes = (await db('communes').select('lau2', 'name', 'name_lb', 'name_de', 'canton', 'lat', 'lng').orderBy('name')) as CommuneRef[];
  const localities = (await db('localities')
    .select('locality', 'official_form', 'commune', 'kind', 'alt_names', 'lat', 'lng')
    .orderBy('id')) as LocalityRef[];
  return { communes, localities };
}
