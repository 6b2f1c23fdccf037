import type { Knex } from 'knex';
import { buildGazetteer, type Gazetteer, type CommuneRef, type LocalityRef } from './gazetteer.js';

export async function loadGazetteer(db: Knex): Promise<Gazetteer> {
  const communes = (await db('communes').select('lau2', 'name', 'name_lb', 'name_de', 'canton', 'lat', 'lng').orderBy('name')) as CommuneRef[];
  const localities = (await db('localities')
    .select('locality', 'official_form', 'commune', 'kind', 'alt_names', 'lat', 'lng')
    .orderBy('id')) as LocalityRef[];
  return buildGazetteer(communes, localities);
}
