/**
 * The one character rule for text an AI sends (contracts.md 1.3 (v2), 3.2) and the one way the terminal
 * prints such text (contract 5 (v2)). The AI is the adversary: a control character (C0, DEL, C1) can drive
 * a terminal — clear the screen, move the cursor, redraw another command's lines — and a bidirectional
 * control can make text read in an order other than the one that runs. Input refuses both; output escapes
 * both, so rows stored before the input rule existed cannot redraw the terminal either. The character
 * classes and the escapes are the panel's too (common/visible.ts): one implementation for both.
 */
import { BIDI, CONTROLS, characterCount, escapeVisible, needsEscape } from '../../common/visible.js';

const FORBIDDEN_RE = new RegExp(`[${CONTROLS}${BIDI}]`, 'u');
/** The same without newline (U+000A) and tab (U+0009), which `allow_newlines` admits (contract 1.3). */
const FORBIDDEN_BUT_NEWLINE_TAB_RE = new RegExp(
  `[\\u0000-\\u0008\\u000b-\\u001f\\u007f-\\u009f${BIDI}]`,
  'u',
);

/** Whether `text` holds a character contract 1.3 refuses in AI text (newline and tab admitted on request). */
export function hasForbiddenCharacter(text: string, allowNewlines = false): boolean {
  return (allowNewlines ? FORBIDDEN_BUT_NEWLINE_TAB_RE : FORBIDDEN_RE).test(text);
}

/** What a refusal says is accepted, completing "a string of at most N characters …" (never the value). */
export function charactersAccepted(allowNewlines: boolean): string {
  return allowNewlines
    ? 'without control or bidirectional characters other than newline and tab'
    : 'without control or bidirectional characters';
}

/** Whether `text` holds anything `escapeForTerminal` would change (the panel's rule, common/visible.ts). */
/** Characters of a text as a person counts them (code points of the value itself: contract 12). */
export { characterCount, needsEscape };

/**
 * `text` safe to print on a terminal: every control, bidi control and line separator becomes a visible
 * escape (`\u001b`, `\n`, `\r`, `\t`), so the text prints as exactly one line of inert characters
 * (contract 5 (v2)) — the same escapes the panel shows (common/visible.ts). Backslashes are left alone:
 * this is for prose (justifications, notes) where readability wins; argv, where the exact characters
 * matter, uses `quoteArg`.
 */
export function escapeForTerminal(text: string): string {
  return escapeVisible(text);
}

const SHELL_SAFE_RE = /^[A-Za-z0-9_./:=@%+,-]+$/;

/**
 * One argv element for display, shell-like (nothing is ever run through a shell): bare when plain,
 * `'…'` when it needs quoting, and bash's ANSI-C form `$'…'` when it holds a character that must be
 * escaped. That form is unambiguous — `$'a\nb'` is a newline, `'a\nb'` a backslash and an n — so the owner
 * can tell exactly which characters will run.
 */
export function quoteArg(arg: string): string {
  if (SHELL_SAFE_RE.test(arg)) return arg;
  if (!needsEscape(arg)) return `'${arg.replaceAll("'", "'\\''")}'`;
  const body = escapeVisible(arg.replace(/[\\']/gu, (c) => `\\${c}`));
  return `$'${body}'`;
}
