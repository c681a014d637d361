/**
 * Attack: a catastrophic regular expression in a rule (contracts.md 11: "`matches` with RE2 semantics, in
 * linear time"). @marcbachmann/cel-js implements `matches` with JavaScript's backtracking RegExp: the rule
 * `args.text.matches("^(a+)+$")` and an AI sending 40 `a`s and a `b` would stop the daemon's event loop for
 * minutes (each more `a` doubles it) — every client and every owner tab with it. The pattern may even come
 * from the AI (`args.a.matches(args.b)`). daemon/rules/ routes `matches` to RE2 (re2js).
 *
 * Seen failing before the fix: with the rename in daemon/rules/environment.ts switched off, the child below
 * was killed at its deadline (a hang cannot take the test runner with it, so it runs in a child process).
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './helpers/daemon.js';

const RULES = join(ROOT, 'dist', 'daemon', 'rules', 'index.js');

/** Evaluates `expr` on `args` in a child node process; null when it did not finish within the deadline. */
function evaluateInChild(expr: string, args: Record<string, unknown>): string | null {
  const script = `
    const { compileExpression } = await import(${JSON.stringify(RULES)});
    const c = compileExpression(${JSON.stringify(expr)});
    if (!c.ok) { console.log('refused: ' + c.why); process.exit(0); }
    const r = c.run({ client: 'local', command: 'x', upstream: '', tool: '', justification: '',
      now: new Date(), args: ${JSON.stringify(args)} });
    console.log(r instanceof Error ? 'error: ' + r.message : String(r));
  `;
  // A generous deadline: RE2 answers in milliseconds; a backtracking engine would not answer in years.
  const out = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
    timeout: 30_000,
    killSignal: 'SIGKILL',
  });
  if (out.signal !== null) return null;
  expect(out.stderr).toBe('');
  return out.stdout.trim();
}

describe('[c11.regex] a catastrophic pattern in a rule cannot stall the daemon', () => {
  it('the owner’s pattern on a value the AI chose', { timeout: 60_000 }, () => {
    const text = `${'a'.repeat(5_000)}b`;
    expect(evaluateInChild('args.text.matches("^(a+)+$")', { text })).toBe('false');
    expect(evaluateInChild('matches(args.text, "^(a|aa)+$")', { text })).toBe('false');
  });

  it('a pattern the AI chose, inside a macro', { timeout: 60_000 }, () => {
    const args = { list: [`${'a'.repeat(5_000)}!`], pattern: '^(a*)*$' };
    expect(evaluateInChild('args.list.exists(x, x.matches(args.pattern))', args)).toBe('false');
    // What RE2 cannot run in linear time is an error, and an error is never true.
    expect(evaluateInChild('args.list.exists(x, x.matches("(a)\\\\1"))', args)).toMatch(/^error: .*RE2/);
  });
});
