/**
 * The panel's bounded JSON (bounded-json.ts, issue 19) and the shared escapes (common/visible.ts):
 * pure functions, checked here on the code the browser runs.
 */
import { describe, expect, it } from 'vitest';
import { escapeVisible, visiblePieces } from '../../common/visible.js';
import { characterCount, measure, piecesText, pretty, preview, quotedPieces } from './bounded-json.js';

function nest(depth: number, inner: unknown): unknown {
  let v = inner;
  for (let i = 0; i < depth; i++) v = [v];
  return v;
}

const HOSTILE = 'photo-\u202Egnp.sh "q" \\ back\u0000\u001b[2J\u0085\u2028\u2066x\ty\rz';

describe('[c7.args-bounded] bounded JSON for the panel', () => {
  it('pretty-prints a small value exactly as JSON.stringify(v, null, 2) does', () => {
    for (const v of [{ a: 1, b: [true, null, 'x'], c: { d: [], e: {} } }, [1, [2, [3]]], 'plain', 42, null]) {
      const p = pretty(v, 10_000);
      expect(p.complete).toBe(true);
      expect(piecesText(p.pieces)).toBe(JSON.stringify(v, null, 2));
    }
    expect(piecesText(preview({ a: [1, 2] }, 100).pieces)).toBe('{"a":[1,2]}');
  });

  it('stops after max characters, however deep or large the value (2,600 deep: ~13.5 M characters whole)', () => {
    const deep = nest(2600, 0);
    const p = pretty(deep, 240);
    expect(p.complete).toBe(false);
    expect(piecesText(p.pieces).length).toBe(240);
    expect(piecesText(pretty(nest(1_000_000, 0), 80).pieces).length).toBe(80);
    expect(piecesText(preview(new Array(1_000_000).fill(0), 80).pieces)).toBe(`[${'0,'.repeat(39)}0`);
  });

  it('measures size and depth iteratively, and stops counting after maxNodes values', () => {
    expect(measure(nest(32, 0))).toEqual({ chars: 65, depth: 32, complete: true });
    expect(measure({ a: 'xy' })).toEqual({
      chars: JSON.stringify({ a: 'xy' }).length,
      depth: 1,
      complete: true,
    });
    expect(measure(nest(200_000, 0)).depth).toBe(200_000);
    expect(measure(new Array(2_000).fill(0), 1_000).complete).toBe(false);
  });
});

describe('[c5.upstream-args-visible] strings as the owner sees them', () => {
  it('quotes a string as valid JSON reading back to the exact value, with no raw control or bidi character', () => {
    const shown = piecesText(quotedPieces(HOSTILE));
    expect(JSON.parse(shown)).toBe(HOSTILE);
    expect(shown).toContain('photo-\\u202egnp.sh');
    expect(shown).toBe(`"${escapeVisible(HOSTILE.replace(/["\\]/g, (c) => `\\${c}`))}"`);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point.
    expect(shown).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202e\u2028\u2066]/u);
    // Each escape is its own piece, so the panel can mark it.
    expect(quotedPieces('a\u202eb').filter((p) => p.escape)).toEqual([{ text: '\\u202e', escape: true }]);
  });

  it('keeps newlines as lines when asked (contract 12), escaping everything else, tab included', () => {
    expect(piecesText(visiblePieces('a\nb\u001b[2J\tc', true))).toBe('a\nb\\u001b[2J\\tc');
    expect(piecesText(visiblePieces('a\nb', false))).toBe('a\\nb');
  });

  it('counts characters of the value itself (code points, not UTF-16 units)', () => {
    expect(characterCount('a\nb\u001b[2Jc')).toBe(8);
    expect(characterCount('😀x')).toBe(2);
  });
});
