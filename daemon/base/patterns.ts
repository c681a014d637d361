/**
 * Owner-written `pattern`s of string params (contracts.md 1.3 (v2)): anchored as `^(?:…)$` however they are
 * written, and matched in linear time by RE2 (re2js, pure JavaScript).
 *
 * Why not `RegExp`: JavaScript's backtracking engine runs a pattern such as `^([A-Za-z0-9]+ ?)*$` in time
 * exponential in the value, on the event loop — a 34-character value the AI chose blocked the whole daemon
 * for ~29 s. RE2 never backtracks, so it cannot do that; the price is that it refuses what needs
 * backtracking (backreferences, lookaround), which the contract makes a config error.
 *
 * Why wrap rather than check the text: `^on|off$` starts with `^` and ends with `$` yet means `(^on)|(off$)`,
 * so it accepted `on --help; and anything`. `^(?:^on|off$)$` means what the owner meant; an anchor the owner
 * wrote inside is harmless. The pattern must also compile on its own, so it cannot close the wrapper's
 * group early (`a)|(.*`) and escape the anchors.
 *
 * RE2 reads strings by code point (like the `u` flag the old code used): `.` is one code point, so an emoji
 * is one `.`; `\x{e9}` or a literal `é` names a character (RE2 has no `\u00e9`); `(?i)` and friends are
 * inline flags. `.` does not match a newline and `$` is the end of the value, not of a line.
 */
import { createRequire } from 'node:module';
import type { RE2JS as Re2js } from 're2js';
import { escapeForTerminal } from './text-rules.js';

/**
 * re2js, loaded on the first pattern compiled: every CLI subcommand loads base/, and most compile none
 * (`audit verify` is timed with its start-up against sha256sum: bench row 15).
 */
let re2js: typeof Re2js | undefined;
function RE2(): typeof Re2js {
  re2js ??= (createRequire(import.meta.url)('re2js') as { RE2JS: typeof Re2js }).RE2JS;
  return re2js;
}

/** A compiled owner pattern: `matches` tests the whole value in time linear in its length. */
export interface OwnerPattern {
  /** The pattern as the daemon applies it, `^(?:…)$` (published in list_commands). */
  readonly anchored: string;
  matches(value: string): boolean;
}

/** `^(?:pattern)$`: the whole value must match, however the owner wrote the anchors. */
export function anchorPattern(pattern: string): string {
  return `^(?:${pattern})$`;
}

export type CompiledPattern = { ok: true; pattern: OwnerPattern } | { ok: false; why: string };

/**
 * Compiles an owner pattern with RE2, once (at config load and when the catalog is built, never per call).
 * On failure `why` says what RE2 objected to, for the config error naming the field.
 */
export function compilePattern(pattern: string): CompiledPattern {
  const anchored = anchorPattern(pattern);
  let re: Re2js;
  try {
    RE2().compile(pattern);
    re = RE2().compile(anchored);
  } catch (e) {
    // One line whatever the owner's pattern holds (contract 1.1: a bad config is one line).
    const detail = escapeForTerminal(
      e instanceof Error ? e.message.replace(/^error parsing regexp: /, '') : String(e),
    );
    return {
      ok: false,
      why: `must be an RE2 regular expression (linear-time matching: no backreferences or lookaround; write \\x{e9}, not \\u00e9), got one RE2 cannot compile (${detail})`,
    };
  }
  return { ok: true, pattern: { anchored, matches: (value) => re.testExact(value) } };
}
