/**
 * JSON for the owner's eyes in bounded work (issue 19 finding 1). `JSON.stringify(value, null, 2)` of an
 * AI's argument has no bound: a value nested 2,600 deep is 5 KB on the wire and ~13.5 M characters
 * pretty-printed, and 150 of them crashed the panel's tab. Everything here stops after a fixed amount of
 * work or output, whatever the value: `measure` to decide how to show a value, `preview` for one line,
 * `pretty` for a small value shown whole. Strings are shown JSON-quoted with every control and bidi
 * character as a visible escape (common/visible.ts) — valid JSON that reads back to the exact value.
 * Pure (no DOM), so the daemon's tests can check it too.
 */
import { characterCount, type Piece, visiblePieces } from '../../common/visible.js';

/** What `measure` learned about a value. */
export interface Measure {
  /** Characters of compact JSON (strings counted without their escapes); a lower bound when not complete. */
  chars: number;
  /** How deep arrays and objects nest: 0 for a scalar, 1 for `[1]`. */
  depth: number;
  /** Whether the whole value was walked (false: it has more than `maxNodes` values). */
  complete: boolean;
}

/**
 * Walks at most `maxNodes` values of `value` (iteratively: no depth can overflow the stack) and reports its
 * size and depth. Work: O(maxNodes) plus one `Object.keys` per object visited.
 */
export function measure(value: unknown, maxNodes = 1_000_000): Measure {
  let chars = 0;
  let depth = 0;
  let pushed = 1;
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [v, d] = stack.pop()!;
    if (typeof v === 'string') chars += v.length + 2;
    else if (v === null || typeof v !== 'object') chars += String(v).length;
    else {
      depth = Math.max(depth, d + 1);
      const keys = Array.isArray(v) ? null : Object.keys(v);
      const n = keys === null ? (v as unknown[]).length : keys.length;
      chars += 2 + Math.max(0, n - 1);
      pushed += n;
      if (pushed > maxNodes) return { chars, depth, complete: false };
      for (let i = 0; i < n; i++) {
        if (keys === null) stack.push([(v as unknown[])[i], d + 1]);
        else {
          chars += keys[i]!.length + 3;
          stack.push([(v as Record<string, unknown>)[keys[i]!], d + 1]);
        }
      }
    }
  }
  return { chars, depth, complete: true };
}

/** The characters of a string as a person counts them (visible.ts: one rule for the panel and `list`). */
export { characterCount };

/** `text` JSON-quoted as pieces: `"`, `\\` and `\"` as JSON writes them, every control and bidi escaped. */
export function quotedPieces(text: string): Piece[] {
  const inner = visiblePieces(text).map((p) =>
    p.escape ? p : { text: p.text.replace(/["\\]/g, (c) => `\\${c}`) },
  );
  return [{ text: '"' }, ...inner, { text: '"' }];
}

/** Collects pieces until `max` characters, then stops (`full` says so). */
class Writer {
  readonly pieces: Piece[] = [];
  length = 0;
  constructor(readonly max: number) {}
  get full(): boolean {
    return this.length >= this.max;
  }
  put(p: Piece): void {
    if (this.full) return;
    const room = this.max - this.length;
    // An escape is never cut in half: it goes whole or not at all.
    if (p.text.length > room && p.escape) {
      this.length = this.max;
      return;
    }
    const text = p.text.length > room ? p.text.slice(0, room) : p.text;
    this.pieces.push(p.escape ? { text, escape: true } : { text });
    this.length += text.length;
  }
  text(t: string): void {
    this.put({ text: t });
  }
}

/** A scalar's JSON text (`undefined` for what JSON cannot hold, as in a View it never is). */
function scalarText(v: unknown): string {
  return JSON.stringify(v) ?? String(v);
}

/** Writes `v` as JSON, pretty (`indent` not null) or compact, stopping once `w` is full. */
function write(w: Writer, v: unknown, indent: string | null): void {
  if (w.full) return;
  if (typeof v === 'string') {
    // Only the start of a long string can fit: quote no more of it than there is room for.
    for (const p of quotedPieces(v.length > w.max ? v.slice(0, w.max) : v)) w.put(p);
    return;
  }
  if (v === null || typeof v !== 'object') {
    w.text(scalarText(v));
    return;
  }
  const isArray = Array.isArray(v);
  const keys = isArray ? null : Object.keys(v);
  const n = keys === null ? (v as unknown[]).length : keys.length;
  const [open, close] = isArray ? ['[', ']'] : ['{', '}'];
  if (n === 0) {
    w.text(open + close);
    return;
  }
  const inner = indent === null ? null : `${indent}  `;
  w.text(open);
  for (let i = 0; i < n && !w.full; i++) {
    if (i > 0) w.text(',');
    if (inner !== null) w.text(`\n${inner}`);
    if (keys !== null) {
      for (const p of quotedPieces(keys[i]!.length > w.max ? keys[i]!.slice(0, w.max) : keys[i]!)) w.put(p);
      w.text(inner === null ? ':' : ': ');
    }
    write(w, keys === null ? (v as unknown[])[i] : (v as Record<string, unknown>)[keys[i]!], inner);
  }
  if (indent !== null) w.text(`\n${indent}`);
  w.text(close);
}

/** The result of a bounded print: its pieces, and whether they hold the whole value. */
export interface Printed {
  pieces: Piece[];
  complete: boolean;
}

function print(value: unknown, max: number, indent: string | null): Printed {
  // One character more than allowed tells "exactly max" from "cut".
  const w = new Writer(max + 1);
  write(w, value, indent);
  if (w.length <= max) return { pieces: w.pieces, complete: true };
  const cut = new Writer(max);
  for (const p of w.pieces) cut.put(p);
  return { pieces: cut.pieces, complete: false };
}

/**
 * `value` as pretty JSON (2-space indent), at most `max` characters. Work is O(max): each level of nesting
 * writes at least one character before going deeper, so recursion is at most `max` deep too.
 */
export function pretty(value: unknown, max: number): Printed {
  return print(value, max, '');
}

/** `value` as compact one-line JSON, at most `max` characters (the summary of a folded value). */
export function preview(value: unknown, max: number): Printed {
  return print(value, max, null);
}

/** Pieces as one string (what a terminal or a test reads). */
export function piecesText(pieces: Piece[]): string {
  return pieces.map((p) => p.text).join('');
}
