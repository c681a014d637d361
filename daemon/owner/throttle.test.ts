import { describe, expect, it } from 'vitest';
import { LoginThrottle } from './throttle.js';

describe('LoginThrottle', () => {
  it('doubles the wait after each failure, caps it, and forgets on success', () => {
    let now = 0;
    const t = new LoginThrottle(() => now);
    expect(t.waitMs('a')).toBe(0);
    expect(t.fail('a')).toBe(1000);
    expect(t.waitMs('a')).toBe(1000);
    expect(t.waitMs('b')).toBe(0);
    now += 1000;
    expect(t.waitMs('a')).toBe(0);
    expect(t.fail('a')).toBe(2000);
    expect(t.fail('a')).toBe(4000);
    for (let i = 0; i < 20; i++) t.fail('a');
    expect(t.waitMs('a')).toBe(60_000);
    t.succeed('a');
    expect(t.waitMs('a')).toBe(0);
    expect(t.fail('a')).toBe(1000);
  });
});
