import { describe, expect, it } from 'vitest';
import { KINDS } from '../../kinds/index.js';
import type { Grant } from '../model/grant-rules.js';
import type { Command, Event } from '../model/lifecycle.js';
import { decisionRefusal, grantRefusal, grantSpecOf, revokeAnswer } from './owner-decisions.js';

// Pure unit tests: fake commands and grants in, the owner's refusal (or none) out.
const AT = '2026-12-01T10:00:00.000Z';

function cmd(over: Partial<Command> = {}): Command {
  return {
    id: 'c_1',
    version: 1,
    tool: 'run_command_wait',
    command: 'say',
    args: { text: 'hi' },
    display: ['say', 'hi'],
    client: 'local',
    created_at: AT,
    review_expires_at: AT,
    phase: { state: 'awaiting_review' },
    ...over,
  };
}

const approve: Event = { type: 'approve', at: AT, by: 'alice' };

describe('decisionRefusal (contracts 5, 9)', () => {
  it('[c2.rule-5] AlreadyDecided comes before the version check', () => {
    const decided = cmd({ version: 2, phase: { state: 'approved', decided_at: AT, decided_by: 'bob' } });
    expect(decisionRefusal(decided, 'c_1', 1, approve, 'alice')).toMatchObject({ code: 'AlreadyDecided' });
  });

  it('a repeat approval by the same owner is AlreadyApproved, before the version check', () => {
    const c = cmd({ version: 2, approvals_needed: 3, approvals: [{ by: 'alice', at: AT }] });
    const r = decisionRefusal(c, 'c_1', 1, approve, 'alice');
    expect(r).toMatchObject({ code: 'AlreadyApproved' });
    expect(r?.message).toContain('2 more owner approvals');
  });

  it('a stale version is VersionConflict; no command is NotFound; otherwise go ahead', () => {
    expect(decisionRefusal(cmd({ version: 3 }), 'c_1', 2, approve, 'alice')).toMatchObject({
      code: 'VersionConflict',
    });
    expect(decisionRefusal(undefined, 'c_x', 1, approve, 'alice')).toMatchObject({ code: 'NotFound' });
    expect(decisionRefusal(cmd(), 'c_1', 1, approve, 'alice')).toBeUndefined();
  });
});

describe('grants (contracts 5 v2, 8)', () => {
  const rule = (name: string) => (name === 'say' ? undefined : `${name} refused`);

  it('[c8.grantable] cues and quorum commands are not grantable; others follow the book', () => {
    // A cue's refusal is its kind's answer (core/model/kind-policy.ts), no longer the book's rule for `ogf.cue`.
    expect(grantRefusal(cmd({ tool: 'ogf_cue', command: 'ogf.cue' }), KINDS, rule)).toContain(
      'ogf.cue cannot be granted',
    );
    expect(grantRefusal(cmd({ approvals_needed: 2, approvals: [] }), KINDS, rule)).toContain(
      'needs 2 owners',
    );
    expect(grantRefusal(cmd(), KINDS, rule)).toBeUndefined();
    expect(grantRefusal(cmd({ command: 'other' }), KINDS, rule)).toBe('other refused');
  });

  it('an approve-with-grant grants the command and client, with its args only when asked', () => {
    expect(grantSpecOf(cmd(), { ttl_s: 60, same_args: false })).toEqual({
      command: 'say',
      client: 'local',
      ttl_s: 60,
    });
    expect(grantSpecOf(cmd(), { ttl_s: 60, same_args: true, uses: 2, note: 'n' })).toEqual({
      command: 'say',
      client: 'local',
      ttl_s: 60,
      args: { text: 'hi' },
      uses: 2,
      note: 'n',
    });
  });

  it('[c8.end] revoke: unknown is NotFound, a config grant NotRevocable, an ended one ok as it is', () => {
    const g: Grant = {
      id: 'g_1',
      command: 'say',
      client: '*',
      state: 'live',
      source: 'owner',
      created_by: 'o',
      created_at: AT,
    };
    expect(revokeAnswer(undefined, 'g_x')).toMatchObject({ ok: false, code: 'NotFound' });
    expect(revokeAnswer({ ...g, source: 'config' }, 'g_1')).toMatchObject({
      ok: false,
      code: 'NotRevocable',
    });
    expect(revokeAnswer({ ...g, state: 'revoked' }, 'g_1')).toEqual({
      ok: true,
      grant: { ...g, state: 'revoked' },
    });
    expect(revokeAnswer(g, 'g_1')).toBeUndefined();
  });
});
