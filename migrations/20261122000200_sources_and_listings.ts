import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('sources', (t) => {
    t.text('name').primary(); // feed name, or 'native'
    t.text('display_name');
    t.text('format'); // openimmo | csv | json | native
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });

  await knex.schema.createTable('listings', (t) => {
    t.text('id').primary(); // opaque, derived from (source, external_id): stable across re-imports
    t.text('source').notNullable().references('name').inTable('sources');
    t.text('external_id').notNullable();
    t.text('title').notNullable();
    t.integer('price_eur').notNullable();
    t.double('area_m2');
    t.integer('rooms');
    t.text('commune').notNullable().references('name').inTable('communes');
    t.text('locality');
    t.double('lat');
    t.double('lng');
    t.text('listing_type').notNullable();
    t.boolean('accepts_students').notNullable().defaultTo(false);
    t.jsonb('images').notNullable().defaultTo('[]');
    t.text('source_url');
    t.text('status').notNullable().defaultTo('active');
    t.text('merged_into').references('id').inTable('listings').onDelete('SET NULL');
    t.specificType('flags', 'text[]').notNullable().defaultTo('{}');
    t.timestamp('created_at', { useTz: true, precision: 3 }).notNullable();
    t.timestamp('updated_at', { useTz: true, precision: 3 }).notNullable();
    t.timestamp('first_seen_at', { useTz: true, precision: 3 }).notNullable();
    t.timestamp('last_seen_at', { useTz: true, precision: 3 }).notNullable();
    t.timestamp('removed_at', { useTz: true, precision: 3 });
    t.unique(['source', 'external_id']);
  });
  await knex.raw(`
    ALTER TABLE listings
      ADD CONSTRAINT listings_type_check CHECK (listing_type IN ('RENT','SALE','SUBLET','FLATSHARE')),
      ADD CONSTRAINT listings_status_check CHECK (status IN ('active','inactive','merged')),
      ADD CONSTRAINT listings_price_check CHECK (price_eur >= 0),
      ADD CONSTRAINT listings_area_check CHECK (area_m2 IS NULL OR area_m2 >= 0),
      ADD CONSTRAINT listings_rooms_check CHECK (rooms IS NULL OR rooms >= 0),
      ADD CONSTRAINT listings_coords_check CHECK ((lat IS NULL) = (lng IS NULL)),
      ADD CONSTRAINT listings_flags_check CHECK (flags <@ ARRAY['price_outlier','possible_duplicate','stale']::text[]),
      ADD CONSTRAINT listings_merged_check CHECK ((status = 'merged') = (merged_into IS NOT NULL)),
      ADD COLUMN flagged boolean GENERATED ALWAYS AS (cardinality(flags) > 0) STORED,
      ADD COLUMN geo point GENERATED ALWAYS AS (point(lng, lat)) STORED
  `);

  // Every public query reads active listings only, so the indexes are partial on that state.
  // Sorts: (key, id) so that ties are broken by id and paging is stable.
  await knex.raw(`CREATE INDEX listings_active_created_idx ON listings (created_at DESC, id) WHERE status = 'active'`);
  await knex.raw(`CREATE INDEX listings_active_price_idx ON listings (price_eur, id) WHERE status = 'active'`);
  await knex.raw(`CREATE INDEX listings_active_area_idx ON listings (area_m2, id) WHERE status = 'active'`);
  await knex.raw(
    `CREATE INDEX listings_active_commune_idx ON listings (commune, listing_type, price_eur) INCLUDE (rooms, flagged) WHERE status = 'active'`,
  );
  await knex.raw(`CREATE INDEX listings_active_locality_idx ON listings (locality) WHERE status = 'active' AND locality IS NOT NULL`);
  await knex.raw(`CREATE INDEX listings_active_type_idx ON listings (listing_type, created_at DESC) WHERE status = 'active'`);
  await knex.raw(`CREATE INDEX listings_active_source_idx ON listings (source, created_at DESC) WHERE status = 'active'`);
  await knex.raw(`CREATE INDEX listings_active_student_idx ON listings (created_at DESC) WHERE status = 'active' AND accepts_students`);
  // Geo search: a GiST index on the built-in point type (no extension needed) serves the
  // bounding-box prefilter; the exact haversine distance then refines the candidates.
  await knex.raw(`CREATE INDEX listings_active_geo_idx ON listings USING gist (geo) WHERE status = 'active' AND lat IS NOT NULL`);
  await knex.raw(`CREATE INDEX listings_merged_into_idx ON listings (merged_into) WHERE merged_into IS NOT NULL`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('listings');
  await knex.schema.dropTable('sources');
}
