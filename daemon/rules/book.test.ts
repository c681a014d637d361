import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../test/helpers/fake-clock.js';
import { compileRules, RuleBook, type RuleEntry } from './book.js';
import type { RuleFacts } from './environment.js';

const facts = (args: Record<string, unknown>): RuleFacts => ({
  client: 'local',
  command: 'say',
  upstream: '',
  tool: '',
  args,
  justification: '',
  now: new Date('2026-12-02T10:00:00.000Z'),
});

function book(entries: RuleEntry[], lines: unknown[] = [], clock = new FakeClock()): RuleBook {
  const compiled = compileRules(entries);
  if (!compiled.ok) throw new Error(compiled.why);
  return new RuleBook(compiled.rules, { log: (...a: unknown[]) => lines.push(a) }, clock);
}

describe('[c11.decide] the rule book: first true decides', () => {
  const rules: RuleEntry[] = [
    { id: 'no-x', when: "args.text == 'x'", decision: 'deny', note: 'not x' },
    { id: 'two', when: "args.text.startsWith('deploy')", decision: 'ask', approvals: 2 },
    { id: 'all', when: 'true', decision: 'allow' },
  ];
  it('in order', () => {
    const b = book(rules);
    expect(b.decide(facts({ text: 'x' }))).toEqual({ kind: 'deny', rule: 'no-x', note: 'not x' });
    expect(b.decide(facts({ text: 'deploy it' }))).toEqual({
      kind: 'ask',
      rule: 'two',
      approvals: 2,
      failClosed: false,
    });
    expect(b.decide(facts({ text: 'hi' }))).toEqual({ kind: 'allow', rule: 'all', failClosed: false });
    expect(book([]).decide(facts({}))).toEqual({ kind: 'none', failClosed: false });
  });

  it('[c11.fail-closed] a failing deny rule marks the verdict; a failing allow is just not true', () => {
    const b = book([
      { id: 'bad-allow', when: 'args.n > 1', decision: 'allow' },
      { id: 'bad-deny', when: "args.missing == 'y'", decision: 'deny' },
      { id: 'all', when: 'true', decision: 'allow' },
    ]);
    expect(b.decide(facts({ n: 'not a number' }))).toEqual({ kind: 'allow', rule: 'all', failClosed: true });
  });

  it('[c11.fail-closed] logs a failing rule once per rule per minute', () => {
    const lines: unknown[] = [];
    const clock = new FakeClock();
    const b = book([{ id: 'bad', when: "args.missing == 'y'", decision: 'deny' }], lines, clock);
    for (let i = 0; i < 100; i++) b.decide(facts({}));
    expect(lines).toHaveLength(1);
    expect(JSON.stringify(lines[0])).toContain('"rule":"bad"');
    clock.advance(59_999);
    b.decide(facts({}));
    expect(lines).toHaveLength(1);
    clock.advance(1);
    b.decide(facts({}));
    expect(lines).toHaveLength(2);
  });

  it('[c11.bad-rule] refuses repeated ids, approvals without ask and bad expressions, naming the id', () => {
    expect(
      compileRules([
        { id: 'a', when: 'true', decision: 'deny' },
        { id: 'a', when: 'true', decision: 'deny' },
      ]),
    ).toMatchObject({
      ok: false,
      why: expect.stringMatching(/rules\[1\] \(id a\): id must be unique/),
    });
    expect(compileRules([{ id: 'b', when: 'true', decision: 'allow', approvals: 2 }])).toMatchObject({
      ok: false,
      why: expect.stringMatching(/rules\[0\] \(id b\): approvals is accepted only with decision "ask"/),
    });
    expect(compileRules([{ id: 'c', when: 'nope', decision: 'allow' }])).toMatchObject({
      ok: false,
      why: expect.stringMatching(/rules\[0\] \(id c\): when does not type-check: Unknown variable: nope/),
    });
  });
});
