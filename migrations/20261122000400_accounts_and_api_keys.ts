import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('accounts', (t) => {
    t.increments('id').primary();
    t.text('email').notNullable();
    t.text('password_hash'); // bcrypt; null for accounts created by the admin CLI
    t.timestamp('created_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw(`CREATE UNIQUE INDEX accounts_email_lower_idx ON accounts (lower(email))`);

  await knex.schema.createTable('api_keys', (t) => {
    t.text('id').primary(); // public id, e.g. key_3f9a...
    t.integer('account_id').notNullable().references('id').inTable('accounts').onDelete('CASCADE');
    t.text('name').notNullable().defaultTo('');
    t.text('tier').notNullable();
    t.text('prefix').notNullable(); // first characters of the key, for display
    t.string('last4', 4).notNullable();
    t.string('key_hash', 64).notNullable().unique(); // SHA-256 of the key; the plaintext is never stored
    t.timestamp('created_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('last_used_at', { useTz: true, precision: 3 });
    t.timestamp('revoked_at', { useTz: true, precision: 3 });
    t.index(['account_id']);
  });
  await knex.raw(`ALTER TABLE api_keys ADD CONSTRAINT api_keys_tier_check CHECK (tier IN ('free','starter','pro','enterprise'))`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('api_keys');
  await knex.schema.dropTable('accounts');
}
