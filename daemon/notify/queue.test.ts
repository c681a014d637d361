/**
 * The delivery queue's caps and retries (contract 13.1) on a fake clock: 16 in flight, past 1,000 waiting
 * the oldest dropped (logged once, with a count), retries after 1 s and 5 s on a network error or 5xx only,
 * then `notify_failed` with the channel and status.
 */
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../test/helpers/fake-clock.js';
import type { Logger } from '../base/index.js';
import type { Attempt } from './attempt.js';
import { DeliveryQueue } from './queue.js';

function recorder(): Logger & { lines: Array<{ event: string; fields: Record<string, unknown> }> } {
  const lines: Array<{ event: string; fields: Record<string, unknown> }> = [];
  return { lines, log: (_l, event, fields = {}) => lines.push({ event, fields }) };
}

/** A send that stays open until the test settles it. */
function controlled() {
  const open: Array<(a: Attempt) => void> = [];
  return { open, send: () => new Promise<Attempt>((r) => open.push(r)) };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('[c13.1.queue] the delivery queue', () => {
  it('keeps at most 16 in flight and drops the oldest past 1,000 waiting, logged once with a count', async () => {
    const clock = new FakeClock();
    const log = recorder();
    const q = new DeliveryQueue({ clock, log });
    const c = controlled();
    const outcomes: string[] = [];
    for (let i = 0; i < 1100; i++)
      q.push({
        channel: 'c',
        event: `m${i}`,
        send: c.send,
        done: (a) => outcomes.push(`${i}:${a.ok ? 'ok' : (a as { error?: string }).error}`),
      });
    expect(q.inFlight).toBe(16);
    expect(q.waiting).toBe(1000);
    // The oldest waiting (16..99) went; the 16 in flight and the newest 1000 stay.
    expect(outcomes.slice(0, 2)).toEqual(['16:dropped', '17:dropped']);
    expect(outcomes).toHaveLength(84);
    clock.advance(1000);
    expect(log.lines.filter((l) => l.event === 'notify_dropped')).toEqual([
      { event: 'notify_dropped', fields: { count: 84, reason: 'more than 1000 messages waiting' } },
    ]);
    c.open.shift()!({ ok: true, status: 200 });
    await tick();
    expect(q.inFlight).toBe(16);
    expect(q.waiting).toBe(999);
    q.close();
  });

  it('retries a 5xx after 1 s and 5 s, then logs notify_failed; a 4xx is not retried', async () => {
    const clock = new FakeClock();
    const log = recorder();
    const q = new DeliveryQueue({ clock, log });
    let tries = 0;
    q.push({
      channel: 'five',
      event: 'waiting',
      send: async () => {
        tries++;
        return { ok: false, retry: true, status: 503 };
      },
    });
    await tick();
    expect(tries).toBe(1);
    clock.advance(999);
    await tick();
    expect(tries).toBe(1);
    clock.advance(1);
    await tick();
    expect(tries).toBe(2);
    clock.advance(4999);
    await tick();
    expect(tries).toBe(2);
    clock.advance(1);
    await tick();
    expect(tries).toBe(3);
    clock.advance(60_000);
    await tick();
    expect(tries).toBe(3);
    expect(log.lines.filter((l) => l.event === 'notify_failed')).toEqual([
      { event: 'notify_failed', fields: { channel: 'five', about: 'waiting', attempts: 3, status: 503 } },
    ]);
    let four = 0;
    q.push({
      channel: 'four',
      event: 'waiting',
      send: async () => {
        four++;
        return { ok: false, retry: false, status: 404 };
      },
    });
    await tick();
    clock.advance(10_000);
    await tick();
    expect(four).toBe(1);
    q.close();
  });
});
