import net from 'node:net';
import { Redis } from 'ioredis';
import request from 'supertest';
import { describe, expect, it, vi } from 'vitest';
import { createDb } from '../../src/db/knex.js';
import { findOrCreateAccount } from '../../src/repositories/accounts.js';
import { createApiKey } from '../../src/repositories/api-keys.js';
import { useTestContext } from '../helpers/context.js';
import { bearer } from '../helpers/factory.js';
import { buildWebApp, createKeyInUi, csrfFrom, keyIdFrom, nonceFrom, pageToken, PASSWORD, revokeInUi, signUp, uniqueEmail, type Agent } from './helpers.js';

// Sign-in throttling against the machine's Redis, under a prefix of this file's own.
const t = useTestContext({
  app: 'web',
  redis: true,
  deps: {
    // X-Forwarded-For from loopback is trusted here, so each test can be its own client IP.
    config: { PUBLIC_BASE_URL: 'http://127.0.0.1:3000', TRUST_PROXY: ['loopback'], STATS_RATE_LIMIT_PER_MINUTE: 1000 },
    // This file counts attempts, not hashes: bcrypt at its minimum cost keeps its ~30 sign-ins
    // fast (the other web tests run at the production cost of 12).
    web: { failuresPerEmailPerIp: 3, failuresPerEmail: 6, attemptsPerIp: 6, bcryptCost: 4 },
  },
});
const CONFIG = { PUBLIC_BASE_URL: 'http://127.0.0.1:3000', TRUST_PROXY: ['loopback'], STATS_RATE_LIMIT_PER_MINUTE: 1000 };

let ipSeq = 0;
const newIp = () => `203.0.113.${++ipSeq}`;

async function attempt(agent: ReturnType<typeof request.agent>, ip: string, email: string, password: string) {
  const _csrf = await pageToken(agent);
  return agent.post('/api-keys/sign-in').set('X-Forwarded-For', ip).type('form').send({ _csrf, email, password });
}

async function signOutFrom(agent: Agent, ip: string) {
  const _csrf = await pageToken(agent);
  return agent.post('/api-keys/sign-out').set('X-Forwarded-For', ip).type('form').send({ _csrf });
}

