import type { Knex } from 'knex';

// Sessions of the /api-keys web page (connect-pg-simple's table layout, created here so the
// store never creates tables at run time) and the secrets that sign their cookies.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('web_sessions', (t) => {
    t.string('sid').primary();
    t.json('sess').notNullable();
    t.timestamp('expire', { useTz: true, precision: 6 }).notNullable();
    t.index(['expire'], 'web_sessions_expire_idx');
  });

  // The newest secret (highest id) signs new cookies; older ones still verify, so a secret
  // can be rotated by inserting a row. The app inserts id 1 with a random value at first use.
  await knex.schema.createTable('web_session_secrets', (t) => {
    t.integer('id').primary();
    t.text('secret').notNullable();
    t.timestamp('created_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw(`ALTER TABLE web_session_secrets ADD CONSTRAINT web_session_secrets_length_check CHECK (length(secret) >= 32)`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('web_session_secrets');
  await knex.schema.dropTable('web_sessions');
}
