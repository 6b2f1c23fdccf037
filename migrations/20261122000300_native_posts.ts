import type { Knex } from 'knex';

// Posts made on our own service. The posting interface is not part of this release; the
// demo data creates some. Each post appears as a listing with source 'native'.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('native_posts', (t) => {
    t.text('id').primary();
    t.text('account_email');
    t.text('title').notNullable();
    t.integer('price_eur').notNullable();
    t.double('area_m2');
    t.integer('rooms');
    t.text('commune_text').notNullable(); // as typed by the poster; resolved on import
    t.double('lat');
    t.double('lng');
    t.text('listing_type').notNullable();
    t.boolean('accepts_students').notNullable().defaultTo(false);
    t.jsonb('images').notNullable().defaultTo('[]');
    t.text('status').notNullable().defaultTo('published'); // published | withdrawn
    t.timestamp('created_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
    t.index(['updated_at']);
  });
  await knex.raw(`ALTER TABLE native_posts ADD CONSTRAINT native_posts_status_check CHECK (status IN ('published','withdrawn'))`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('native_posts');
}
