/**
 * Contract 11 in the pure intake: what each rule verdict makes of a request, beside quorum, grants and the
 * read-only policy (the verdict itself is daemon/rules/'s; here it is given).
 */
import { describe, expect, it } from 'vitest';
import { KINDS } from '../../kinds/index.js';
import type { Grant } from '../model/grant-rules.js';
import { pick } from '../model/grant-rules.js';
import type { SubmitRequest } from '../ports/broker-api.js';
import type { RuleVerdict } from '../ports/rules.js';
import { type IntakeInput, intake } from './intake.js';

const T0 = Date.parse('2026-12-01T10:00:00.000Z');

const say: SubmitRequest = {
  tool: 'run_command_wait',
  command: 'say',
  args: { text: 'hi' },
  display: ['say', 'hi'],
  client: 'local',
};
const cue: SubmitRequest = { ...say, tool: 'ogf_cue', command: 'ogf.cue', args: { action: 'wave' } };
const readOnly: SubmitRequest = { ...say, approved_by: 'policy:read_only' };

const liveGrant: Grant = {
  id: 'g_1',
  command: 'say',
  client: '*',
  state: 'live',
  source: 'owner',
  created_by: 'owner',
  created_at: '2026-12-01T09:00:00.000Z',
  expires_at: '2026-12-01T11:00:00.000Z',
};

function input(verdict: RuleVerdict, over: Partial<IntakeInput> & { live?: Grant[] } = {}): IntakeInput {
  const { live = [], ...rest } = over;
  return {
    sameRequestId: undefined,
    active: [],
    pendingOfClient: 0,
    pending: 0,
    maxPendingPerClient: 100,
    maxPending: 2000,
    grants: { match: (g) => pick(live, g, T0) },
    policy: () => ({ approvals: 1 }),
    kinds: KINDS,
    rules: () => verdict,
    passkey: () => false,
    ...rest,
  };
}

const none: RuleVerdict = { kind: 'none', failClosed: false };
const allow: RuleVerdict = { kind: 'allow', rule: 'drafts', failClosed: false };
const deny: RuleVerdict = { kind: 'deny', rule: 'no-secrets', note: 'that folder is private' };
const ask2: RuleVerdict = { kind: 'ask', rule: 'deploy-two', approvals: 2, failClosed: false };
const ask: RuleVerdict = { kind: 'ask', rule: 'look', failClosed: false };

describe('[c11.decide] intake with the owner’s rules (contract 11)', () => {
  it('deny: created denied by rule:<id> with the note, before quorum and grants', () => {
    const got = intake(say, input(deny, { live: [liveGrant], policy: () => ({ approvals: 3 }) }));
    expect(got).toEqual({ kind: 'deny', deniedBy: 'rule:no-secrets', note: 'that folder is private' });
  });

  it('allow: approved by rule:<id>, taking no grant’s use', () => {
    expect(intake(say, input(allow, { live: [liveGrant] }))).toEqual({
      kind: 'create',
      approvedBy: 'rule:drafts',
    });
  });

  it('allow never approves a cue or a command needing several owners: it counts as ask', () => {
    expect(intake(cue, input(allow))).toEqual({ kind: 'create' });
    expect(intake(say, input(allow, { policy: () => ({ approvals: 2 }) }))).toEqual({
      kind: 'create',
      approvalsNeeded: 2,
    });
  });

  it('ask: approvals_needed is the larger of the command’s and the rule’s', () => {
    expect(intake(say, input(ask2))).toEqual({ kind: 'create', approvalsNeeded: 2 });
    expect(intake(say, input(ask2, { policy: () => ({ approvals: 3 }) }))).toEqual({
      kind: 'create',
      approvalsNeeded: 3,
    });
  });

  it('ask with a count of 1: a grant may approve, the read-only policy may not', () => {
    expect(intake(say, input(ask, { live: [liveGrant] }))).toMatchObject({ approvedBy: 'grant:g_1' });
    expect(intake(readOnly, input(ask))).toEqual({ kind: 'create' });
    expect(intake(readOnly, input(ask, { live: [liveGrant] }))).toMatchObject({ approvedBy: 'grant:g_1' });
    // ask with 2 owners: no grant approves (rule 1).
    expect(intake(say, input(ask2, { live: [liveGrant] }))).toEqual({ kind: 'create', approvalsNeeded: 2 });
  });

  it('none: the v2 path (grants, then the policy, then the owners)', () => {
    expect(intake(say, input(none, { live: [liveGrant] }))).toMatchObject({ approvedBy: 'grant:g_1' });
    expect(intake(readOnly, input(none, { live: [liveGrant] }))).toEqual({
      kind: 'create',
      approvedBy: 'policy:read_only',
    });
    expect(intake(say, input(none))).toEqual({ kind: 'create' });
  });

  it('[c11.fail-closed] after a deny rule failed, no allow rule, grant or policy approves', () => {
    const failedThenAllow: RuleVerdict = { kind: 'allow', rule: 'drafts', failClosed: true };
    const failedNone: RuleVerdict = { kind: 'none', failClosed: true };
    expect(intake(say, input(failedThenAllow, { live: [liveGrant] }))).toEqual({ kind: 'create' });
    expect(intake(say, input(failedNone, { live: [liveGrant] }))).toEqual({ kind: 'create' });
    expect(intake(readOnly, input(failedNone))).toEqual({ kind: 'create' });
  });

  it('rules come after the request_id, twin and cap checks', () => {
    let asked = 0;
    const counting = input(deny, { pendingOfClient: 100 });
    counting.rules = () => {
      asked++;
      return deny;
    };
    expect(intake(say, counting)).toMatchObject({ kind: 'refused', code: 'TooManyPending' });
    expect(asked).toBe(0);
  });
});
