import { describe, expect, it } from 'vitest';
import { KINDS } from '../../kinds/index.js';
import { sha256Digest } from '../model/digest.js';
import type { Grant } from '../model/grant-rules.js';
import { pick } from '../model/grant-rules.js';
import type { Command } from '../model/lifecycle.js';
import { pruneCommand } from '../model/retention-rule.js';
import type { SubmitRequest } from '../ports/broker-api.js';
import { commandOf, type IntakeInput, intake } from './intake.js';

// Pure unit tests (architecture.md example 2): fake data in, a tagged result out, no broker, no store.
const T0 = Date.parse('2026-12-01T10:00:00.000Z');

function req(over: Partial<SubmitRequest> = {}): SubmitRequest {
  return {
    tool: 'run_command_wait',
    command: 'say',
    args: { text: 'hi' },
    display: ['say', 'hi'],
    client: 'local',
    ...over,
  };
}

function made(r: SubmitRequest, id = 'c_1'): Command {
  return commandOf(r, id, T0, 60_000, undefined, KINDS);
}

function grant(over: Partial<Grant> = {}): Grant {
  return {
    id: 'g_1',
    command: 'say',
    client: '*',
    state: 'live',
    source: 'owner',
    created_by: 'owner',
    created_at: '2026-12-01T09:00:00.000Z',
    expires_at: '2026-12-01T11:00:00.000Z',
    ...over,
  };
}

function input(over: Partial<IntakeInput> & { live?: Grant[] } = {}): IntakeInput {
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
    rules: () => ({ kind: 'none', failClosed: false }),
    passkey: () => false,
    ...rest,
  };
}

describe('intake: request_id (contract 3.1)', () => {
  it('[c1.3.pending-caps] a repeat of the same request under its request_id is the existing command, even at the cap', () => {
    const r = req({ request_id: 'r1' });
    const c = made(r);
    const got = intake(r, input({ sameRequestId: c, pendingOfClient: 100, pending: 2000 }));
    expect(got).toEqual({ kind: 'existing', command: c });
  });

  it('the same request_id with different arguments is RequestIdReused, naming the command it belongs to', () => {
    const c = made(req({ request_id: 'r1' }));
    const got = intake(req({ request_id: 'r1', args: { text: 'other' } }), input({ sameRequestId: c }));
    expect(got).toMatchObject({ kind: 'refused', code: 'RequestIdReused' });
    expect(got.kind === 'refused' && got.message).toContain('pending_id c_1');
  });

  it('[c3.2.retention] a pruned command still matches a repeat with the same large arguments', () => {
    const big = { text: 'x'.repeat(10_000) };
    const r = req({ request_id: 'r1', args: big });
    const c: Command = {
      ...made(r),
      phase: {
        state: 'denied',
        reason: 'OwnerDenied',
        detail: 'no',
        decided_at: '2026-12-01T10:00:01.000Z',
        decided_by: 'o',
      },
    };
    const pruned = pruneCommand(c, '2026-12-20T00:00:00.000Z', sha256Digest);
    if (!pruned.ok) throw new Error(pruned.message);
    expect(intake(r, input({ sameRequestId: pruned.command }))).toEqual({
      kind: 'existing',
      command: pruned.command,
    });
    expect(
      intake(
        req({ request_id: 'r1', args: { text: 'y'.repeat(10_000) } }),
        input({ sameRequestId: pruned.command }),
      ),
    ).toMatchObject({ kind: 'refused', code: 'RequestIdReused' });
  });
});

describe('intake: twins (contracts 3.1, 7)', () => {
  const cue = req({ tool: 'ogf_cue', command: 'ogf.cue', session_key: 'k1' });
  const call = req({ tool: 'upstream', command: 'fs__read', args: { path: '/a' } });

  it('[c7.twin] an identical PENDING cue or upstream call of the same client is returned, not queued again', () => {
    for (const r of [cue, call]) {
      const twin = made(r, 'c_twin');
      expect(intake(r, input({ active: [made(req(), 'c_other'), twin] }))).toEqual({
        kind: 'existing',
        command: twin,
      });
    }
  });

  it('another client, other arguments or another session are no twin', () => {
    for (const active of [
      [made({ ...call, client: 'other' })],
      [made({ ...call, args: { path: '/b' } })],
      [made({ ...cue, session_key: 'k2' })],
    ]) {
      expect(intake(active[0]?.tool === 'ogf_cue' ? cue : call, input({ active }))).toMatchObject({
        kind: 'create',
      });
    }
  });

  it('a catalog command has no twin rule: the same request again is a new command', () => {
    const r = req();
    expect(intake(r, input({ active: [made(r)] }))).toMatchObject({ kind: 'create' });
  });
});

