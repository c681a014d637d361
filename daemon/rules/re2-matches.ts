/**
 * CEL's `matches` on RE2 (contracts.md 11: "`matches` with RE2 semantics, in linear time").
 *
 * Why: @marcbachmann/cel-js 8 implements `string.matches(string)` with `new RegExp(b).test(a)` — JavaScript's
 * backtracking engine, on the event loop. A rule `args.text.matches("^(a+)+$")` and an AI sending 40 `a`s
 * and a `b` would stop the whole daemon (every submit, every owner tab) for minutes; worse, the pattern
 * itself may come from the AI (`args.a.matches(args.b)`). RE2 (re2js, already the daemon's engine for
 * params' patterns) never backtracks. The library freezes its built-in overloads and refuses a second
 * `string.matches(string)`, so environment.ts renames every `matches` call in a parsed expression to
 * RE2_MATCHES, registered here, before it is type-checked (and checks at start that the rename happens).
 *
 * Bounds (as daemon/kinds/upstream/re2-pattern.ts found, issue 19 finding 4): RE2 is linear in the value
 * but times the program's size, so a pattern longer than MAX_PATTERN_CHARS or compiling to more than
 * MAX_PATTERN_INSTRUCTIONS is an evaluation error (the rule is then not true). Compiled patterns are kept
 * in a small cache, so a literal pattern compiles once, not per request.
 */
import { RE2JS } from 're2js';

/** The name the environment gives CEL's `matches` after renaming (environment.ts). */
export const RE2_MATCHES = 'matches_re2';
export const MAX_PATTERN_CHARS = 512;
export const MAX_PATTERN_INSTRUCTIONS = 1000;
const CACHE_SIZE = 256;

/** Compiled patterns, least recently used first (a Map keeps insertion order). */
const cache = new Map<string, RE2JS>();

function instructions(re: RE2JS): number {
  const inst = (re as unknown as { re2Input?: { prog?: { inst?: unknown[] } } }).re2Input?.prog?.inst;
  return Array.isArray(inst) ? inst.length : MAX_PATTERN_INSTRUCTIONS;
}

/** The compiled pattern, or throws an Error saying why it cannot be used (an evaluation error in CEL). */
export function re2(pattern: string): RE2JS {
  const hit = cache.get(pattern);
  if (hit !== undefined) {
    cache.delete(pattern);
    cache.set(pattern, hit);
    return hit;
  }
  if (pattern.length > MAX_PATTERN_CHARS) {
    throw new Error(`matches: the pattern is longer than ${MAX_PATTERN_CHARS} characters`);
  }
  let re: RE2JS;
  try {
    re = RE2JS.compile(pattern);
  } catch (e) {
    const why = (e as Error).message.replace(/^error parsing regexp: /, '').slice(0, 200);
    throw new Error(`matches: RE2 cannot compile the pattern (no backreferences or lookaround): ${why}`);
  }
  if (instructions(re) > MAX_PATTERN_INSTRUCTIONS) {
    throw new Error(
      `matches: the pattern is too large for bounded matching (over ${MAX_PATTERN_INSTRUCTIONS} RE2 instructions)`,
    );
  }
  cache.set(pattern, re);
  if (cache.size > CACHE_SIZE) cache.delete(cache.keys().next().value as string);
  return re;
}

/** CEL `s.matches(p)`: true when `p` matches any part of `s` (RE2 partial match, as the CEL spec says). */
export function re2Matches(s: string, pattern: string): boolean {
  return re2(pattern).test(s);
}
