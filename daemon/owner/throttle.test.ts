import { describe, expect, it } from 'vitest';
import { type AttemptOutcome, LoginThrottle } from './throttle.js';

/** A throttle whose 1 s holds end only when the test says so. */
function gate(maxWaiting = 256) {
  const holds: Array<() => void> = [];
  const t = new LoginThrottle({
    maxWaiting,
    sleep: () => new Promise<void>((resolve) => holds.push(resolve)),
  });
  const checked: string[] = [];
  const outcomes = new Map<string, AttemptOutcome>();
  const attempt = (name: string, right: boolean, gone?: AbortSignal) =>
    t
      .attempt(() => {
        checked.push(name);
        return right;
      }, gone)
      .then((o) => {
        outcomes.set(name, o);
        return o;
      });
  /** Lets every pending promise chain run. */
  const settle = () => new Promise<void>((resolve) => setImmediate(resolve));
  return { t, holds, checked, outcomes, attempt, settle };
}

describe('[c5.login-throttle] LoginThrottle', () => {
  it('checks at most 4 at a time, FIFO; a wrong one holds its slot until its hold ends', async () => {
    const g = gate();
    for (let i = 1; i <= 10; i++) void g.attempt(`w${i}`, false);
    await g.settle();
    expect(g.checked).toEqual(['w1', 'w2', 'w3', 'w4']);
    expect(g.t.load).toEqual({ active: 4, waiting: 6 });
    expect(g.outcomes.size).toBe(0); // nobody is answered before the hold ends
    g.holds.shift()!();
    await g.settle();
    expect(g.outcomes.get('w1')).toBe('refused');
    expect(g.checked).toEqual(['w1', 'w2', 'w3', 'w4', 'w5']);
    for (const h of g.holds.splice(0)) h();
    await g.settle();
    expect(g.checked).toHaveLength(9);
    expect(g.t.load).toEqual({ active: 4, waiting: 1 });
  });

  it('answers a right token as soon as it is checked, and gives its slot back at once', async () => {
    const g = gate();
    for (let i = 1; i <= 4; i++) void g.attempt(`w${i}`, false);
    const owner = g.attempt('owner', true);
    void g.attempt('w5', false);
    await g.settle();
    expect(g.checked).toEqual(['w1', 'w2', 'w3', 'w4']);
    g.holds.shift()!();
    expect(await owner).toBe('accepted');
    await g.settle();
    // The owner's slot went straight to the next waiter; w2..w4 are still held.
    expect(g.checked).toEqual(['w1', 'w2', 'w3', 'w4', 'owner', 'w5']);
    expect(g.outcomes.has('w2')).toBe(false);
  });

  it('remembers nothing: after any number of failures a right token with a free slot gets in at once', async () => {
    const g = gate();
    for (let i = 0; i < 50; i++) {
      const p = g.attempt(`w${i}`, false);
      await g.settle();
      g.holds.shift()!();
      expect(await p).toBe('refused');
    }
    expect(g.t.load).toEqual({ active: 0, waiting: 0 });
    expect(await g.attempt('owner', true)).toBe('accepted');
  });

  it('past the waiting bound answers busy at once, unchecked; a hung-up waiter leaves the queue unchecked', async () => {
    const g = gate(2);
    for (let i = 1; i <= 4; i++) void g.attempt(`w${i}`, false);
    const hangUp = new AbortController();
    void g.attempt('q1', false, hangUp.signal);
    void g.attempt('q2', false);
    expect(await g.attempt('over', true)).toBe('busy');
    expect(g.t.retryAfterS()).toBe(2); // 6 ahead, 4 per second
    hangUp.abort();
    await g.settle();
    expect(g.outcomes.get('q1')).toBe('gone');
    expect(g.t.load).toEqual({ active: 4, waiting: 1 });
    for (const h of g.holds.splice(0)) h();
    await g.settle();
    expect(g.checked).toEqual(['w1', 'w2', 'w3', 'w4', 'q2']);
    expect(g.checked).not.toContain('over');
    expect(await g.attempt('gone-before', true, AbortSignal.abort())).toBe('gone');
  });
});
