/**
 * The digest (contract 13.1) on a fake clock: the first 5 waiting commands of a 10 s window are told one by
 * one, the 6th and later go as one digest at the window's end, counted per client.
 */
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../test/helpers/fake-clock.js';
import { Digest } from './digest.js';
import { digestMessage } from './message.js';

describe('[c13.1.digest] more than 5 waiting within 10 s', () => {
  it('tells 5 at once and the rest in one digest at the end of the window', () => {
    const clock = new FakeClock();
    const digests: Array<{ byClient: Map<string, number>; ids: string[] }> = [];
    const d = new Digest(clock, (held) =>
      digests.push({ byClient: new Map(held.byClient), ids: [...held.ids] }),
    );
    const told = [];
    for (let i = 0; i < 12; i++) {
      told.push(d.admit(i < 9 ? 'local' : 'claude', `c_${i}`));
      clock.advance(100);
    }
    expect(told.filter(Boolean)).toHaveLength(5);
    expect(digests).toEqual([]);
    clock.advance(10_000 - 1200 - 1);
    expect(digests).toEqual([]);
    clock.advance(1);
    expect(digests).toEqual([
      {
        byClient: new Map([
          ['local', 4],
          ['claude', 3],
        ]),
        ids: ['c_5', 'c_6', 'c_7', 'c_8', 'c_9', 'c_10', 'c_11'],
      },
    ]);
    // A new window: told one by one again.
    expect(d.admit('local', 'c_12')).toBe(true);
  });

  it('says how many it covers', () => {
    const ids = (n: number) => Array.from({ length: n }, (_, i) => `c_${i}`);
    const seven = digestMessage({ byClient: new Map([['local', 7]]), ids: ids(7) }, 'https://b.example');
    expect(seven.summary).toBe('7 more requests from local');
    expect(seven.json).toMatchObject({ event: 'digest', count: 7, pending_ids: ids(7) });
    expect(
      digestMessage(
        {
          byClient: new Map([
            ['local', 7],
            ['claude', 2],
          ]),
          ids: ids(9),
        },
        'https://b.example/',
      ),
    ).toMatchObject({ summary: '9 more requests from local (7), claude (2)', url: 'https://b.example/' });
  });
});
