/**
 * The review deadlines' one timer (expiry.ts), on a fake clock: each command expires at its own deadline, in
 * order, however deadlines were set, moved and dropped around it, and a refused expiry comes back a second
 * later. The broker-level tests (broker.test.ts, lifecycle.test.ts) drive the same class through the broker.
 */
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../../test/helpers/fake-clock.js';
import { iso, silentLogger } from '../../base/index.js';
import type { Command } from '../model/index.js';
import { Expiry } from './expiry.js';

function harness() {
  const clock = new FakeClock();
  const commands = new Map<string, Command>();
  const expired: Array<{ id: string; at: string }> = [];
  let refuse = false;
  const expiry = new Expiry({
    clock,
    log: silentLogger,
    active: (id) => commands.get(id),
    expire: (c, at) => {
      if (refuse) return Promise.reject(new Error('disk full'));
      expired.push({ id: c.id, at });
      commands.delete(c.id);
      expiry.cancel(c.id);
      return Promise.resolve();
    },
  });
  const awaiting = (id: string, inMs: number): Command => {
    const c = {
      id,
      phase: { state: 'awaiting_review' },
      review_expires_at: iso(clock.now() + inMs),
    } as unknown as Command;
    commands.set(id, c);
    return c;
  };
  return {
    clock,
    commands,
    expired,
    expiry,
    awaiting,
    refuse: (v: boolean) => {
      refuse = v;
    },
  };
}

describe('[c2.review-deadline] review deadlines on one timer', () => {
  it('expires each command at its own deadline, in deadline order, and not before', () => {
    const h = harness();
    const t0 = h.clock.now();
    h.expiry.arm(h.awaiting('c', 3000));
    h.expiry.arm(h.awaiting('a', 1000));
    h.expiry.arm(h.awaiting('b', 2000));
    h.clock.advance(999);
    expect(h.expired).toEqual([]);
    h.clock.advance(1);
    expect(h.expired).toEqual([{ id: 'a', at: iso(t0 + 1000) }]);
    h.clock.advance(2000);
    expect(h.expired).toEqual([
      { id: 'a', at: iso(t0 + 1000) },
      { id: 'b', at: iso(t0 + 2000) },
      { id: 'c', at: iso(t0 + 3000) },
    ]);
    expect(h.clock.pending).toBe(0);
  });

  it('a dropped or decided command never expires; a moved deadline counts, earlier or later', () => {
    const h = harness();
    h.expiry.arm(h.awaiting('dropped', 1000));
    h.expiry.arm(h.awaiting('decided', 1000));
    h.expiry.arm(h.awaiting('later', 1000));
    h.expiry.arm(h.awaiting('sooner', 5000));
    h.expiry.cancel('dropped');
    // Decided without the broker cancelling yet: the view says it is no longer awaiting review.
    h.commands.set('decided', { ...h.commands.get('decided')!, phase: { state: 'approved' } } as Command);
    h.expiry.arm({ ...h.commands.get('later')!, review_expires_at: iso(h.clock.now() + 4000) } as Command);
    h.expiry.arm({ ...h.commands.get('sooner')!, review_expires_at: iso(h.clock.now() + 500) } as Command);
    h.clock.advance(600);
    expect(h.expired.map((e) => e.id)).toEqual(['sooner']);
    h.clock.advance(3000);
    expect(h.expired.map((e) => e.id)).toEqual(['sooner']);
    h.clock.advance(400);
    expect(h.expired.map((e) => e.id)).toEqual(['sooner', 'later']);
    h.clock.advance(10_000);
    expect(h.expired.map((e) => e.id)).toEqual(['sooner', 'later']);
  });

  it('keeps every live deadline through many set and dropped ones (the heap is rebuilt, nothing is lost)', () => {
    const h = harness();
    for (let i = 0; i < 1000; i++) {
      h.expiry.arm(h.awaiting(`gone${i}`, 100 + i));
      h.expiry.cancel(`gone${i}`);
      h.commands.delete(`gone${i}`);
      if (i % 100 === 0) h.expiry.arm(h.awaiting(`kept${i}`, 50_000 - i));
    }
    h.clock.advance(60_000);
    expect(h.expired.map((e) => e.id)).toEqual(
      [900, 800, 700, 600, 500, 400, 300, 200, 100, 0].map((i) => `kept${i}`),
    );
  });

  it('an expiry the store refused is armed again a second later, from the command as it is then', async () => {
    const h = harness();
    h.expiry.arm(h.awaiting('x', 1000));
    h.refuse(true);
    h.clock.advance(1000);
    await Promise.resolve();
    expect(h.expired).toEqual([]);
    // The broker's rollback: every command awaiting review without a deadline is armed a second later.
    h.expiry.rearm(h.commands.values());
    h.refuse(false);
    h.clock.advance(999);
    expect(h.expired).toEqual([]);
    h.clock.advance(1);
    expect(h.expired.map((e) => e.id)).toEqual(['x']);
  });

  it('close: nothing fires any more, and nothing can be armed', () => {
    const h = harness();
    h.expiry.arm(h.awaiting('a', 1000));
    h.expiry.close();
    h.expiry.arm(h.awaiting('b', 1000));
    h.clock.advance(10_000);
    expect(h.expired).toEqual([]);
    expect(h.clock.pending).toBe(0);
  });
});
