import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDb, type TestDb } from './helpers/pg.js';

describe('test database', () => {
  let t: TestDb;
  beforeAll(async () => {
    t = await createTestDb();
  });
  afterAll(async () => t?.drop());

  it('holds the 100 communes of the reference data', async () => {
    const [{ count }] = await t.db('communes').count<{ count: number }[]>('* as count');
    expect(count).toBe(100);
  });
});
