import { describe, expect, it } from 'vitest';
import { Doorkeeper } from '../../src/cache/doorkeeper.js';
import { VersionedCache } from '../../src/cache/versioned-cache.js';

describe('VersionedCache', () => {
  it('reuses an answer only within one data version', async () => {
    const c = new VersionedCache<number>();
    let calls = 0;
    const compute = async () => ++calls;
    expect(await c.get(1, 'k', compute)).toBe(1);
    expect(await c.get(1, 'k', compute)).toBe(1);
    expect(await c.get(2, 'k', compute)).toBe(2); // a new version drops every answer
    expect(await c.get(2, 'k', compute)).toBe(2);
  });

  it('answers a request that saw an older version from the source, without resetting the cache', async () => {
    const c = new VersionedCache<string>();
    await c.get(5, 'k', async () => 'v5');
    expect(await c.get(4, 'k', async () => 'fresh')).toBe('fresh');
    expect(await c.get(5, 'k', async () => 'other')).toBe('v5');
  });

  it('shares one computation between concurrent misses and does not keep failures', async () => {
    const c = new VersionedCache<number>();
    let calls = 0;
    const slow = () => new Promise<number>((r) => setTimeout(() => r(++calls), 20));
    const [a, b] = await Promise.all([c.get(1, 'k', slow), c.get(1, 'k', slow)]);
    expect([a, b, calls]).toEqual([1, 1, 1]);
    await expect(c.get(1, 'bad', async () => Promise.reject(new Error('db down')))).rejects.toThrow('db down');
    expect(await c.get(1, 'bad', async () => 42)).toBe(42);
  });

  it('evicts the least recently used entries past its entry and weight bounds', async () => {
    const c = new VersionedCache<number[]>(3, (v) => v.length, 10);
    await c.get(1, 'a', async () => [1, 2, 3, 4]);
    await c.get(1, 'b', async () => [1, 2, 3, 4]);
    await c.get(1, 'a', async () => []); // touch a: b is now the oldest
    await c.get(1, 'c', async () => [1, 2, 3, 4]); // 12 > 10: b goes
    expect(c.size).toBe(2);
    expect(await c.get(1, 'a', async () => [9])).toHaveLength(4);
    expect(await c.get(1, 'b', async () => [9])).toEqual([9]);
    await c.get(1, 'd', async () => []);
    await c.get(1, 'e', async () => []);
    expect(c.size).toBeLessThanOrEqual(3);
  });

  it('with a doorkeeper, keeps an answer from its second request on, and still shares concurrent first requests', async () => {
    const c = new VersionedCache<number>(100, undefined, Infinity, new Doorkeeper());
    let calls = 0;
    const compute = async () => ++calls;
    expect(await c.get(1, 'k', compute)).toBe(1); // first sight: computed, not kept
    expect(c.size).toBe(0);
    expect(c.peek(1, 'k')).toBeUndefined();
    expect(await c.get(1, 'k', compute)).toBe(2); // second sight: computed and kept
    expect(c.size).toBe(1);
    expect(await c.get(1, 'k', compute)).toBe(2);
    expect(c.peek(1, 'k')).toBe(2);
    // A new version drops the answers, not what was seen: kept at once.
    expect(await c.get(2, 'k', compute)).toBe(3);
    expect(c.peek(2, 'k')).toBe(3);
    const slow = () => new Promise<number>((r) => setTimeout(() => r(++calls), 20));
    const [a, b] = await Promise.all([c.get(2, 'once', slow), c.get(2, 'once', slow)]);
    expect([a, b, calls]).toEqual([4, 4, 4]);
    expect(c.peek(2, 'once')).toBeUndefined();
    // A failure on first sight is not shared with the next request.
    await expect(c.get(2, 'bad', async () => Promise.reject(new Error('db down')))).rejects.toThrow('db down');
    expect(await c.get(2, 'bad', async () => 42)).toBe(42);
  });

  it('a computation not kept is not shared across versions', async () => {
    const c = new VersionedCache<string>(100, undefined, Infinity, new Doorkeeper());
    let release!: (v: string) => void;
    const first = c.get(1, 'k', () => new Promise<string>((r) => (release = r)));
    const second = c.get(2, 'k', async () => 'v2');
    release('v1');
    expect(await first).toBe('v1');
    expect(await second).toBe('v2');
  });
});

describe('Doorkeeper', () => {
  it('admits a key seen before, and forgets keys after 2 x its capacity of new ones', () => {
    const d = new Doorkeeper(2);
    expect(d.admit('a')).toBe(false);
    expect(d.admit('a')).toBe(true);
    expect(d.admit('b')).toBe(false);
    expect(d.admit('c')).toBe(false); // the first generation (a, b) is now the previous one
    expect(d.admit('a')).toBe(true);
    expect(d.admit('d')).toBe(false);
    expect(d.admit('e')).toBe(false); // (c, d) previous, (a, b) forgotten
    expect(d.admit('b')).toBe(false);
    expect(d.admit('c')).toBe(true);
  });
});
