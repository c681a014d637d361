import { describe, expect, it } from 'vitest';
import { argumentBoundsError, MAX_ARG_DEPTH, MAX_ARGS_JSON_CHARS } from './bounds.js';

function nest(depth: number, inner: unknown): unknown {
  let v = inner;
  for (let i = 0; i < depth; i++) v = [v];
  return v;
}

describe('[c7.args-bounded] the depth and size bounds of an upstream call (issue 19)', () => {
  it('accepts 32 levels of arrays and objects, refuses 33, naming the argument, the limit and where', () => {
    expect(argumentBoundsError({ a: nest(MAX_ARG_DEPTH, 'x') })).toBeUndefined();
    expect(argumentBoundsError({ a: nest(MAX_ARG_DEPTH + 1, 'x') })).toBe(
      `a must nest at most 32 levels of arrays and objects, got deeper at a${'.0'.repeat(32)}`,
    );
    // Objects count like arrays, and the path names keys.
    let obj: unknown = 1;
    for (let i = 0; i < 33; i++) obj = { k: obj };
    expect(argumentBoundsError({ ok: 1, b: obj })).toMatch(
      /^b must nest at most 32 levels .* at b(\.k){32}$/,
    );
  });

  it('walks no deeper than the limit: 500,000 levels cost the same as 33', () => {
    expect(argumentBoundsError({ a: nest(500_000, 0) })).toMatch(/^a must nest at most 32/);
  });

  it('shows keys escaped and cut in the refusal (the AI reads it; it stays one short line)', () => {
    const key = `\u202e${'k'.repeat(500)}`;
    const message = argumentBoundsError({ [key]: nest(40, 0) })!;
    expect(message.startsWith(`\\u202e${'k'.repeat(58)}… must nest`)).toBe(true);
    expect(message.length).toBeLessThan(400);
  });

  it('refuses more than 1 MiB of JSON, naming the largest argument', () => {
    const big = 'x'.repeat(MAX_ARGS_JSON_CHARS);
    expect(argumentBoundsError({ small: 'a', big })).toBe(
      `arguments must be at most 1048576 characters of JSON, got ${MAX_ARGS_JSON_CHARS + 22} (big alone is ${MAX_ARGS_JSON_CHARS + 2})`,
    );
    expect(argumentBoundsError({ big: 'x'.repeat(MAX_ARGS_JSON_CHARS - 10) })).toBeUndefined();
  });
});
