import { describe, expect, it } from 'vitest';
import { sha256Digest } from './digest.js';
import { type Command, type Event, type Phase, type State, statusOf } from './lifecycle.js';
import { toResult } from './tool-result.js';
import { transition } from './transition.js';

const T0 = '2026-11-30T10:00:00.000Z';
const T1 = '2026-11-30T10:00:01.000Z';

const PHASES: Record<State, Phase> = {
  awaiting_review: { state: 'awaiting_review' },
  approved: { state: 'approved', decided_at: T0, decided_by: 'owner' },
  running: { state: 'running', decided_at: T0, decided_by: 'owner', started_at: T0 },
  succeeded: {
    state: 'succeeded',
    decided_at: T0,
    decided_by: 'owner',
    started_at: T0,
    finished_at: T1,
    outcome: { exit_code: 0 },
  },
  denied: { state: 'denied', reason: 'OwnerDenied', detail: 'no', decided_at: T0, decided_by: 'owner' },
  failed: {
    state: 'failed',
    reason: 'NonZeroExit',
    detail: 'exit 3',
    decided_at: T0,
    decided_by: 'owner',
    started_at: T0,
    finished_at: T1,
    outcome: { exit_code: 3 },
    reconciliations: [],
  },
  unknown: {
    state: 'unknown',
    reason: 'KilledAtDeadline',
    detail: 'killed',
    decided_at: T0,
    decided_by: 'owner',
    started_at: T0,
    finished_at: T1,
    outcome: {},
    reconciliations: [],
  },
};

function command(state: State, tool: Command['tool'] = 'run_command_wait'): Command {
  return {
    id: 'c_test0001',
    version: 3,
    tool,
    command: tool === 'ogf_cue' ? 'ogf.cue' : 'say',
    args: {},
    display: ['echo'],
    client: 'local',
    created_at: T0,
    review_expires_at: T1,
    phase: PHASES[state],
  };
}

const EVENTS: Record<Event['type'], Event> = {
  approve: { type: 'approve', at: T1, by: 'owner' },
  deny: { type: 'deny', at: T1, by: 'owner', note: 'not now' },
  expire: { type: 'expire', at: T1 },
  cancel: { type: 'cancel', at: T1, by: 'local' },
  start: { type: 'start', at: T1 },
  finish: { type: 'finish', at: T1, result: { kind: 'succeeded', outcome: { exit_code: 0 } } },
  abort: { type: 'abort', at: T1, reason: 'LaunchFailed', detail: 'no file' },
  reconcile: { type: 'reconcile', at: T1, by: 'owner', outcome: 'delivered', note: 'saw it' },
  restart: { type: 'restart', at: T1, carriesSecret: false },
  // Retention (retention-rule.ts): too soon after the end, and nothing bulky, so rejected in every state.
  prune: { type: 'prune', at: T1, digest: sha256Digest },
  // Contract 12: kind fields learnt while awaiting review (a preview), legal only then, same version.
  amend: { type: 'amend', at: T1, fields: {}, action: 'preview_made', detail: {} },
  // Contract 20: the preview made again at launch differed; only an approved command comes back.
  rebind: {
    type: 'rebind',
    at: T1,
    preview: { kind: 'file_diff', status: 'ready', diff: '' },
    review_expires_at: T1,
    detail: {},
  },
};

/** The whole legal table: state × event → next state (catalog commands). Anything absent is illegal. */
const LEGAL: Partial<Record<State, Partial<Record<Event['type'], State>>>> = {
  awaiting_review: {
    approve: 'approved',
    deny: 'denied',
    expire: 'denied',
    cancel: 'denied',
    amend: 'awaiting_review',
  },
  approved: { start: 'running', abort: 'failed', rebind: 'awaiting_review' },
  running: { finish: 'succeeded', restart: 'unknown' },
  failed: { reconcile: 'failed' },
  unknown: { reconcile: 'unknown' },
};

const STATES = Object.keys(PHASES) as State[];
const EVENT_TYPES = Object.keys(EVENTS) as Array<Event['type']>;

