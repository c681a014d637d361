/**
 * The preview of large arguments in owner Views (args-preview.ts; an addition to contract 5): bounded
 * whatever the AI sends, never a changed value, every argument named or counted.
 */
import { describe, expect, it } from 'vitest';
import {
  ARG_KEEP_BYTES,
  argsPreview,
  CUT_NAME_CHARS,
  CUT_START_CHARS,
  PREVIEW_BUDGET_BYTES,
  utf8Bytes,
  VIEW_ARGS_MAX_BYTES,
} from './args-preview.js';

const bytes = (v: unknown) => Buffer.byteLength(JSON.stringify(v));

describe('[c5.owner-frames-bounded] argsPreview', () => {
  it('[c5.owner-frames-bounded] counts UTF-8 bytes as Buffer does, for every width', () => {
    for (const t of ['', 'abc', 'ü', '✓', '😀', JSON.stringify('\ud800x'), 'a😀ü✓'.repeat(100)])
      expect(utf8Bytes(t)).toBe(Buffer.byteLength(t));
  });

  it('[c5.owner-frames-bounded] arguments up to 16 KiB of JSON travel whole', () => {
    const args = { path: '/tmp/a', content: 'x'.repeat(VIEW_ARGS_MAX_BYTES - 30) };
    expect(bytes(args)).toBeLessThanOrEqual(VIEW_ARGS_MAX_BYTES);
    expect(argsPreview(args)).toBeUndefined();
    // Measured in bytes, not characters: 6,000 three-byte characters are over.
    expect(argsPreview({ t: '✓'.repeat(6000) })).toMatchObject({ args_truncated: true });
  });

  it('[c5.owner-frames-bounded] a large value is named, sized and started; small ones stay whole and exact', () => {
    const content = `😀${'A'.repeat(1_000_000)}`;
    const p = argsPreview({ path: '/tmp/a', content, n: 3, deep: [[{ a: 1 }]] })!;
    expect(p.args).toEqual({ path: '/tmp/a', n: 3, deep: [[{ a: 1 }]] });
    expect(p.args_bytes).toBe(bytes({ path: '/tmp/a', content, n: 3, deep: [[{ a: 1 }]] }));
    expect(p.args_cut).toEqual([
      {
        name: 'content',
        at: 1,
        bytes: bytes(content),
        start: JSON.stringify(content).slice(0, CUT_START_CHARS),
      },
    ]);
    expect(p.args_hidden).toBeUndefined();
  });

  it('[c5.owner-frames-bounded] a start never splits a surrogate pair; a long name is cut and its length kept', () => {
    const value = `${'a'.repeat(CUT_START_CHARS - 2)}😀${'b'.repeat(ARG_KEEP_BYTES * 10)}`;
    const name = 'k'.repeat(CUT_NAME_CHARS + 10);
    const p = argsPreview({ [name]: value })!;
    const cut = p.args_cut![0]!;
    expect(cut.start).toBe(`"${'a'.repeat(CUT_START_CHARS - 2)}`);
    expect(cut.name).toBe('k'.repeat(CUT_NAME_CHARS));
    expect(cut.name_chars).toBe(CUT_NAME_CHARS + 10);
  });

  it('[c5.owner-frames-bounded] 100,000 tiny arguments and 500 large ones: bounded, the rest counted', () => {
    const args: Record<string, unknown> = {};
    for (let i = 0; i < 100_000; i++) args[`k${i}`] = i;
    for (let i = 0; i < 500; i++) args[`big${i}`] = 'x'.repeat(3000);
    const p = argsPreview(args)!;
    const shown = Object.keys(p.args).length + p.args_cut.length;
    expect(shown + (p.args_hidden ?? 0)).toBe(100_500);
    expect(bytes({ a: p.args, c: p.args_cut })).toBeLessThan(PREVIEW_BUDGET_BYTES + 1024);
  });
});
