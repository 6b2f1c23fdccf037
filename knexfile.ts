import type { Knex } from 'knex';
import { loadConfig } from './src/config.js';
import { migrationConfig } from './src/db/knex.js';

// For the knex CLI. The service itself migrates through src/cli/migrate.ts and on start-up.
const config = loadConfig();

const knexConfig: Knex.Config = {
  client: 'pg',
  connection: config.DATABASE_URL ?? `postgres://postgres@127.0.0.1:${config.EMBEDDED_PG_PORT}/listings`,
  migrations: migrationConfig,
};

export default knexConfig;
