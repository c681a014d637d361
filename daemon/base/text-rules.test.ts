import { describe, expect, it } from 'vitest';
import { escapeForTerminal, hasForbiddenCharacter, needsEscape, quoteArg } from './text-rules.js';

/** Every character contract 1.3 names: C0, DEL, C1 and the bidi controls. */
const FORBIDDEN = [
  ...Array.from({ length: 0x20 }, (_, i) => i),
  0x7f,
  ...Array.from({ length: 0x20 }, (_, i) => 0x80 + i),
  0x061c,
  0x200e,
  0x200f,
  0x202a,
  0x202b,
  0x202c,
  0x202d,
  0x202e,
  0x2066,
  0x2067,
  0x2068,
  0x2069,
].map((c) => String.fromCharCode(c));

describe('[c1.3.text-controls] the character rule (contract 1.3)', () => {
  it('refuses every control and bidi control; allow_newlines admits newline and tab only', () => {
    for (const ch of FORBIDDEN) {
      const hex = ch.charCodeAt(0).toString(16);
      expect(hasForbiddenCharacter(`a${ch}b`), hex).toBe(true);
      expect(hasForbiddenCharacter(`a${ch}b`, true), hex).toBe(ch !== '\n' && ch !== '\t');
    }
  });

  it('admits ordinary text of every script, including neighbours of the refused ranges', () => {
    for (const s of [
      'plain',
      'héllo',
      '😀',
      'עברית',
      'العربية',
      '\u00a0',
      '\u200d',
      '\u202f',
      '\u2065',
      '\u206a',
      '~',
    ]) {
      expect(hasForbiddenCharacter(s), s).toBe(false);
    }
  });
});

describe('[c5.terminal-escaped] terminal output (contract 5)', () => {
  it('escapes every control, bidi control and line separator, so the text prints as one inert line', () => {
    for (const ch of [...FORBIDDEN, '\u2028', '\u2029']) {
      const out = escapeForTerminal(`a${ch}b`);
      expect(out, ch.charCodeAt(0).toString(16)).toMatch(/^a\\(u[0-9a-f]{4}|n|r|t)b$/);
      expect(hasForbiddenCharacter(out)).toBe(false);
      expect(needsEscape(out)).toBe(false);
    }
    expect(escapeForTerminal('\u001b[2J\r\n\t\u202e')).toBe('\\u001b[2J\\r\\n\\t\\u202e');
    expect(escapeForTerminal('C:\\path é 😀')).toBe('C:\\path é 😀');
  });

  it("quotes argv unambiguously: bare, single-quoted, or $'…' when something is escaped", () => {
    expect(quoteArg('plain-word_1.txt')).toBe('plain-word_1.txt');
    expect(quoteArg("it's here")).toBe("'it'\\''s here'");
    expect(quoteArg('a\\nb')).toBe("'a\\nb'");
    expect(quoteArg('a\nb')).toBe("$'a\\nb'");
    expect(quoteArg("\u001b[2J it's \\")).toBe("$'\\u001b[2J it\\'s \\\\'");
    expect(quoteArg('\u202etxt')).toBe("$'\\u202etxt'");
  });
});