describe('transition (rules 1–8)', () => {
  for (const state of STATES) {
    for (const type of EVENT_TYPES) {
      const expected = LEGAL[state]?.[type];
      it(`${type} on ${state} → ${expected ?? 'rejected'}`, () => {
        const before = command(state);
        const r = transition(before, EVENTS[type]);
        if (expected === undefined) {
          expect(r.ok).toBe(false);
          if (!r.ok) expect(r.message).toContain(state);
        } else {
          expect(r.ok).toBe(true);
          if (r.ok) {
            expect(r.command.phase.state).toBe(expected);
            // Rule 8; an amend is not a change of the command (contract 12: an approval on it stays valid).
            expect(r.command.version).toBe(before.version + (type === 'amend' ? 0 : 1));
          }
        }
        expect(before.phase).toEqual(PHASES[state]); // pure: the input is untouched
      });
    }
  }

  it('gives the contract codes for the illegal decisions owners and clients meet', () => {
    const code = (s: State, e: Event['type']) => {
      const r = transition(command(s), EVENTS[e]);
      return r.ok ? 'ok' : r.code;
    };
    expect(code('denied', 'approve')).toBe('AlreadyDecided');
    expect(code('running', 'deny')).toBe('AlreadyDecided');
    expect(code('succeeded', 'reconcile')).toBe('NotReconcilable');
    expect(code('denied', 'reconcile')).toBe('NotReconcilable');
    expect(code('awaiting_review', 'reconcile')).toBe('NotReconcilable');
    // Contract 12: a preview arriving after the decision is refused, never applied.
    expect(code('approved', 'amend')).toBe('AlreadyDecided');
  });

  it('deny carries the owner note; an empty note is absent', () => {
    const r = transition(command('awaiting_review'), EVENTS.deny);
    expect(r.ok && r.command.phase).toMatchObject({ reason: 'OwnerDenied', owner_note: 'not now' });
    const r2 = transition(command('awaiting_review'), { type: 'deny', at: T1, by: 'o', note: '' });
    expect(r2.ok && 'owner_note' in r2.command.phase).toBe(false);
  });

  it('maps expire and cancel to their DENIED reasons', () => {
    const e = transition(command('awaiting_review'), EVENTS.expire);
    const c = transition(command('awaiting_review'), EVENTS.cancel);
    expect(e.ok && e.command.phase).toMatchObject({ state: 'denied', reason: 'ReviewExpired' });
    expect(c.ok && c.command.phase).toMatchObject({ state: 'denied', reason: 'CancelledByCaller' });
  });

  it('finish maps each executor outcome', () => {
    const failed = transition(command('running'), {
      type: 'finish',
      at: T1,
      result: { kind: 'failed', reason: 'NonZeroExit', detail: 'x', outcome: { exit_code: 3 } },
    });
    const unknown = transition(command('running'), {
      type: 'finish',
      at: T1,
      result: { kind: 'unknown', reason: 'DeliveryUnconfirmed', detail: 'x', outcome: {} },
    });
    expect(failed.ok && failed.command.phase).toMatchObject({ state: 'failed', reason: 'NonZeroExit' });
    expect(unknown.ok && unknown.command.phase).toMatchObject({
      state: 'unknown',
      reason: 'DeliveryUnconfirmed',
    });
  });

  it('[c2.rule-2] reconcile keeps state and status and adds a record (rule 2)', () => {
    const r = transition(command('unknown'), EVENTS.reconcile);
    expect(r.ok).toBe(true);
    if (!r.ok || r.command.phase.state !== 'unknown') return;
    expect(r.command.phase.reason).toBe('KilledAtDeadline');
    expect(r.command.phase.reconciliations).toEqual([
      { outcome: 'delivered', note: 'saw it', at: T1, by: 'owner' },
    ]);
    const again = transition(r.command, { type: 'reconcile', at: T1, by: 'owner', outcome: 'not_delivered' });
    expect(again.ok && toResult(again.command).reconciliation).toEqual({ outcome: 'not_delivered', at: T1 });
  });

  it('[c2.rule-3] [c2.rule-4] recovers per rules 3 and 4', () => {
    const run = transition(command('running'), EVENTS.restart);
    expect(run.ok && run.command.phase).toMatchObject({ state: 'unknown', reason: 'DaemonRestarted' });
    const cueWaiting = transition(command('awaiting_review', 'ogf_cue'), {
      type: 'restart',
      at: T1,
      carriesSecret: true,
    });
    expect(cueWaiting.ok && cueWaiting.command.phase).toMatchObject({
      state: 'denied',
      reason: 'SessionSecretNotRetained',
    });
    const cueApproved = transition(command('approved', 'ogf_cue'), {
      type: 'restart',
      at: T1,
      carriesSecret: true,
    });
    expect(cueApproved.ok && cueApproved.command.phase).toMatchObject({
      state: 'failed',
      reason: 'SessionSecretNotRetained',
    });
    expect(transition(command('awaiting_review'), EVENTS.restart).ok).toBe(false); // keeps its deadline
    expect(transition(command('approved'), EVENTS.restart).ok).toBe(false); // launched after the restart
  });

  it('maps states to statuses', () => {
    expect(STATES.map(statusOf)).toEqual([
      'PENDING',
      'PENDING',
      'PENDING',
      'SUCCEEDED',
      'DENIED',
      'ERROR',
      'UNKNOWN',
    ]);
  });

  it('never throws, even on events it does not know', () => {
    const r = transition(command('running'), { type: 'bogus' } as unknown as Event);
    expect(r).toMatchObject({ ok: false, code: 'UnknownEvent' });
  });
});

