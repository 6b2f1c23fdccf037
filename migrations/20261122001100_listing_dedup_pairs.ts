import type { Knex } from 'knex';

// The cross-source pairs the deduplicator found between live listings (a < b): 'merge'
// pairs join groups, 'possible' pairs (and merge pairs left in two groups) put the
// possible_duplicate flag on both listings. Kept so that when one listing changes or
// goes, the flags of the listings it was paired with are re-decided without searching
// the whole neighbourhood again.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('listing_dedup_pairs', (t) => {
    t.text('a').notNullable().references('id').inTable('listings').onDelete('CASCADE');
    t.text('b').notNullable().references('id').inTable('listings').onDelete('CASCADE');
    t.text('kind').notNullable();
    t.double('score').notNullable();
    t.primary(['a', 'b']);
    t.index(['b']);
  });
  await knex.raw(`ALTER TABLE listing_dedup_pairs ADD CONSTRAINT listing_dedup_pairs_order CHECK (a < b),
    ADD CONSTRAINT listing_dedup_pairs_kind CHECK (kind IN ('merge', 'possible'))`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('listing_dedup_pairs');
}
