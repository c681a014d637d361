import { describe, expect, it } from 'vitest';
import { anchorPattern, compilePattern, type OwnerPattern } from './patterns.js';

function compiled(pattern: string): OwnerPattern {
  const c = compilePattern(pattern);
  if (!c.ok) throw new Error(c.why);
  return c.pattern;
}

describe('[c1.3.linear-patterns] owner patterns (contract 1.3)', () => {
  it('anchors the whole pattern however its anchors are written', () => {
    expect(anchorPattern('^on|off$')).toBe('^(?:^on|off$)$');
    const p = compiled('^on|off$');
    expect(['on', 'off'].map((v) => p.matches(v))).toEqual([true, true]);
    expect(['on --help; and anything', 'xoff', 'onoff', 'on\n'].map((v) => p.matches(v))).toEqual([
      false,
      false,
      false,
      false,
    ]);
    expect(compiled('[a-z]+').matches('abc')).toBe(true);
    expect(compiled('[a-z]+').matches('abc1')).toBe(false);
  });

  it('matches by code point, with inline flags and \\x{…} escapes', () => {
    expect(compiled('^.{3}$').matches('😀é漢')).toBe(true);
    expect(compiled('^.{3}$').matches('😀😀')).toBe(false);
    expect(compiled('^\\p{L}+$').matches('héllo')).toBe(true);
    expect(compiled('^\\x{e9}$').matches('é')).toBe(true);
    expect(compiled('(?i)^abc$').matches('ABC')).toBe(true);
    expect(compiled('^.+$').matches('a\nb')).toBe(false);
  });

  it('answers a catastrophic-backtracking value at once (the result, not the time, is checked)', () => {
    const p = compiled('^([A-Za-z0-9]+ ?)*$');
    expect(p.matches(`${'a'.repeat(4095)}!`)).toBe(false);
    expect(p.matches('ab cd '.repeat(600))).toBe(true);
    expect(compiled('^(x+x+)+y$').matches('x'.repeat(4096))).toBe(false);
  });

  it('refuses what RE2 cannot compile, saying why in one line', () => {
    for (const p of [
      '^(a)\\1$',
      '(?=a)a',
      '(?!a)b',
      '(?<=a)a',
      '(?<!a)b',
      'a)|(.*',
      '\\Qab',
      '(',
      '^\\u00e9$',
      'a\nb(',
    ]) {
      const c = compilePattern(p);
      expect(c.ok, p).toBe(false);
      if (!c.ok) {
        expect(c.why).toMatch(
          /^must be an RE2 regular expression \(linear-time matching: no backreferences or lookaround/,
        );
        expect(c.why).not.toContain('\n');
      }
    }
  });
});
