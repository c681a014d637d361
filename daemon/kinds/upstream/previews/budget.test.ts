/** The previews of calls awaiting review hold at most a budget of bytes together (./budget.ts). */
import { describe, expect, it } from 'vitest';
import { PreviewBudget } from './budget.js';

describe('PreviewBudget', () => {
  it('takes what fits, refuses what does not, and gets bytes back when a call leaves review', () => {
    const b = new PreviewBudget(100);
    expect(b.take('a', 60)).toBe(true);
    expect(b.take('b', 50)).toBe(false);
    expect(b.total).toBe(60);
    expect(b.take('b', 40)).toBe(true);
    expect(b.total).toBe(100);
    // A command's new preview replaces what it held.
    expect(b.take('a', 50)).toBe(true);
    expect(b.total).toBe(90);
    b.release('a');
    expect(b.total).toBe(40);
    b.release('a');
    expect(b.total).toBe(40);
    expect(b.take('c', 60)).toBe(true);
  });
});
