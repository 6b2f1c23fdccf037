import type { Response } from 'express';
import type { Knex } from 'knex';
import type { LiveState } from '../cache/live-state.js';
import { currentDataVersion } from '../repositories/data-version.js';

// The data version an answer is computed at, which its cache entries are checked against:
// the one read with the API key (src/http/auth.ts), else the one the database's notifications
// keep in memory (src/cache/live-state.ts) while they can be trusted, else read now.
export function dataVersion(res: Response, db: Knex, live?: LiveState): number | Promise<number> {
  return res.locals.dataVersion ?? live?.currentVersion() ?? currentDataVersion(db);
}
