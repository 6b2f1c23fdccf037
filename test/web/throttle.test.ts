import net from 'node:net';
import { Redis } from 'ioredis';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { createDb } from '../../src/db/knex.js';
import { useTestContext } from '../helpers/context.js';
import { buildWebApp, pageToken, PASSWORD, signUp, uniqueEmail } from './helpers.js';

// Sign-in throttling against the machine's Redis, under a prefix of this file's own.
const t = useTestContext({
  app: 'web',
  redis: true,
  deps: {
    // X-Forwarded-For from loopback is trusted here, so each test can be its own client IP.
    config: { PUBLIC_BASE_URL: 'http://127.0.0.1:3000', TRUST_PROXY: ['loopback'], STATS_RATE_LIMIT_PER_MINUTE: 1000 },
    // This file counts attempts, not hashes: bcrypt at its minimum cost keeps its ~30 sign-ins
    // fast (the other web tests run at the production cost of 12).
    web: { failuresPerEmail: 3, attemptsPerIp: 6, bcryptCost: 4 },
  },
});

let ipSeq = 0;
const newIp = () => `203.0.113.${++ipSeq}`;

async function attempt(agent: ReturnType<typeof request.agent>, ip: string, email: string, password: string) {
  const _csrf = await pageToken(agent);
  return agent.post('/api-keys/sign-in').set('X-Forwarded-For', ip).type('form').send({ _csrf, email, password });
}

describe('sign-in throttling (Redis)', () => {
  it('pauses an email after 3 failed sign-ins: a clear 429 page with Retry-After, even for the right password', async () => {
    const email = uniqueEmail('target');
    await signUp(request.agent(t.app), email);
    const agent = request.agent(t.app);
    for (let i = 0; i < 3; i++) {
      // From a different address each time: the per-email limit is what holds.
      const res = await attempt(agent, newIp(), email, `wrong password ${i}!`);
      expect(res).toHaveStatus(400);
    }
    const blocked = await attempt(agent, newIp(), email.toUpperCase(), PASSWORD);
    expect(blocked).toHaveStatus(429);
    expect(blocked.headers['content-type']).toMatch(/^text\/html/);
    expect(blocked.text).toContain('Too many attempts');
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

  it('does not count successful sign-ins against the email', async () => {
    const email = uniqueEmail('regular');
    await signUp(request.agent(t.app), email);
    for (let i = 0; i < 4; i++) expect(await attempt(request.agent(t.app), newIp(), email, PASSWORD)).toHaveStatus(303);
    expect(await attempt(request.agent(t.app), newIp(), email, 'a wrong one this time')).toHaveStatus(400);
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
      const app = await buildWebApp(db, { redis: t.redis, redisPrefix: `${t.redisPrefix}outage-pg:`, web: { failuresPerEmail: 3, attemptsPerIp: 1000, bcryptCost: 4 } });
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

  it('a successful sign-in clears the address\'s failures (counts that landed late, after a hung Redis, lock nobody out)', async () => {
    const email = uniqueEmail('clears');
    await signUp(request.agent(t.app), email);
    for (let i = 0; i < 2; i++) expect(await attempt(request.agent(t.app), newIp(), email, `typo ${i}`)).toHaveStatus(400);
    expect(await attempt(request.agent(t.app), newIp(), email, PASSWORD)).toHaveStatus(303);
    // Two more wrong ones would have paused it (3 in all, the second refused) had the earlier
    // two stayed counted: what a hung Redis leaves, counts applied after the attempts passed.
    for (let i = 0; i < 2; i++) expect(await attempt(request.agent(t.app), newIp(), email, `typo again ${i}`)).toHaveStatus(400);
    expect(await attempt(request.agent(t.app), newIp(), email, PASSWORD)).toHaveStatus(303);
  });

  it('lets people sign in while Redis is unreachable (no 500, throttling resumes with Redis)', async () => {
    const dead = new Redis('redis://127.0.0.1:1', { enableOfflineQueue: false, maxRetriesPerRequest: 0, commandTimeout: 200, lazyConnect: true, retryStrategy: () => null });
    dead.on('error', () => undefined);
    const outage = await buildWebApp(t.db, { redis: dead, redisPrefix: `${t.redisPrefix}dead:`, web: { failuresPerEmail: 1, bcryptCost: 4 } });
    const email = uniqueEmail('outage');
    expect(await signUp(request.agent(outage), email)).toHaveStatus(303);
    for (let i = 0; i < 3; i++) expect(await attempt(request.agent(outage), newIp(), email, 'wrong wrong wrong')).toHaveStatus(400);
    expect(await attempt(request.agent(outage), newIp(), email, PASSWORD)).toHaveStatus(303);
    expect(outage.locals.storeHealth.errors).toBeGreaterThan(0);
    dead.disconnect();
  });
});
