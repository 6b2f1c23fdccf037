import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
import { register } from 'tsx/esm/api';
import { adminDb, PG_BASE } from './pg.js';
import { createDb, migrateLatest } from '../../src/db/knex.js';

declare module 'vitest' {
  export interface ProvidedContext {
    templateDb: string;
  }
}

// Builds a migrated template database that every test file of this run clones. The name
// is unique per run, so two runs on one machine (or a developer and CI) never collide.
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // Databases left by earlier runs that were killed before their teardown.
  dropInBackground('stale');
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
    // The run's test databases (see createTestDb), then the template, dropped by a process of
    // its own that the run does not wait for (see drop-run-databases.mjs).
    dropInBackground('run', name);
  };
}

function dropInBackground(mode: 'run' | 'stale', template?: string): void {
  const script = fileURLToPath(new URL('./drop-run-databases.mjs', import.meta.url));
  const args = [script, PG_BASE, mode, ...(template ? [template] : [])];
  spawn(process.execPath, args, { detached: true, stdio: 'ignore' }).unref();
}
