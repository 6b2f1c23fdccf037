import type { TestProject } from 'vitest/node';
import { register } from 'tsx/esm/api';
import { adminDb, PG_BASE, testDbPrefix } from './pg.js';
import { createDb, migrateLatest } from '../../src/db/knex.js';

declare module 'vitest' {
  export interface ProvidedContext {
    templateDb: string;
  }
}

// Builds a migrated template database that every test file of this run clones. The name
// is unique per run, so two runs on one machine (or a developer and CI) never collide.
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const name = `listings_tpl_${process.pid}_${Date.now().toString(36)}`;
  const admin = adminDb();
  try {
    await admin.raw(`CREATE DATABASE ??`, [name]);
  } finally {
    await admin.destroy();
  }
  const db = createDb(`${PG_BASE}/${name}`, { poolMax: 1 });
  // knex imports the migration files itself, with Node's own loader: teach it TypeScript.
  const unregister = register();
  try {
    await migrateLatest(db);
  } finally {
    await unregister();
    await db.destroy();
  }
  project.provide('templateDb', name);
  return async () => {
    // The run's test databases (see createTestDb), then the template. Dropped several at a
    // time, one connection each, so that they share their checkpoints.
    const a = adminDb();
    let names: string[];
    try {
      const prefix = testDbPrefix(name).replace(/_/g, '\\_');
      names = (await a.raw(`SELECT datname FROM pg_database WHERE datname LIKE ?`, [`${prefix}%`])).rows.map((r: { datname: string }) => r.datname);
    } finally {
      await a.destroy();
    }
    const drop = async (db: string) => {
      const c = adminDb();
      try {
        await c.raw(`DROP DATABASE IF EXISTS ?? WITH (FORCE)`, [db]);
      } finally {
        await c.destroy();
      }
    };
    // A few at a time: the server's connections are shared with other runs.
    for (let i = 0; i < names.length; i += 8) await Promise.all(names.slice(i, i + 8).map(drop));
    await drop(name);
  };
}
