import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { migrationConfig } from '../../src/db/knex.js';
import { normalizeEmail } from '../../src/domain/email.js';
import { findOrCreateAccount } from '../../src/repositories/accounts.js';
import { createApiKey, listApiKeys } from '../../src/repositories/api-keys.js';
import { useTestContext } from '../helpers/context.js';
import { createTestDb } from '../helpers/pg.js';
import { pageToken, PASSWORD, signIn, signUp } from './helpers.js';

// Issue 10, item 3: the per-email sign-in lock counted `alİce@…` (U+0130, which JavaScript
// lower-cases to i + U+0307) in a fresh bucket, while PostgreSQL's lower() found alice's
// account: the lock was bypassed. One normalization now serves the throttle, storage and
// lookup.
const t = useTestContext({
  app: 'web',
  redis: true,
  deps: {
    config: { PUBLIC_BASE_URL: 'http://127.0.0.1:3000', TRUST_PROXY: ['loopback'], STATS_RATE_LIMIT_PER_MINUTE: 1000 },
    web: { failuresPerEmail: 3, attemptsPerIp: 1000, bcryptCost: 4 },
  },
});

let ipSeq = 0;
const newIp = () => `198.51.100.${++ipSeq}`;
const tag = () => randomBytes(3).toString('hex');

async function attempt(email: string, password: string) {
  const agent = request.agent(t.app);
  const _csrf = await pageToken(agent);
  return agent.post('/api-keys/sign-in').set('X-Forwarded-For', newIp()).type('form').send({ _csrf, email, password });
}

describe('normalizeEmail', () => {
  it('maps letter case and compatibility spellings to one form', () => {
    expect(normalizeEmail('  Alice@Example.LU ')).toBe('alice@example.lu');
    expect(normalizeEmail('ＡＬＩＣＥ@ｅｘａｍｐｌｅ.lu')).toBe('alice@example.lu'); // fullwidth
    expect(normalizeEmail('\u212Aate@x.lu')).toBe('kate@x.lu'); // KELVIN SIGN
    expect(normalizeEmail('\uFB00@x.lu')).toBe('ff@x.lu'); // ligature ﬀ
    expect(normalizeEmail('jose\u0301@x.lu')).toBe(normalizeEmail('jos\u00e9@x.lu')); // decomposed é
    expect(normalizeEmail('STRAẞE@x.lu')).toBe('straße@x.lu'); // capital sharp s
    expect(normalizeEmail('straße@x.lu')).not.toBe('strasse@x.lu'); // a mapping, not case folding
    expect(normalizeEmail('ΣΑΣ@x.lu')).toBe('σας@x.lu'); // final sigma where a word ends
    // İ lower-cases to i + U+0307, not to i: it is another address than alice's.
    expect(normalizeEmail('alİce@x.lu')).toBe('ali\u0307ce@x.lu');
  });

  it('gives the same result when applied again (every code point, and random strings)', () => {
    for (let c = 0; c <= 0x10ffff; c++) {
      if (c >= 0xd800 && c <= 0xdfff) continue;
      const s = `a${String.fromCodePoint(c)}b`;
      const once = normalizeEmail(s);
      if (normalizeEmail(once) !== once) expect.fail(`U+${c.toString(16)}`);
    }
    fc.assert(fc.property(fc.string({ unit: 'binary' }), (s) => normalizeEmail(normalizeEmail(s)) === normalizeEmail(s)), { numRuns: 20_000 });
  });
});

