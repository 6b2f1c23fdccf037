import knex, { type Knex } from 'knex';
import pg from 'pg';
import { migrationsDir } from '../lib/paths.js';

// bigint columns (counts, ids) come back as JS numbers: every value we store fits in 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));
pg.types.setTypeParser(pg.types.builtins.NUMERIC, (v) => Number(v));

export type Db = Knex;

export function createDb(connectionString: string, opts: { poolMax?: number; statementTimeoutMs?: number } = {}): Knex {
  return knex({
    client: 'pg',
    connection: {
      connectionString,
      statement_timeout: opts.statementTimeoutMs ?? 10000,
      application_name: 'lux-listings-feed',
    },
    pool: { min: 0, max: opts.poolMax ?? 10 },
    acquireConnectionTimeout: 5000,
  });
}

const isCompiled = import.meta.url.endsWith('.js');

export const migrationConfig: Knex.MigratorConfig = {
  directory: migrationsDir,
  loadExtensions: isCompiled ? ['.js'] : ['.ts'],
  tableName: 'knex_migrations',
};

export async function migrateLatest(db: Knex): Promise<string[]> {
  const [, applied] = await db.migrate.latest(migrationConfig);
  return applied as string[];
}