describe('sign-in throttling (Redis)', () => {
  it('pauses an email after 6 failed sign-ins from many addresses: a clear 429 page with Retry-After, even for the right password', async () => {
    const email = uniqueEmail('target');
    await signUp(request.agent(t.app), email);
    const agent = request.agent(t.app);
    for (let i = 0; i < 6; i++) {
      // From a different address each time: the per-email limit across addresses is what holds.
      const res = await attempt(agent, newIp(), email, `wrong password ${i}!`);
      expect(res).toHaveStatus(400);
    }
    const blocked = await attempt(agent, newIp(), email.toUpperCase(), PASSWORD);
    expect(blocked).toHaveStatus(429);
    expect(blocked.headers['content-type']).toMatch(/^text\/html/);
    expect(blocked.text).toContain('Too many attempts');
    expect(blocked.text).toContain('too many unsuccessful sign-ins to this account, from many networks');
    expect(blocked.text).toMatch(/signing in is paused for about \d+ minutes?/);
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
    expect(blocked.text).not.toContain('Signed in as');

    // The counters are in Redis, keyed by a digest of the address (not the address itself).
    const keys = await t.redis.keys(`${t.redisPrefix}web-failures-email:*`);
    expect(keys.length).toBeGreaterThan(0);
    expect(keys.join(' ')).not.toContain('@');

    // Another account is not affected.
    const other = uniqueEmail('other');
    await signUp(request.agent(t.app), other);
    expect(await attempt(request.agent(t.app), newIp(), other, PASSWORD)).toHaveStatus(303);
  });

  // An outside probe of stop 47: 5 failed sign-ins from any address paused the email for every
  // address, the owner's included, who then could not revoke a leaked key. Failures are counted
  // per email and client address (5), the count across addresses being much higher (100).
  it('pauses an email at one address after 3 failures there, not for the owner at another', async () => {
    const email = uniqueEmail('owner');
    const owner = request.agent(t.app);
    const ownerIp = newIp();
    const _csrf = await pageToken(owner);
    expect(await owner.post('/api-keys/sign-up').set('X-Forwarded-For', ownerIp).type('form').send({ _csrf, email, password: PASSWORD, password_repeat: PASSWORD })).toHaveStatus(303);
    const { key } = await createKeyInUi(owner, 'leaked');
    expect(await signOutFrom(owner, ownerIp)).toHaveStatus(303);

    const attacker = request.agent(t.app);
    const attackerIp = newIp();
    for (let i = 0; i < 3; i++) expect(await attempt(attacker, attackerIp, email, `guess ${i} guess guess`)).toHaveStatus(400);
    const blocked = await attempt(attacker, attackerIp, email, PASSWORD);
    expect(blocked).toHaveStatus(429);
    expect(blocked.text).toContain('too many unsuccessful sign-ins to this account from your network');
    expect(blocked.text).toMatch(/signing in to it from your network is paused for about \d+ minutes?/);
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
    // Keyed by a digest of the email and the address: neither is listed in Redis.
    const pairs = await t.redis.keys(`${t.redisPrefix}web-failures-email-ip:*`);
    expect(pairs.length).toBeGreaterThan(0);
    expect(pairs.join(' ')).not.toContain('@');
    expect(pairs.join(' ')).not.toContain(attackerIp);

    // The owner signs in from their own address and revokes the leaked key.
    expect(await attempt(owner, ownerIp, email, PASSWORD)).toHaveStatus(303);
    const id = keyIdFrom((await owner.get('/api-keys')).text, 'leaked');
    expect(await revokeInUi(owner, id)).toHaveStatus(303);
    expect(await request(t.app).get('/api/v1/listings').set(bearer(key!))).toHaveStatus(401);
  });

  it('with the production limits: 5 failures from one address pause it there only', async () => {
    const app = await buildWebApp(t.db, { config: CONFIG, redis: t.redis, redisPrefix: `${t.redisPrefix}defaults:`, web: { bcryptCost: 4 } });
    const email = uniqueEmail('defaults');
    expect(await signUp(request.agent(app), email)).toHaveStatus(303);
    const attackerIp = newIp();
    const send = async (ip: string, password: string) => {
      const agent = request.agent(app);
      const _csrf = await pageToken(agent);
      return agent.post('/api-keys/sign-in').set('X-Forwarded-For', ip).type('form').send({ _csrf, email, password });
    };
    for (let i = 0; i < 5; i++) expect(await send(attackerIp, `guess ${i} guess guess`)).toHaveStatus(400);
    expect(await send(attackerIp, PASSWORD)).toHaveStatus(429);
    expect(await send(newIp(), PASSWORD)).toHaveStatus(303);
  });

  // The timing of a sign-in does not tell an unknown email from a known one; nor does the pause.
  it('pauses an unknown email as a known one: the same answers', async () => {
    const known = uniqueEmail('somebody');
    await signUp(request.agent(t.app), known);
    for (const email of [known, uniqueEmail('nobody')]) {
      const ip = newIp();
      const answers: number[] = [];
      for (let i = 0; i < 4; i++) answers.push((await attempt(request.agent(t.app), ip, email, `guess ${i} guess guess`)).status);
      expect(answers, email).toEqual([400, 400, 400, 429]);
    }
  });

  it('does not count successful sign-ins against the email', async () => {
    const email = uniqueEmail('regular');
    await signUp(request.agent(t.app), email);
    const ip = newIp();
    for (let i = 0; i < 4; i++) expect(await attempt(request.agent(t.app), ip, email, PASSWORD)).toHaveStatus(303);
    expect(await attempt(request.agent(t.app), ip, email, 'a wrong one this time')).toHaveStatus(400);
  });

  it('limits attempts per client IP, whatever the emails', async () => {
    const ip = newIp();
    const agent = request.agent(t.app);
    for (let i = 0; i < 6; i++) expect(await attempt(agent, ip, uniqueEmail('spray'), 'guessing password 1')).toHaveStatus(400);
    const blocked = await attempt(agent, ip, uniqueEmail('spray'), 'guessing password 1');
    expect(blocked).toHaveStatus(429);
    expect(blocked.text).toContain('too many sign-in attempts from your network');
    // Sign-ups from that address are held back too; another address is not.
    const _csrf = await pageToken(agent);
    const signUpBlocked = await agent.post('/api-keys/sign-up').set('X-Forwarded-For', ip).type('form').send({ _csrf, email: uniqueEmail(), password: PASSWORD, password_repeat: PASSWORD });
    expect(signUpBlocked).toHaveStatus(429);
    expect(await attempt(agent, newIp(), uniqueEmail('spray'), 'guessing password 1')).toHaveStatus(400);
    expect((await t.redis.keys(`${t.redisPrefix}web-attempts-ip:*`)).length).toBeGreaterThan(0);
  });

  it('counts only sign-ins whose credentials were wrong: answers of a database outage (503) never pause the address', async () => {
    // The app reaches PostgreSQL through a proxy this test cuts and restores.
    const pgPort = Number(new URL(t.url).port || 5432);
    const sockets = new Set<net.Socket>();
    let up = true;
    const proxy = net.createServer((client) => {
      if (!up) return void client.destroy();
      const upstream = net.connect(pgPort, '127.0.0.1');
      for (const [from, to] of [[client, upstream], [upstream, client]] as const) {
        sockets.add(from);
        from.on('data', (chunk) => void to.write(chunk));
        from.on('error', () => {});
        from.on('close', () => (sockets.delete(from), to.destroy()));
      }
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const url = new URL(t.url);
    url.port = String((proxy.address() as net.AddressInfo).port);
    const db = createDb(url.toString(), { poolMax: 2 });
    try {
      const app = await buildWebApp(db, { redis: t.redis, redisPrefix: `${t.redisPrefix}outage-pg:`, web: { failuresPerEmailPerIp: 3, failuresPerEmail: 3, attemptsPerIp: 1000, bcryptCost: 4 } });
      const email = uniqueEmail('pg-outage');
      expect(await signUp(request.agent(app), email)).toHaveStatus(303);
      const agent = request.agent(app);
      const _csrf = await pageToken(agent);
      up = false;
      for (const s of sockets) s.destroy();
      for (let i = 0; i < 5; i++) {
        const res = await agent.post('/api-keys/sign-in').type('form').send({ _csrf, email, password: PASSWORD });
        expect(res).toHaveStatus(503);
      }
      up = true;
      expect(await agent.post('/api-keys/sign-in').type('form').send({ _csrf, email, password: PASSWORD })).toHaveStatus(303);
    } finally {
      await db.destroy();
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => proxy.close(resolve));
    }
  });

  it('a successful sign-in clears the failures from its address (counts that landed late, after a hung Redis, lock nobody out), not those across addresses', async () => {
    const email = uniqueEmail('clears');
    await signUp(request.agent(t.app), email);
    const ip = newIp();
    for (let i = 0; i < 2; i++) expect(await attempt(request.agent(t.app), ip, email, `typo ${i}`)).toHaveStatus(400);
    expect(await attempt(request.agent(t.app), ip, email, PASSWORD)).toHaveStatus(303);
    // Two more wrong ones would have paused it (3 in all, the second refused) had the earlier
    // two stayed counted: what a hung Redis leaves, counts applied after the attempts passed.
    for (let i = 0; i < 2; i++) expect(await attempt(request.agent(t.app), ip, email, `typo again ${i}`)).toHaveStatus(400);
    expect(await attempt(request.agent(t.app), ip, email, PASSWORD)).toHaveStatus(303);
    // Across addresses the 4 failures stay counted (the successful sign-ins are not): cleared
    // by the owner's sign-in, they would give guessing spread over many addresses a fresh
    // allowance each time. Two more make 6, the limit.
    for (let i = 0; i < 2; i++) expect(await attempt(request.agent(t.app), newIp(), email, `elsewhere ${i}`)).toHaveStatus(400);
    expect(await attempt(request.agent(t.app), newIp(), email, PASSWORD)).toHaveStatus(429);
  });

  it('lets people sign in while Redis is unreachable (no 500, throttling resumes with Redis)', async () => {
    const dead = new Redis('redis://127.0.0.1:1', { enableOfflineQueue: false, maxRetriesPerRequest: 0, commandTimeout: 200, lazyConnect: true, retryStrategy: () => null });
    dead.on('error', () => undefined);
    const outage = await buildWebApp(t.db, { redis: dead, redisPrefix: `${t.redisPrefix}dead:`, web: { failuresPerEmailPerIp: 1, failuresPerEmail: 1, bcryptCost: 4 } });
    const email = uniqueEmail('outage');
    expect(await signUp(request.agent(outage), email)).toHaveStatus(303);
    for (let i = 0; i < 3; i++) expect(await attempt(request.agent(outage), newIp(), email, 'wrong wrong wrong')).toHaveStatus(400);
    expect(await attempt(request.agent(outage), newIp(), email, PASSWORD)).toHaveStatus(303);
    expect(outage.locals.storeHealth.errors).toBeGreaterThan(0);
    dead.disconnect();
  });
});

// An outside probe of stop 47: from one address, 29 accounts and 134 Free keys in under 2
// minutes (a sign-up, then 5 keys, each time). At most 20 Free keys a UTC day per client
// address, for all accounts together (3 here).
describe('Free keys created per client address and UTC day (Redis)', () => {
  let seq = 0;
  const ip4 = () => `192.0.2.${++seq}`;
  // A visitor at an address: every request of the agent comes from it.
  async function visitor(app: Awaited<ReturnType<typeof buildWebApp>>, ip: string, tag: string) {
    const agent = request.agent(app).set('X-Forwarded-For', ip) as unknown as Agent;
    const email = uniqueEmail(tag);
    expect(await signUp(agent, email)).toHaveStatus(303);
    return { agent, email };
  }
  const NOTICE = '3 Free keys were created from your network today, for all accounts together: the most in a UTC day.';

  it('stops at 3 for all accounts of one address, says so before the form is used and when one is sent anyway; another address, or the next day, may create', async () => {
    let now = new Date('2031-03-04T22:00:00Z');
    const prefix = `${t.redisPrefix}free-keys:`;
    const app = await buildWebApp(t.db, { config: CONFIG, redis: t.redis, redisPrefix: prefix, clock: () => now, web: { freeKeysPerIpPerDay: 3, attemptsPerIp: 1000 } });
    const ip = ip4();
    const a = await visitor(app, ip, 'farm-a');
    const b = await visitor(app, ip, 'farm-b');
    // Keys of the admin command line are not counted.
    const bId = await findOrCreateAccount(t.db, b.email);
    for (let i = 0; i < 2; i++) await createApiKey(t.db, { accountId: bId, tier: 'free', name: `cli ${i}` });

    for (const name of ['a1', 'a2']) expect((await createKeyInUi(a.agent, name)).res, name).toHaveStatus(201);
    // B's form, open before the third key from the address.
    const open = await b.agent.get('/api-keys');
    expect(open.text).toContain('action="/api-keys/keys"');
    expect((await createKeyInUi(a.agent, 'a3')).res).toHaveStatus(201);

    const refused = await b.agent.post('/api-keys/keys').type('form').send({ _csrf: csrfFrom(open.text), nonce: nonceFrom(open.text), name: 'b1' });
    expect(refused).toHaveStatus(400);
    expect(refused.text).toContain(`id="create-name-error">${NOTICE} You can create the new one after 00:00 UTC.`);
    expect(refused.text).not.toContain('id="new-key"');
    // Before a form is sent, on every account at the address: the notice, and no form.
    for (const { agent } of [a, b]) {
      const page = await agent.get('/api-keys');
      expect(page.text).toContain(`${NOTICE} You can create another after 00:00 UTC.`);
      expect(page.text).not.toContain('action="/api-keys/keys"');
    }
    expect((await t.db('api_keys').where({ account_id: bId })).length).toBe(2);
    // Counted in Redis, per address and day.
    const counters = await t.redis.keys(`${prefix}web-free-keys-ip:*`);
    expect(counters.length).toBe(1);
    expect(counters[0]).toContain('2031-03-04');
    expect(await t.redis.get(counters[0])).toBe('3');

    // Another address is not held back.
    const c = await visitor(app, ip4(), 'farm-c');
    expect((await createKeyInUi(c.agent, 'c1')).res).toHaveStatus(201);

    // After 00:00 UTC the address may create again.
    now = new Date('2031-03-05T00:00:01Z');
    expect((await createKeyInUi(b.agent, 'b1')).res).toHaveStatus(201);
  });

  it('counts forms sent at once before any key is made: 5 accounts at once make 3 keys', async () => {
    const prefix = `${t.redisPrefix}free-keys-burst:`;
    const app = await buildWebApp(t.db, { config: CONFIG, redis: t.redis, redisPrefix: prefix, web: { freeKeysPerIpPerDay: 3, attemptsPerIp: 1000 } });
    const ip = ip4();
    const visitors = [];
    for (let i = 0; i < 5; i++) visitors.push(await visitor(app, ip, `burst-${i}`));
    const forms = await Promise.all(visitors.map(({ agent }) => agent.get('/api-keys')));
    const answers = await Promise.all(
      visitors.map(({ agent }, i) => agent.post('/api-keys/keys').type('form').send({ _csrf: csrfFrom(forms[i].text), nonce: nonceFrom(forms[i].text), name: `burst ${i}` })),
    );
    expect(answers.map((r) => r.status).sort()).toEqual([201, 201, 201, 400, 400]);
    // The refused ones are taken back: the count is the keys made.
    const [counter] = await t.redis.keys(`${prefix}web-free-keys-ip:*`);
    await vi.waitFor(async () => expect(await t.redis.get(counter)).toBe('3'));
  });

  it('counts an IPv6 client by its /56, and forms that made no key not at all', async () => {
    const app = await buildWebApp(t.db, { config: CONFIG, redis: t.redis, redisPrefix: `${t.redisPrefix}free-keys-v6:`, web: { freeKeysPerIpPerDay: 3, attemptsPerIp: 1000 } });
    const a = await visitor(app, '2001:db8:0:1::1', 'v6-a');
    // A form error, and a form sent twice, make no key and are not counted.
    expect((await createKeyInUi(a.agent, '   ')).res).toHaveStatus(400);
    const page = await a.agent.get('/api-keys');
    const form = { _csrf: csrfFrom(page.text), nonce: nonceFrom(page.text), name: 'v6 1' };
    expect(await a.agent.post('/api-keys/keys').type('form').send(form)).toHaveStatus(201);
    expect(await a.agent.post('/api-keys/keys').type('form').send(form)).toHaveStatus(303);
    expect((await createKeyInUi(a.agent, 'v6 2')).res).toHaveStatus(201);
    const b = await visitor(app, '2001:db8:0:2::1', 'v6-b'); // the same /56
    expect((await createKeyInUi(b.agent, 'v6 3')).res).toHaveStatus(201);
    expect((await b.agent.get('/api-keys')).text).toContain(NOTICE);
    const c = await visitor(app, '2001:db8:0:100::1', 'v6-c'); // another /56
    expect((await createKeyInUi(c.agent, 'v6 4')).res).toHaveStatus(201);
  });

  it('lets keys be created while Redis is unreachable', async () => {
    const dead = new Redis('redis://127.0.0.1:1', { enableOfflineQueue: false, maxRetriesPerRequest: 0, commandTimeout: 200, lazyConnect: true, retryStrategy: () => null });
    dead.on('error', () => undefined);
    const outage = await buildWebApp(t.db, { config: CONFIG, redis: dead, redisPrefix: `${t.redisPrefix}free-keys-dead:`, web: { freeKeysPerIpPerDay: 1, bcryptCost: 4 } });
    const { agent } = await visitor(outage, ip4(), 'outage-keys');
    for (const name of ['one', 'two']) expect((await createKeyInUi(agent, name)).res, name).toHaveStatus(201);
    expect((await agent.get('/api-keys')).text).toContain('action="/api-keys/keys"');
    expect(outage.locals.storeHealth.errors).toBeGreaterThan(0);
    dead.disconnect();
  });
});
