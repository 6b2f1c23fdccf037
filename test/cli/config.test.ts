import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';

describe('the connection settings', () => {
  // An outside probe: DATABASE_URL=garbage waited for a database "garbage" on a host "base" for
  // ever ("trying again in 10 s"), and REDIS_URL=garbage served with quotas never enforced.
  it('refuse a value that is not a URL of the service at start, naming the setting', () => {
    for (const [name, value, scheme] of [
      ['DATABASE_URL', 'garbage', 'postgres://'],
      ['DATABASE_URL', 'localhost:5432/listings', 'postgres://'],
      ['DATABASE_READ_URL', 'http://replica/listings', 'postgres://'],
      ['REDIS_URL', 'garbage', 'redis://'],
      ['REDIS_URL', 'postgres://127.0.0.1:6379', 'redis://'],
    ]) {
      expect(() => loadConfig({ [name]: value }), `${name}=${value}`).toThrow(new RegExp(`${name}: ${name} must be a URL beginning with ${scheme}`));
    }
  });

  it('take the URLs of PostgreSQL and Redis, and leave unset what is empty', () => {
    const c = loadConfig({
      DATABASE_URL: 'postgresql://app@db.internal:5432/listings',
      DATABASE_READ_URL: 'postgres:///listings?host=/var/run/postgresql',
      REDIS_URL: 'rediss://:secret@cache.internal:6380/2',
    });
    expect([c.DATABASE_URL, c.DATABASE_READ_URL, c.REDIS_URL]).toEqual([
      'postgresql://app@db.internal:5432/listings',
      'postgres:///listings?host=/var/run/postgresql',
      'rediss://:secret@cache.internal:6380/2',
    ]);
    const unset = loadConfig({ DATABASE_URL: ' ', REDIS_URL: '' });
    expect([unset.DATABASE_URL, unset.REDIS_URL]).toEqual([undefined, undefined]);
  });
});
