import { describe, expect, it } from 'vitest';
import { FragmentWriter } from './fragments.js';

function collect(size: number, write: (w: FragmentWriter) => void) {
  const frags: Array<{ bytes: Buffer; fin: boolean }> = [];
  const w = new FragmentWriter((bytes, fin) => frags.push({ bytes, fin }), size);
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
});
