import { describe, expect, it } from 'vitest';
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
});