describe('the sign-in lock holds for every spelling of an address', () => {
  it('alİce@, ALICE@ and ａlice@ land in alice’s bucket or are refused; none signs in once it is locked', async () => {
    const local = `alice${tag()}`;
    const email = `${local}@example.com`;
    expect(await signUp(request.agent(t.app), email)).toHaveStatus(303);
    for (let i = 0; i < 3; i++) expect(await attempt(email, `wrong password ${i}!!`)).toHaveStatus(400);

    const spellings = [
      email.toUpperCase(),
      ` ${email}\u3000`, // ideographic space around it
      `ａ${email.slice(1)}`, // fullwidth a
      email.replace('i', 'İ'), // the report: İ (U+0130)
      email.replace('i', 'I\u0307'), // I + combining dot, which NFKC composes to İ
    ];
    for (const spelling of spellings) {
      const res = await attempt(spelling, PASSWORD);
      expect(res, JSON.stringify(spelling)).not.toHaveStatus(303);
      expect([400, 429], JSON.stringify(spelling)).toContain(res.status);
      expect(res.text).not.toContain('Signed in as');
    }
    // The ones that are alice's address are held by alice's lock.
    for (const spelling of spellings.slice(0, 3)) expect(await attempt(spelling, PASSWORD), spelling).toHaveStatus(429);
    // One bucket for all of them.
    const buckets = await t.redis.keys(`${t.redisPrefix}web-failures-email:*`);
    expect(buckets.length).toBeGreaterThan(0);
  });

  it('signs in with any spelling of one’s own address, refused for one that is no address', async () => {
    const email = `kate${tag()}@example.com`;
    await signUp(request.agent(t.app), email);
    expect(await signIn(request.agent(t.app), email.replace('k', '\u212A').toUpperCase())).toHaveStatus(303);
    const refused = await signIn(request.agent(t.app), email.replace('a', 'İ'));
    expect(refused).toHaveStatus(400);
    expect(refused.text).toContain('Enter an email address like name@example.com.');
  });

  // An outside probe of stop 52: accounts were made for addresses no mail server takes.
  it('refuses a sign-up for an address over 64 characters before the @ or with a domain part over 63', async () => {
    const cases: [string, string][] = [
      [`${'a'.repeat(65)}@example.com`, 'In an email address, the part before the @ has at most 64 characters.'],
      [`a${tag()}@${'b'.repeat(64)}.com`, 'In an email address, each part of the domain (between dots) has at most 63 characters.'],
    ];
    for (const [email, message] of cases) {
      const res = await signUp(request.agent(t.app), email);
      expect(res, email).toHaveStatus(400);
      expect(res.text).toContain(message);
      expect(await t.db('accounts').where({ email }).first()).toBeUndefined();
    }
    // At the limits: made.
    const edge = `${'c'.repeat(58)}${tag().slice(0, 6).padEnd(6, 'x')}@${'d'.repeat(63)}.lu`;
    expect(await signUp(request.agent(t.app), edge)).toHaveStatus(303);
    // An account made before the rule: its address is taken, as any other's.
    const older = `${'e'.repeat(60)}${tag()}@example.com`;
    await t.db('accounts').insert({ email: older });
    const taken = await signUp(request.agent(t.app), older);
    expect(taken).toHaveStatus(400);
    expect(taken.text).toContain('An account with this email already exists.');
  });

  it('refuses a sign-up for an address that exists in another spelling, and stores the normalized form', async () => {
    const local = `bob${tag()}`;
    expect(await signUp(request.agent(t.app), `${local.toUpperCase()}@Example.COM`)).toHaveStatus(303);
    const row = await t.db('accounts').where({ email: `${local}@example.com` }).first();
    expect(row).toBeDefined();
    const fullwidth = [...local].map((ch) => String.fromCodePoint(ch.codePointAt(0)! + 0xfee0)).join('');
    const again = await signUp(request.agent(t.app), `${fullwidth}@example.com`);
    expect(again).toHaveStatus(400);
    expect(again.text).toContain('An account with this email already exists');
  });
});

describe('the admin command line', () => {
  it('finds and lists the account of any spelling', async () => {
    const email = `ops${tag()}@example.com`;
    const id = await findOrCreateAccount(t.db, email.toUpperCase());
    expect((await t.db('accounts').where({ id }).first()).email).toBe(email);
    expect(await findOrCreateAccount(t.db, `ｏ${email.slice(1)}`)).toBe(id);
    await createApiKey(t.db, { accountId: id, tier: 'free' });
    expect(await listApiKeys(t.db, { email: ` ${email.toUpperCase()} ` })).toHaveLength(1);
    expect(await listApiKeys(t.db, { email: email.replace('o', 'ö') })).toHaveLength(0);
  });
});

describe('the migration', () => {
  const NAME = '20261123000100_normalized_account_emails.ts';

  it('normalizes existing emails; of two that become one, the older keeps it and the newer is renamed', async () => {
    const scratch = await createTestDb();
    try {
      const db = scratch.db;
      await db.migrate.down({ ...migrationConfig, name: NAME });
      const at = (s: string) => new Date(`2026-11-0${s}T10:00:00.000Z`);
      const [carol] = await db('accounts').insert({ email: 'Carol@Example.com', created_at: at('1') }).returning('id');
      const [copy] = await db('accounts').insert({ email: 'ＣAROL@example.com', created_at: at('2') }).returning('id');
      const [dave] = await db('accounts').insert({ email: ' Dave@X.lu', created_at: at('3') }).returning('id');
      const { key } = await createApiKey(db, { accountId: copy.id, tier: 'pro' });

      await db.migrate.up({ ...migrationConfig, name: NAME });

      const emails = Object.fromEntries((await db('accounts').select('id', 'email')).map((r: { id: number; email: string }) => [r.id, r.email]));
      expect(emails[carol.id]).toBe('carol@example.com');
      expect(emails[copy.id]).toBe(`duplicate-${copy.id}:carol@example.com`);
      expect(emails[dave.id]).toBe('dave@x.lu');
      // The renamed account keeps its key.
      const keys = await db('api_keys').where({ account_id: copy.id });
      expect(keys).toHaveLength(1);
      expect(key).toMatch(/^lfk_/);
      // Unique by equality on the stored form.
      await expect(db('accounts').insert({ email: 'carol@example.com' })).rejects.toMatchObject({ code: '23505' });
      expect(await findOrCreateAccount(db, 'CAROL@example.com')).toBe(carol.id);
    } finally {
      await scratch.drop();
    }
  });
});
