import type { Response } from 'express';
import type { Knex } from 'knex';
import { currentDataVersion } from '../repositories/data-version.js';

// The data version an answer is computed at, which its cache entries are checked against:
// the one read with the API key (src/http/auth.ts), or, on a route without a key, read now.
export async function dataVersion(res: Response, db: Knex): Promise<number> {
  return res.locals.dataVersion ?? (await currentDataVersion(db));
}
