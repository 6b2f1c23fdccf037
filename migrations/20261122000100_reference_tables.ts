import type { Knex } from 'knex';
import { readCommunes, readLocalities } from '../src/reference/csv.js';

// The reference tables are loaded from the committed copies in data/, so every database
// built from these migrations has the same 100 communes and their localities.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('communes', (t) => {
    t.string('lau2', 4).primary();
    t.text('name').notNullable().unique();
    t.text('name_lb').notNullable();
    t.text('name_de').notNullable();
    t.text('canton').notNullable();
    t.string('canton_iso', 5).notNullable();
    t.double('lat').notNullable();
    t.double('lng').notNullable();
    t.double('area_km2');
    t.integer('population');
  });
  await knex.schema.createTable('localities', (t) => {
    t.increments('id').primary();
    t.text('locality').notNullable();
    t.text('official_form');
    t.text('commune').notNullable().references('name').inTable('communes');
    t.text('kind').notNullable();
    t.specificType('alt_names', 'text[]').notNullable().defaultTo('{}');
    t.double('lat');
    t.double('lng');
    t.index(['commune']);
  });
  await knex('communes').insert(readCommunes());
  const rows = readLocalities().map(({ lau2: _lau2, ...r }) => r);
  for (let i = 0; i < rows.length; i += 200) await knex('localities').insert(rows.slice(i, i + 200));
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('localities');
  await knex.schema.dropTable('communes');
}
