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

describe('the numeric settings', () => {
  // An outside probe of stop 47: `PORT=` listened on a random port, `METRICS_PORT=` too, and
  // `MAX_CONNECTIONS_PER_CLIENT=` lifted the bound (an empty value was read as 0); `PORT=1e3`
  // listened on 1000.
  it('an empty value is a value not set: the default applies, for every setting alike', () => {
    const c = loadConfig({ PORT: '', METRICS_PORT: ' ', MAX_CONNECTIONS_PER_CLIENT: '', WEB_CONCURRENCY: '', LOG_LEVEL: '', DB_POOL_MAX: '' });
    expect([c.PORT, c.METRICS_PORT, c.MAX_CONNECTIONS_PER_CLIENT, c.WEB_CONCURRENCY, c.LOG_LEVEL, c.DB_POOL_MAX]).toEqual([3000, 9464, 1024, undefined, 'info', 10]);
  });

  it('a number not written in digits alone is refused at start, naming the setting', () => {
    for (const [name, value] of [['PORT', '1e3'], ['PORT', ' 3502'], ['PORT', '3000.0'], ['PORT', '0x10'], ['MAX_CONNECTIONS_PER_CLIENT', '1_000'], ['DB_POOL_MAX', '+5'], ['PORT', '70000'], ['METRICS_PORT', '-2']]) {
      expect(() => loadConfig({ [name]: value }), `${name}=${value}`).toThrow(new RegExp(`Invalid configuration:\\n  ${name}: `));
    }
    expect(loadConfig({ PORT: '3502', METRICS_PORT: '-1', MAX_CONNECTIONS_PER_CLIENT: '0' })).toMatchObject({ PORT: 3502, METRICS_PORT: -1, MAX_CONNECTIONS_PER_CLIENT: 0 });
  });

  // An outside probe of stop 58: a bad TRUST_PROXY stopped the server only once Express read
  // it, after connecting and loading the read model, with a message that did not name it.
  it('TRUST_PROXY: what Express takes, and anything else refused at start, naming the setting', () => {
    for (const value of ['maybe', '10.0.0.0/33', 'loopback,foo', '-1', '1.5']) {
      expect(() => loadConfig({ TRUST_PROXY: value }), value).toThrow(/Invalid configuration:\n {2}TRUST_PROXY: /);
    }
    const taken: [string, unknown][] = [['false', false], ['true', true], ['2', 2], ['loopback, 10.0.0.0/8', ['loopback', '10.0.0.0/8']], ['::1,uniquelocal', ['::1', 'uniquelocal']]];
    for (const [value, expected] of taken) expect(loadConfig({ TRUST_PROXY: value }).TRUST_PROXY, value).toEqual(expected);
  });
});

describe('PUBLIC_BASE_URL', () => {
  // An outside probe of stop 56: `javascript:alert(1)`, `ftp://files.example` and
  // `https://x.example?a=1` were taken, and every listing's url read "javascript:alert(1)/listings/…".
  it('is an http or https address, a path after the host allowed, without a query, fragment or user name', () => {
    for (const value of ['javascript:alert(1)', 'ftp://files.example', 'https://x.example?a=1', 'https://x.example?', 'https://x.example/#top', 'https://user:pw@x.example', 'notaurl']) {
      expect(() => loadConfig({ PUBLIC_BASE_URL: value }), value).toThrow(/PUBLIC_BASE_URL: PUBLIC_BASE_URL must be an/);
    }
    expect(loadConfig({ PUBLIC_BASE_URL: 'https://api.example.com/' }).PUBLIC_BASE_URL).toBe('https://api.example.com');
    expect(loadConfig({ PUBLIC_BASE_URL: 'http://localhost:3000/feed/' }).PUBLIC_BASE_URL).toBe('http://localhost:3000/feed');
    expect(loadConfig({ PORT: '3502' }).PUBLIC_BASE_URL).toBe('http://localhost:3502');
    // As the URL standard writes it (its re-check: a space or `<` was written raw into the Link header).
    expect(loadConfig({ PUBLIC_BASE_URL: 'https://x.example/a b<c>' }).PUBLIC_BASE_URL).toBe('https://x.example/a%20b%3Cc%3E');
    expect(loadConfig({ PUBLIC_BASE_URL: 'http:/x.example' }).PUBLIC_BASE_URL).toBe('http://x.example');
    expect(loadConfig({ PUBLIC_BASE_URL: 'HTTPS://API.Example.com:443/Feed/' }).PUBLIC_BASE_URL).toBe('https://api.example.com/Feed');
  });
});
