import { ExpiringCache } from './expiring-cache';

describe('ExpiringCache', () => {
  it('reuses an answer until it expires, then loads again', async () => {
    const cache = new ExpiringCache<number>(1000);
    let loads = 0;
    const load = async (): Promise<number> => ++loads;
    await expect(cache.get('k', load, 0)).resolves.toBe(1);
    await expect(cache.get('k', load, 999)).resolves.toBe(1);
    await expect(cache.get('k', load, 1000)).resolves.toBe(2);
    expect(loads).toBe(2);
  });

  it('shares one load between concurrent misses', async () => {
    const cache = new ExpiringCache<string>(1000);
    let loads = 0;
    let release!: (value: string) => void;
    const load = (): Promise<string> => {
      loads++;
      return new Promise((resolve) => (release = resolve));
    };
    const first = cache.get('k', load, 0);
    const second = cache.get('k', load, 1);
    release('answer');
    await expect(Promise.all([first, second])).resolves.toEqual(['answer', 'answer']);
    expect(loads).toBe(1);
  });

  it('never keeps a failure', async () => {
    const cache = new ExpiringCache<string>(1000);
    await expect(cache.get('k', () => Promise.reject(new Error('down')), 0)).rejects.toThrow('down');
    await new Promise((resolve) => setImmediate(resolve));
    await expect(cache.get('k', async () => 'up', 1)).resolves.toBe('up');
  });

  it('forgets everything on clear, and loads every time with a zero lifetime', async () => {
    const cache = new ExpiringCache<number>(1000);
    let loads = 0;
    const load = async (): Promise<number> => ++loads;
    await cache.get('k', load, 0);
    cache.clear();
    await expect(cache.get('k', load, 1)).resolves.toBe(2);
    const uncached = new ExpiringCache<number>(0);
    await uncached.get('k', load, 0);
    await uncached.get('k', load, 0);
    expect(loads).toBe(4);
    expect(uncached.size).toBe(0);
  });

  it('drops the oldest entry when full', async () => {
    const cache = new ExpiringCache<string>(1000, 2);
    for (const key of ['a', 'b', 'c']) await cache.get(key, async () => key, 0);
    expect(cache.size).toBe(2);
    let reloaded = false;
    await cache.get('a', async () => ((reloaded = true), 'a'), 1);
    expect(reloaded).toBe(true);
  });
});
