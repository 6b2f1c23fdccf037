import type { Knex } from 'knex';
import { findGazetteerRows } from '../repositories/communes.js';
import { buildGazetteer, type Gazetteer } from './gazetteer.js';

export async function loadGazetteer(db: Knex): Promise<Gazetteer> {
  const { communes, localities } = await findGazetteerRows(db);
  return buildGazetteer(communes, localities);
}
