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

// A fresh, migrated database of its own for one test file (cloned from the template that
// global-setup migrated): tests never see each other's rows.
export async function createTestDb(): Promise<TestDb> {
  const name = `listings_test_${randomBytes(5).toString('hex')}`;
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
    async drop() {
      await db.destroy();
      const a = adminDb();
      try {
        await a.raw(`DROP DATABASE IF EXISTS ?? WITH (FORCE)`, [name]);
      } finally {
        await a.destroy();
      }
    },
  };
}
