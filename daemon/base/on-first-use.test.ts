/** On-first-use loading (on-first-use.ts): once on success, and never a failure kept for good. */
import { describe, expect, it } from 'vitest';
import { onFirstUse } from './on-first-use.js';

describe('onFirstUse', () => {
  it('loads once, however many ask, at once or later', async () => {
    let loads = 0;
    const get = onFirstUse(async () => ({ n: ++loads }));
    const [a, b] = await Promise.all([get(), get()]);
    expect(a).toBe(b);
    expect(await get()).toBe(a);
    expect(loads).toBe(1);
  });

  it('a load that failed is tried again at the next use, not kept failed', async () => {
    let loads = 0;
    const get = onFirstUse(async () => {
      loads++;
      if (loads === 1) throw new Error('EMFILE: too many open files');
      return 'loaded';
    });
    await expect(get()).rejects.toThrow('EMFILE');
    expect(await get()).toBe('loaded');
    expect(await get()).toBe('loaded');
    expect(loads).toBe(2);
  });
});
