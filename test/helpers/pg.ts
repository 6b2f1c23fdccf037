import { randomBytes } from 'node:crypto';
import knex, { type Knex } from 'knex';
import { inject } from 'vitest';
import { createDb } from '../../src/db/knex.js';

// The machine's PostgreSQL (trust auth). Override with TEST_PG_URL (no database part).
export const PG_BASE = (process.env.TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432').replace(/\/+$/, '');

export function adminDb(): Knex {
  return knex({ client: 'pg', connection: `${PG_BASE}/postgres`, pool: { min: 0, max: 1 } });
}

export interface TestDb {
  db: Knex;
  url: string;
  name: string;
  drop(): Promise<void>;
}

// The databases of one run are named after its template (listings_tpl_<pid>_<time>): the
// global teardown has them dropped all at once (drop-run-databases.mjs, which knows this rule).
export function testDbPrefix(templateDb: string): string {
  return `listings_test_${templateDb.replace(/^listings_tpl_/, '')}_`;
}

// A fresh, migrated database of its own for one test file (cloned from the template that
// global-setup migrated): tests never see each other's rows.
export async function createTestDb(): Promise<TestDb> {
  const name = `${testDbPrefix(inject('templateDb'))}${randomBytes(5).toString('hex')}`;
  const admin = adminDb();
  try {
    await admin.raw(`CREATE DATABASE ?? TEMPLATE ??`, [name, inject('templateDb')]);
  } finally {
    await admin.destroy();
  }
  const url = `${PG_BASE}/${name}`;
  const db = createDb(url, { poolMax: 5 });
  return {
    db,
    url,
    name,
    // Closes the file's connections; the database itself is dropped after the run, together
    // with the run's others: each DROP DATABASE waits for a checkpoint (a second or more on a
    // busy server), and dropped together they share one instead of each test file waiting
    // for its own.
    async drop() {
      await db.destroy();
    },
  };
}
