import { describe, expect, it } from 'vitest';
import { compileExpression, MAX_EXPRESSION_CHARS, type RuleFacts } from './environment.js';

const facts: RuleFacts = {
  client: 'local',
  command: 'notes__write_file',
  upstream: 'notes',
  tool: 'write_file',
  args: { path: '/home/u/notes/drafts/a.md', content: 'hi', n: 3, flag: true, list: ['a', 'b'] },
  justification: '',
  now: new Date('2026-12-02T10:30:00.000Z'),
};

function run(expr: string, f: RuleFacts = facts): boolean | Error {
  const c = compileExpression(expr);
  if (!c.ok) throw new Error(c.why);
  return c.run(f);
}

function why(expr: string): string {
  const c = compileExpression(expr);
  if (c.ok) throw new Error(`${expr} compiled`);
  return c.why;
}

describe('the rules’ CEL environment (contract 11)', () => {
  it('reads every variable of the contract', () => {
    expect(run("client == 'local' && command == 'notes__write_file'")).toBe(true);
    expect(run("upstream == 'notes' && tool == 'write_file' && justification == ''")).toBe(true);
    expect(run("args.path.startsWith('/home/u') && args.n > 2 && args.flag == true")).toBe(true);
    expect(run("'b' in args.list && args.list.size() == 2")).toBe(true);
    expect(run("now > timestamp('2026-01-01T00:00:00Z') && now.getHours() == 10")).toBe(true);
    expect(run("now.getDayOfWeek('Europe/Berlin') == 3")).toBe(true);
  });

  it('has path_under as the contract defines it', () => {
    expect(run("path_under(args.path, '/home/u/notes/drafts')")).toBe(true);
    expect(run("path_under(args.path, '/home/u/notes/drafts-old')")).toBe(false);
    expect(run("path_under('/home/u/notes/drafts/../x', '/home/u/notes/drafts')")).toBe(false);
  });

  it('refuses unknown names, unknown functions and non-boolean expressions at compile', () => {
    expect(why('session_id == "x"')).toMatch(/does not type-check: Unknown variable: session_id/);
    expect(why('frobnicate(args.path)')).toMatch(/does not type-check: .*frobnicate/);
    expect(why('args.path')).toMatch(/must be a boolean expression, but its type is dyn/);
    expect(why("client + 'x'")).toMatch(/must be a boolean expression, but its type is string/);
    expect(why('client == ')).toMatch(/does not compile/);
    expect(why('client == 1')).toMatch(/does not type-check/);
    expect(why('   ')).toMatch(/empty/);
    expect(why(`client == '${'x'.repeat(MAX_EXPRESSION_CHARS)}'`)).toMatch(/at most 4096/);
    // A message names `matches` as the owner wrote it, not the RE2 function it is routed to.
    expect(why('client.matches(1)')).toMatch(/string\.matches\(int\)/);
  });

  it('an expression that fails on a request is an Error, never true', () => {
    expect(run("args.missing == 'x'")).toBeInstanceOf(Error);
    expect(run("path_under(args.n, '/')")).toBeInstanceOf(Error);
    expect(run("args.path.matches('(a')")).toBeInstanceOf(Error);
    expect(run("args.path.matches('(a)\\\\1')")).toBeInstanceOf(Error);
  });

  it('matches is RE2: partial match, RE2 syntax, the global form too', () => {
    expect(run("args.path.matches('drafts/[a-z]+\\\\.md$')")).toBe(true);
    expect(run("args.path.matches('^drafts')")).toBe(false);
    expect(run("matches(args.path, '\\\\pL+')")).toBe(true);
    expect(run("args.list.exists(x, x.matches('^b$'))")).toBe(true);
  });

  it('a catastrophic pattern on a long value answers at once (RE2: linear)', () => {
    // With JavaScript's RegExp this would run for longer than the universe; test/attack-rules-regex.test.ts
    // runs it in a child process with a deadline, where a hang cannot take the test runner with it.
    const long = { ...facts, args: { ...facts.args, s: `${'a'.repeat(100_000)}b` } };
    expect(run("args.s.matches('^(a+)+$')", long)).toBe(false);
    expect(run('args.s.matches(args.s)', long)).toBeInstanceOf(Error); // a pattern over 512 characters
  });
});
