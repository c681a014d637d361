/**
 * An upstream schema's `pattern`s on RE2 (re2js), with their size bounded. RE2 matches in time linear in
 * the value, but times the pattern's program size, and its lazy DFA builds states in time that grows
 * faster than that: `[a-z]{1000}` repeated 60 times (660 characters, 60,002 instructions) took 66 s on
 * one 200 KB value (issue 19 finding 4, found while fixing it). So a pattern compiling to more than
 * MAX_PATTERN_INSTRUCTIONS (or longer than MAX_PATTERN_CHARS, before compiling it) is refused like one
 * RE2 cannot compile, and ./schema-cost.ts charges each match by the value's length times the program's
 * size.
 */
import { RE2JS } from 're2js';

/**
 * A pattern longer than this is refused before compiling: compiling costs its program size, which RE2's
 * repetition limit (1,000) keeps under ~100 instructions per character (`[a-z]{1000}` 46 times: 506
 * characters, 46,002 instructions, ~40–100 ms on a busy 2-core machine).
 */
export const MAX_PATTERN_CHARS = 512;
/** A pattern compiling to more RE2 instructions than this is refused (`^[a-z0-9_-]{1,64}$` has 131). */
export const MAX_PATTERN_INSTRUCTIONS = 1000;

/** A pattern RE2 refused, with the reason (thrown from inside Ajv's compile). */
export class UnsupportedPattern extends Error {}

/**
 * The program size of a compiled pattern. re2js keeps it private (`re2Input.prog.inst`);
 * schema.test.ts fails at once if an upgrade moves it (then every pattern would count as the
 * largest accepted, still bounded).
 */
export function instructions(re: RE2JS): number {
  const inst = (re as unknown as { re2Input?: { prog?: { inst?: unknown[] } } }).re2Input?.prog?.inst;
  return Array.isArray(inst) ? inst.length : MAX_PATTERN_INSTRUCTIONS;
}

const LINEAR = 'linear-time matching: no backreferences or lookaround';

/**
 * All of one schema's patterns together may compile to this many instructions (compiling costs about
 * 1 ms per thousand; `^[a-z0-9_-]{1,64}$` has 131).
 */
export const MAX_SCHEMA_PATTERN_INSTRUCTIONS = 20_000;

/** One schema's compiled patterns: the cost walk and Ajv's compile each ask for them. */
const cache = new Map<string, RE2JS>();

/** Forgets the patterns of the schema just compiled (called after each compile). */
export function clearPatternCache(): void {
  cache.clear();
}

/** Compiles an ECMA-262 `pattern` for RE2, or throws UnsupportedPattern saying why. */
export function compilePattern(pattern: string): RE2JS {
  const cached = cache.get(pattern);
  if (cached !== undefined) return cached;
  let re: RE2JS;
  const quoted = JSON.stringify(pattern.slice(0, 200));
  if (pattern.length > MAX_PATTERN_CHARS) {
    throw new UnsupportedPattern(
      `its inputSchema has a pattern longer than ${MAX_PATTERN_CHARS} characters (${pattern.length}): ${quoted}`,
    );
  }
  try {
    re = RE2JS.compile(RE2JS.translateRegExp(pattern));
  } catch (e) {
    const detail = (e as Error).message.replace(/^error parsing regexp: /, '').slice(0, 200);
    throw new UnsupportedPattern(
      `its inputSchema has a pattern RE2 cannot compile (${LINEAR}): ${quoted} (${detail})`,
    );
  }
  const size = instructions(re);
  if (size > MAX_PATTERN_INSTRUCTIONS) {
    throw new UnsupportedPattern(
      `its inputSchema has a pattern too large for bounded matching (${size} RE2 instructions, at most ${MAX_PATTERN_INSTRUCTIONS}): ${quoted}`,
    );
  }
  cache.set(pattern, re);
  return re;
}

/** The program size of `pattern`, or 0 when it does not compile (Ajv's compile then refuses it). */
export function patternSize(pattern: string): number {
  try {
    return instructions(compilePattern(pattern));
  } catch {
    return 0;
  }
}