describe('toResult (contract 3.2)', () => {
  it('a PENDING result has a phase and no reason; absent fields are absent, never null', () => {
    const r = toResult(command('awaiting_review'));
    expect(r).toMatchObject({ pending_id: 'c_test0001', status: 'PENDING', phase: 'awaiting_review' });
    expect('reason' in r).toBe(false);
    expect(JSON.stringify(r)).not.toContain('null');
    expect(JSON.stringify(r).toLowerCase()).not.toMatch(/timed.?out|timeout/);
  });

  it('a final result has its reason, times and outcome', () => {
    const r = toResult(command('failed'));
    expect(r).toMatchObject({
      status: 'ERROR',
      reason: 'NonZeroExit',
      exit_code: 3,
      started_at: T0,
      finished_at: T1,
    });
    expect('phase' in r).toBe(false);
  });
});

describe('[c2.rule-5] quorum (contract 9): N distinct owners', () => {
  function quorum(n: number): Command {
    return { ...command('awaiting_review'), version: 1, approvals_needed: n, approvals: [] };
  }
  function approve(c: Command, by: string, at = T1): Command {
    const r = transition(c, { type: 'approve', at, by });
    if (!r.ok) throw new Error(r.message);
    return r.command;
  }

  it('each approval is a change (version + 1, approvals gains {by, at}); the N-th approves and names its owner', () => {
    let c = quorum(3);
    c = approve(c, 'alice', T0);
    expect(c).toMatchObject({
      version: 2,
      phase: { state: 'awaiting_review' },
      approvals: [{ by: 'alice', at: T0 }],
    });
    c = approve(c, 'bob');
    expect(c.version).toBe(3);
    expect(c.phase.state).toBe('awaiting_review');
    c = approve(c, 'carol');
    expect(c).toMatchObject({
      version: 4,
      phase: { state: 'approved', decided_by: 'carol', decided_at: T1 },
    });
    expect(c.approvals!.map((a) => a.by)).toEqual(['alice', 'bob', 'carol']);
    expect(statusOf(c.phase.state)).toBe('PENDING');
  });

  it('a second approval by the same owner is AlreadyApproved and changes nothing', () => {
    const c = approve(quorum(2), 'alice');
    const r = transition(c, { type: 'approve', at: T1, by: 'alice' });
    expect(r).toMatchObject({ ok: false, code: 'AlreadyApproved' });
    if (!r.ok) expect(r.message).toMatch(/alice already approved .* 1 more owner$/);
  });

  it('one deny by any owner denies, even after approvals; expiry ends it as usual', () => {
    const c = approve(quorum(2), 'alice');
    const denied = transition(c, { type: 'deny', at: T1, by: 'bob' });
    expect(denied).toMatchObject({
      ok: true,
      command: { version: 3, phase: { state: 'denied', decided_by: 'bob' } },
    });
    const expired = transition(c, { type: 'expire', at: T1 });
    expect(expired).toMatchObject({
      ok: true,
      command: { phase: { state: 'denied', reason: 'ReviewExpired' } },
    });
  });

  it('a command without approvals_needed is approved by its first owner, as before', () => {
    const r = transition(command('awaiting_review'), { type: 'approve', at: T1, by: 'alice' });
    expect(r).toMatchObject({ ok: true, command: { phase: { state: 'approved' } } });
    if (r.ok) expect(r.command.approvals).toBeUndefined();
  });
});
