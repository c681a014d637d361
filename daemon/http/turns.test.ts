/**
 * TurnLimit (turns.ts): at most `perTurn` requests go on in one event-loop turn, the rest in order in the
 * turns after, with the loop polling between — seen as an I/O callback (a real socket's data) that runs
 * between two batches of released requests.
 */
import { once } from 'node:events';
import { connect, createServer, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { TurnLimit } from './turns.js';

/** The number of the event-loop turn we are in: bumped by an immediate that re-arms itself. */
function turnCounter(): { now(): number; stop(): void } {
  let n = 0;
  let on = true;
  const tick = () => {
    n++;
    if (on) setImmediate(tick);
  };
  setImmediate(tick);
  return { now: () => n, stop: () => (on = false) };
}

describe('TurnLimit', () => {
  it('lets perTurn requests go on at once and the rest, in order, perTurn a turn in the turns after', async () => {
    const limit = new TurnLimit(3);
    const turns = turnCounter();
    const order: number[] = [];
    const turnOf = new Map<number, number>();
    const asked = Array.from({ length: 10 }, (_, i) => {
      const wait = limit.turn();
      if (wait === undefined) {
        order.push(i);
        turnOf.set(i, turns.now());
        return Promise.resolve();
      }
      return wait.then(() => {
        order.push(i);
        turnOf.set(i, turns.now());
      });
    });
    expect(limit.waiting).toBe(7);
    await Promise.all(asked);
    turns.stop();
    expect(order).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    const batches = [...turnOf.values()];
    // Three at once, then three per later turn, each batch in a turn of its own.
    expect(new Set(batches.slice(0, 3)).size).toBe(1);
    expect(new Set(batches.slice(3, 6)).size).toBe(1);
    expect(new Set(batches.slice(6, 9)).size).toBe(1);
    expect(batches[3]!).toBeGreaterThan(batches[0]!);
    expect(batches[6]!).toBeGreaterThan(batches[3]!);
    expect(batches[9]!).toBeGreaterThan(batches[6]!);
  });

  it('a lone request never waits, turn after turn', async () => {
    const limit = new TurnLimit(1);
    for (let i = 0; i < 5; i++) {
      expect(limit.turn()).toBeUndefined();
      await new Promise((r) => setImmediate(r));
      await new Promise((r) => setImmediate(r));
    }
  });

  it('the loop polls between batches: a socket’s data is read before the last batch goes on', async () => {
    const peer = createServer();
    const accepted = new Promise<Socket>((r) => peer.once('connection', r));
    peer.listen(0, '127.0.0.1');
    await once(peer, 'listening');
    const out = connect((peer.address() as { port: number }).port, '127.0.0.1');
    const inbound = await accepted;
    const events: string[] = [];
    inbound.on('data', () => events.push('io'));
    const limit = new TurnLimit(1);
    const asked = Array.from({ length: 200 }, (_, i) => {
      const wait = limit.turn();
      const go = () => {
        events.push(`r${i}`);
        // Each request keeps its turn busy a moment, as a real one does.
        const end = performance.now() + 0.2;
        while (performance.now() < end);
      };
      return wait === undefined ? Promise.resolve(go()) : wait.then(go);
    });
    out.write('x');
    await Promise.all(asked);
    const io = events.indexOf('io');
    expect(io).toBeGreaterThan(0);
    expect(io).toBeLessThan(events.length - 1);
    out.destroy();
    inbound.destroy();
    peer.close();
  });
});
