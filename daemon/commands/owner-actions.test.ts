import { describe, expect, it } from 'vitest';
import { UsageError } from '../base/errors.js';
import { parseOwnerArgs } from './owner-actions.js';

const usage = (sub: string, argv: string[]) => {
  try {
    parseOwnerArgs(sub, argv);
  } catch (e) {
    if (e instanceof UsageError) return e.message;
    throw e;
  }
  throw new Error('accepted');
};

describe('parseOwnerArgs', () => {
  it('reads flags with separate or = values', () => {
    const p = parseOwnerArgs('reconcile', [
      'c_abcdefgh',
      '--outcome=delivered',
      '--note',
      'checked it',
      '--data-dir',
      '/d',
    ]);
    expect(p.args).toEqual(['c_abcdefgh']);
    expect(p.flags.get('--outcome')).toBe('delivered');
    expect(p.flags.get('--note')).toBe('checked it');
    expect(p.flags.get('--data-dir')).toBe('/d');
    expect(parseOwnerArgs('list', ['--all']).flags.get('--all')).toBe(true);
  });

  it('names the offending flag or argument in one line', () => {
    expect(usage('list', ['--note', 'x'])).toMatch(/^--note: unknown flag/);
    expect(usage('approve', [])).toMatch(/^ID: /);
    expect(usage('approve', ['short'])).toMatch(/^ID: must be a pending_id/);
    expect(usage('approve', ['c_abcdefgh', 'c_other123'])).toMatch(/unexpected argument/);
    expect(usage('reconcile', ['c_abcdefgh'])).toBe('--outcome: required, one of delivered, not_delivered');
    expect(usage('deny', ['c_abcdefgh', '--note', 'x'.repeat(2001)])).toMatch(
      /^--note: must be at most 2000/,
    );
    expect(usage('deny', ['c_abcdefgh', '--data-dir'])).toBe('--data-dir: needs a value');
  });
});
