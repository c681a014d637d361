import { describe, expect, it } from 'vitest';
import { FragmentPool, FragmentWriter } from './fragments.js';

function collect(size: number, write: (w: FragmentWriter) => void) {
  const frags: Array<{ bytes: Buffer; fin: boolean }> = [];
  const w = new FragmentWriter((bytes, fin) => frags.push({ bytes, fin }), new FragmentPool(size));
  write(w);
  return { frags, text: Buffer.concat(frags.map((f) => f.bytes)).toString('utf8') };
}

describe('FragmentWriter', () => {
  it('writes the pieces, commas between items, as one message: only the last fragment is final', () => {
    const items = Array.from({ length: 500 }, (_, i) => JSON.stringify({ i, s: 'é😀中'.repeat(i % 7) }));
    const { frags, text } = collect(4096, (w) => {
      w.write('{"a":[');
      for (const [i, t] of items.entries()) w.write(t, i > 0);
      w.end(']}');
    });
    expect(text).toBe(`{"a":[${items.join(',')}]}`);
    expect(JSON.parse(text).a).toHaveLength(500);
    expect(frags.length).toBeGreaterThan(5);
    expect(frags.map((f) => f.fin)).toEqual([...frags.slice(1).map(() => false), true]);
    for (const f of frags) expect(f.bytes.length).toBeLessThanOrEqual(4096);
  });

  it('never cuts a character: every fragment is whole UTF-8', () => {
    const { frags } = collect(64, (w) => {
      for (let i = 0; i < 200; i++) w.write('😀中é', i > 0);
      w.end('');
    });
    for (const f of frags) expect(Buffer.from(f.bytes.toString('utf8')).equals(f.bytes)).toBe(true);
  });

  it('sends a piece larger than a fragment on its own, between the fragments around it', () => {
    const big = 'x'.repeat(10_000);
    const { frags, text } = collect(1024, (w) => {
      w.write('[');
      w.write('"a"');
      w.write(JSON.stringify(big), true);
      w.write('"b"', true);
      w.end(']');
    });
    expect(text).toBe(`["a",${JSON.stringify(big)},"b"]`);
    expect(frags.map((f) => f.bytes.length)).toEqual([5, 10_002, 5]);
  });

  it('copies a short fragment out of its buffer, so a small reply does not keep a megabyte alive', () => {
    const { frags } = collect(1024 * 1024, (w) => w.end('{"type":"history","commands":[]}'));
    expect(frags).toHaveLength(1);
    expect(frags[0]!.bytes.buffer.byteLength).toBeLessThan(64 * 1024);
  });

  it('reuses a fragment buffer only once the socket is done with it', () => {
    const pool = new FragmentPool(64, 8);
    const held: Array<{ bytes: Buffer; done: () => void }> = [];
    const one = new FragmentWriter((bytes, _fin, done) => {
      if (done) held.push({ bytes, done }); // queued on the socket, not written yet
    }, pool);
    for (let i = 0; i < 10; i++) one.write('"abcdefghij"', i > 0);
    one.end(']'); // a short last fragment is copied out: its buffer is free again at once
    expect(held.length).toBeGreaterThan(1);
    expect(pool.idle).toBe(1);
    const queued = held.map((h) => h.bytes.toString());
    // A second message while the first is still queued must not write into the first one's buffers.
    const two = new FragmentWriter(() => {}, pool);
    for (let i = 0; i < 10; i++) two.write('"ZZZZZZZZZZ"', i > 0);
    two.end(']');
    expect(held.map((h) => h.bytes.toString())).toEqual(queued);
    expect(pool.idle).toBe(1);
    for (const h of held) {
      h.done();
      h.done(); // a second call is harmless: the buffer is not handed out twice
    }
    expect(pool.idle).toBe(1 + held.length);
    const taken = Array.from({ length: pool.idle }, () => pool.take());
    expect(new Set(taken).size).toBe(taken.length);
  });

  it('keeps at most its bound of buffers', () => {
    const pool = new FragmentPool(16, 2);
    for (let i = 0; i < 5; i++) pool.give(Buffer.alloc(16));
    pool.give(Buffer.alloc(8)); // not one of its size
    expect(pool.idle).toBe(2);
  });
});
