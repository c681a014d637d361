/**
 * The one rule for showing AI text to the owner, shared by the daemon (`ogf-broker list`,
 * daemon/base/text-rules.ts) and the panel (owner-ui/), so the terminal and the browser cannot drift apart.
 * It lives in common/, which all products import and which imports none of them; the daemon's build
 * compiles it and the panel's bundle includes it. Pure string work, no DOM and no Node.
 *
 * The AI is the adversary: a control character (C0, DEL, C1) can drive a terminal or hide in a page, and a
 * bidirectional control makes text read in an order other than the one that runs (`photo-\u202Egnp.sh`
 * reads `photo-hs.png`, issue 19). Whatever reaches the owner shows each of them as a visible escape
 * (`\u202e`, `\u001b`, and `\n`, `\r`, `\t` by name) — contract 5 (v2) for `list`, 12 (v3) for the panel.
 */

/** C0, DEL and C1: the characters a terminal may act on rather than print (contract 1.3). */
export const CONTROLS = '\\u0000-\\u001f\\u007f-\\u009f';
/** The bidirectional controls of contract 1.3: ALM, LRM, RLM, LRE..RLO, LRI..PDI. */
export const BIDI = '\\u061c\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069';

/**
 * What is shown escaped: every control and bidi control, newline and tab included, plus LINE SEPARATOR
 * and PARAGRAPH SEPARATOR, which some renderers also break lines on.
 */
const ESCAPED = `[${CONTROLS}${BIDI}\\u2028\\u2029]`;
const ESCAPED_RE = new RegExp(ESCAPED, 'gu');
const NEEDS_ESCAPE_RE = new RegExp(ESCAPED, 'u');
/** The same without newline, for text shown as its lines (contract 12 (v3)). */
const ESCAPED_BUT_NEWLINE_RE = new RegExp(
  `[\\u0000-\\u0009\\u000b-\\u001f\\u007f-\\u009f${BIDI}\\u2028\\u2029]`,
  'gu',
);
/** The same without newline and tab, for prose and program output the panel shows as it is laid out. */
const ESCAPED_BUT_LAYOUT_RE = new RegExp(
  `[\\u0000-\\u0008\\u000b-\\u001f\\u007f-\\u009f${BIDI}\\u2028\\u2029]`,
  'gu',
);

const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** The visible escape of one character: `\n`, `\r`, `\t` by name, else `\uXXXX` (lower-case hex). */
export function escapeChar(ch: string): string {
  return NAMED[ch] ?? `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/** Whether `text` holds anything `escapeVisible` would change. */
export function needsEscape(text: string): boolean {
  return NEEDS_ESCAPE_RE.test(text);
}

/** `text` as one line of inert characters: every control, bidi control and line separator escaped. */
export function escapeVisible(text: string): string {
  return text.replace(ESCAPED_RE, escapeChar);
}

/**
 * `text` keeping its newlines and tabs (program output, prose laid out in a `<pre>` or `pre-wrap` block),
 * every other control, bidi control and line separator escaped.
 */
export function escapeKeepingLayout(text: string): string {
  return text.replace(ESCAPED_BUT_LAYOUT_RE, escapeChar);
}

/**
 * The characters of a string as a person counts them: code points, not UTF-16 units, and of the value
 * itself, not of its JSON (contract 12: a 336-character file once read "343 characters" in its JSON form).
 */
export function characterCount(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0xdc00 || c > 0xdfff || i === 0 || (text.charCodeAt(i - 1) & 0xfc00) !== 0xd800) n++;
  }
  return n;
}

/** One piece of shown text: plain characters, or the visible escape of one character. */
export type Piece = { text: string; escape?: true };

/**
 * `text` cut into plain runs and escapes, so a renderer can mark each escape as one (the panel styles them
 * apart from typed backslashes). `keepNewlines`: newlines stay plain (text shown as its lines).
 */
export function visiblePieces(text: string, keepNewlines = false): Piece[] {
  const re = keepNewlines ? ESCAPED_BUT_NEWLINE_RE : ESCAPED_RE;
  const pieces: Piece[] = [];
  let last = 0;
  re.lastIndex = 0;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    if (m.index > last) pieces.push({ text: text.slice(last, m.index) });
    pieces.push({ text: escapeChar(m[0]), escape: true });
    last = m.index + m[0].length;
  }
  if (last < text.length) pieces.push({ text: text.slice(last) });
  return pieces;
}
