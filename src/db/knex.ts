import { readdirSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import knex, { type Knex } from 'knex';
import pg from 'pg';
import { migrationsDir } from '../lib/paths.js';
import { parseTimestamptz } from './timestamptz.js';

// bigint columns (counts, ids) come back as JS numbers: every value we store fits in 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));
pg.types.setTypeParser(pg.types.builtins.NUMERIC, (v) => Number(v));
// timestamptz: the same Date as pg's own parser, without its regular expressions for the usual form.
pg.types.setTypeParser(pg.types.builtins.TIMESTAMPTZ, parseTimestamptz);

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

// The migrations run as TypeScript (tsx) in development and as compiled JavaScript in the
// container image. Each is recorded under its source name (….ts) either way, so a database
// migrated by one is up to date for the other.
class ProjectMigrationSource implements Knex.MigrationSource<string> {
  private readonly ext = isCompiled ? '.js' : '.ts';
  async getMigrations(): Promise<string[]> {
    return readdirSync(migrationsDir)
      .filter((f) => f.endsWith(this.ext) && !f.endsWith('.d.ts'))
      .sort();
  }
  getMigrationName(file: string): string {
    return file.replace(/\.js$/, '.ts');
  }
  async getMigration(file: string): Promise<Knex.Migration> {
    return (await import(pathToFileURL(path.join(migrationsDir, file)).href)) as Knex.Migration;
  }
}

export const migrationConfig: Knex.MigratorConfig = {
  migrationSource: new ProjectMigrationSource(),
  tableName: 'knex_migrations',
};

export async function migrateLatest(db: Knex): Promise<string[]> {
  return (await runMigrations(db, 'latest')).files;
}

// `latest` applies every pending migration as one batch; `rollback` undoes the last batch.
export async function runMigrations(db: Knex, command: 'latest' | 'rollback'): Promise<{ batch: number; files: string[] }> {
  const [batch, files] = command === 'latest' ? await db.migrate.latest(migrationConfig) : await db.migrate.rollback(migrationConfig);
  return { batch: batch as number, files: files as string[] };
}
