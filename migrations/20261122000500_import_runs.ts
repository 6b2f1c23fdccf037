import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('import_runs', (t) => {
    t.bigIncrements('id').primary();
    t.text('source').notNullable().references('name').inTable('sources');
    t.text('mode').notNullable(); // full | delta
    t.text('status').notNullable(); // running | ok | failed | refused
    t.text('file_name');
    t.timestamp('started_at', { useTz: true, precision: 3 }).notNullable();
    t.timestamp('finished_at', { useTz: true, precision: 3 });
    t.jsonb('counts').notNullable().defaultTo('{}');
    t.jsonb('rejects').notNullable().defaultTo('[]');
    t.text('error');
    t.index(['source', 'finished_at']);
  });
  await knex.raw(`ALTER TABLE import_runs ADD CONSTRAINT import_runs_status_check CHECK (status IN ('running','ok','failed','refused'))`);
  await knex.raw(`CREATE INDEX import_runs_ok_finished_idx ON import_runs (finished_at DESC) WHERE status = 'ok'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('import_runs');
}