describe('intake: caps (contract 1.3)', () => {
  it('[c1.3.pending-caps] at max_pending_per_client the client is refused, naming the cap and its value', () => {
    const got = intake(req(), input({ pendingOfClient: 3, pending: 3, maxPendingPerClient: 3 }));
    expect(got).toMatchObject({ kind: 'refused', code: 'TooManyPending', cap: 'max_pending_per_client' });
    expect(got.kind === 'refused' && got.message).toContain('max_pending_per_client is 3');
  });

  it('[c1.3.pending-caps] at max_pending every client is refused, naming the cap and its value', () => {
    const got = intake(req(), input({ pendingOfClient: 0, pending: 5, maxPending: 5 }));
    expect(got).toMatchObject({ kind: 'refused', code: 'TooManyPending', cap: 'max_pending' });
    expect(got.kind === 'refused' && got.message).toContain('max_pending is 5');
  });

  it('one below both caps is created', () => {
    expect(
      intake(req(), input({ pendingOfClient: 2, pending: 4, maxPendingPerClient: 3, maxPending: 5 })),
    ).toEqual({
      kind: 'create',
    });
  });
});

describe('intake: who approves at submit (contracts 7, 8, 9)', () => {
  it('[c8.match] the oldest live grant that matches approves and is named', () => {
    const older = grant({ id: 'g_old' });
    const got = intake(req(), input({ live: [older, grant({ id: 'g_new' })] }));
    expect(got).toEqual({ kind: 'create', approvedBy: 'grant:g_old', grant: older });
  });

  it('[c8.match] no matching grant: the request waits for the owners', () => {
    expect(intake(req(), input({ live: [grant({ command: 'other' })] }))).toEqual({ kind: 'create' });
  });

  it('[c8.grantable] a grant never approves a cue', () => {
    const cue = req({ tool: 'ogf_cue', command: 'ogf.cue' });
    expect(intake(cue, input({ live: [grant({ command: 'ogf.cue' })] }))).toEqual({ kind: 'create' });
  });

  it('[c7.read-only-policy] a policy approval is named when no grant matches; a grant comes first', () => {
    const r = req({ approved_by: 'policy:read_only' });
    expect(intake(r, input())).toEqual({ kind: 'create', approvedBy: 'policy:read_only' });
    expect(intake(r, input({ live: [grant()] }))).toEqual({ kind: 'create', approvedBy: 'policy:read_only' });
  });

  it('[c8.grantable] a command needing several owners gets no grant and no policy approval', () => {
    const r = req({ approved_by: 'policy:read_only' });
    expect(intake(r, input({ live: [grant()], policy: () => ({ approvals: 2 }) }))).toEqual({
      kind: 'create',
      approvalsNeeded: 2,
    });
  });

  it('a quorum policy does not apply to a cue', () => {
    const cue = req({ tool: 'ogf_cue', command: 'ogf.cue' });
    expect(intake(cue, input({ policy: () => ({ approvals: 2 }) }))).toEqual({ kind: 'create' });
  });
});

describe('commandOf', () => {
  it('[c2.rule-8] builds version 1, awaiting review until the deadline, with the quorum fields only when needed', () => {
    const c = commandOf(req({ request_id: 'r1', justification: 'why' }), 'c_9', T0, 90_000, 3, KINDS);
    expect(c).toMatchObject({
      id: 'c_9',
      version: 1,
      request_id: 'r1',
      justification: 'why',
      created_at: '2026-12-01T10:00:00.000Z',
      review_expires_at: '2026-12-01T10:01:30.000Z',
      phase: { state: 'awaiting_review' },
      approvals_needed: 3,
      approvals: [],
    });
    expect('approvals_needed' in commandOf(req(), 'c_9', T0, 90_000, undefined, KINDS)).toBe(false);
  });
});

describe('intake: a passkey-required command (contract 13.3)', () => {
  const passkey = (c: string) => c === 'say';
  it('no grant and no policy approves it: it waits for owners, marked passkey', () => {
    expect(intake(req(), input({ live: [grant()], passkey }))).toEqual({ kind: 'create', passkey: true });
    expect(intake(req({ approved_by: 'policy:read_only' }), input({ passkey }))).toEqual({
      kind: 'create',
      passkey: true,
    });
  });
  it('with a quorum, each owner signs: both kept', () => {
    const got = intake(req(), input({ passkey, policy: () => ({ approvals: 2 }) }));
    expect(got).toEqual({ kind: 'create', approvalsNeeded: 2, passkey: true });
  });
  it('the command made carries passkey_required; others do not', () => {
    expect(commandOf(req(), 'c_1', T0, 60_000, undefined, KINDS, true).passkey_required).toBe(true);
    expect(made(req()).passkey_required).toBeUndefined();
  });
});
