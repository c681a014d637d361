/**
 * "Always" (contract 18): the rule the Allow… dialog saves says what its scope says, and compiles and
 * matches in the daemon's own environment (daemon/rules) — exact arguments by key and count, any arguments,
 * paths under a folder — and refuses what it cannot name exactly.
 */
import { describe, expect, it } from 'vitest';
import { compileExpression } from '../../daemon/rules/index.js';
import { alwaysExpression } from './always.js';

function facts(command: string, client: string, args: Record<string, unknown>) {
  return { client, command, upstream: '', tool: '', args, justification: '', now: new Date() };
}

function matches(when: string, command: string, client: string, args: Record<string, unknown>): unknown {
  const c = compileExpression(when);
  if (!c.ok) throw new Error(c.why);
  return c.run(facts(command, client, args) as never);
}

describe('[c18.panel] the rule Always saves', () => {
  it('exact arguments: every key and the count, so an extra or changed argument is not covered', () => {
    const args = { word: 'a "b"\n', n: 3, f: 2.5, yes: true, none: null };
    const r = alwaysExpression('mark', 'local', { kind: 'exact', args, shortened: false });
    if (!('when' in r)) throw new Error(r.why);
    expect(matches(r.when, 'mark', 'local', args)).toBe(true);
    expect(matches(r.when, 'mark', 'local', { ...args, extra: 1 })).toBe(false);
    expect(matches(r.when, 'mark', 'local', { ...args, n: 4 })).toBe(false);
    expect(matches(r.when, 'mark', 'other', args)).toBe(false);
    expect(matches(r.when, 'mark2', 'local', args)).toBe(false);
  });

  it('any arguments and paths under a folder', () => {
    const any = alwaysExpression('notes__read', 'local', { kind: 'any' });
    expect(any).toEqual({ when: 'command == "notes__read" && client == "local"' });
    const under = alwaysExpression('notes__read', 'local', {
      kind: 'when',
      when: 'path_under(args.path, "/srv/a")',
    });
    if (!('when' in under)) throw new Error(under.why);
    expect(matches(under.when, 'notes__read', 'local', { path: '/srv/a/b.txt' })).toBe(true);
    expect(matches(under.when, 'notes__read', 'local', { path: '/srv/b.txt' })).not.toBe(true);
  });

  it('no rule for arguments shown shortened or holding lists or objects', () => {
    expect(alwaysExpression('m', 'c', { kind: 'exact', args: { a: 'x' }, shortened: true })).toHaveProperty(
      'why',
    );
    expect(alwaysExpression('m', 'c', { kind: 'exact', args: { a: [1] }, shortened: false })).toHaveProperty(
      'why',
    );
  });
});
