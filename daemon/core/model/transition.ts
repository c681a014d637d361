/**
 * The one pure function of the lifecycle (lifecycle.ts draws it): `transition(command, event)` applies an
 * event to a command and returns the next command (version + 1) or a rejection with a stable code. It never
 * throws and does no I/O; the broker applies what it returns in one SQLite transaction, then notifies.
 *
 * Its own file so that the data (lifecycle.ts) depends on nothing: retention-rule.ts reads the data and this
 * file calls retention's `prune` rule, one way (issue 20 item 4: no import circle, types included).
 */
import type { RejectionCode } from '../../base/index.js';
import {
  type Command,
  type Event,
  isFinal,
  type Phase,
  type Reconciliation,
  type TransitionResult,
} from './lifecycle.js';
import { withEndedPreview } from './preview-end.js';
import { pruneCommand } from './retention-rule.js';

function next(command: Command, phase: Phase): TransitionResult {
  const changed: Command = { ...command, version: command.version + 1, phase };
  // Contract 12 (v4): a command that ends leaves its preview's text behind (./preview-end.ts).
  return { ok: true, command: isFinal(changed) ? withEndedPreview(changed) : changed };
}

function reject(code: RejectionCode, command: Command, what: string): TransitionResult {
  return { ok: false, code, message: `cannot ${what} command ${command.id}: it is ${command.phase.state}` };
}

const DETAIL = {
  OwnerDenied: 'The owner denied this request.',
  PolicyDenied: 'A rule of the owner’s config denies this request, so nothing was run.',
  ReviewExpired: 'Nobody decided before the review deadline, so nothing was run.',
  CancelledByCaller: 'The caller cancelled the request before the owner decided.',
  SecretNotRetainedPending:
    'The daemon restarted before the owner decided; cue session secrets are kept in memory only, so nothing was sent.',
  SecretNotRetainedApproved:
    'The daemon restarted after approval but before launch; the cue session secret was not retained, so nothing was sent.',
  DaemonRestarted:
    'The daemon stopped while the command ran; whether it took effect is unknown. It is never relaunched.',
} as const;

/**
 * Applies one event to one command. Pure: no clock, no I/O, never throws. Every accepted event bumps
 * `version` by one (rule 8) — except `amend`, which is not a change of the command (contract 12: a preview
 * arriving keeps the version, so an approval made on it stays valid), and only while it awaits review.
 */
export function transition(command: Command, event: Event): TransitionResult {
  const p = command.phase;
  switch (event.type) {
    case 'approve':
      return approve(command, event);
    case 'deny':
      return deny(command, event);
    case 'expire':
      if (p.state !== 'awaiting_review') return reject('AlreadyDecided', command, 'expire');
      return next(command, {
        state: 'denied',
        reason: 'ReviewExpired',
        detail: DETAIL.ReviewExpired,
        decided_at: event.at,
        decided_by: 'daemon',
      });
    case 'cancel':
      if (p.state !== 'awaiting_review') return reject('AlreadyDecided', command, 'cancel');
      return next(command, {
        state: 'denied',
        reason: 'CancelledByCaller',
        detail: DETAIL.CancelledByCaller,
        decided_at: event.at,
        decided_by: event.by,
      });
    case 'start':
      if (p.state !== 'approved') return reject('NotStartable', command, 'start');
      // Contract 20: the preview made again at launch, and the file's previous content, go with `running`.
      return next(event.fields === undefined ? command : { ...command, ...event.fields }, {
        state: 'running',
        decided_at: p.decided_at,
        decided_by: p.decided_by,
        started_at: event.at,
      });
    case 'rebind':
      return rebind(command, event);
    case 'abort':
      if (p.state !== 'approved') return reject('NotStartable', command, 'abort');
      return next(command, {
        state: 'failed',
        reason: event.reason,
        detail: event.detail,
        decided_at: p.decided_at,
        decided_by: p.decided_by,
        finished_at: event.at,
        outcome: {},
        reconciliations: [],
      });
    case 'finish':
      return finish(command, event);
    case 'reconcile': {
      if (p.state !== 'failed' && p.state !== 'unknown')
        return reject('NotReconcilable', command, 'reconcile');
      const rec: Reconciliation = { outcome: event.outcome, at: event.at, by: event.by };
      if (event.note !== undefined && event.note !== '') rec.note = event.note;
      // Rule 2: the state and status stay; the record is added.
      return next(command, { ...p, reconciliations: [...p.reconciliations, rec] });
    }
    case 'restart':
      return recover(command, event.at, event.carriesSecret);
    case 'prune':
      return pruneCommand(command, event.at, event.digest);
    case 'amend':
      if (p.state !== 'awaiting_review') return reject('AlreadyDecided', command, 'amend');
      return { ok: true, command: { ...command, ...event.fields } };
    default:
      return reject('UnknownEvent', command, `apply event ${String((event as { type?: unknown }).type)} to`);
  }
}

/** An owner's approval: the command approved, or (contract 9) one more of the approvals it waits for. */
function approve(command: Command, event: Extract<Event, { type: 'approve' }>): TransitionResult {
  const p = command.phase;
  if (p.state !== 'awaiting_review') return reject('AlreadyDecided', command, 'approve');
  const needed = command.approvals_needed ?? 1;
  if (needed <= 1) return next(command, { state: 'approved', decided_at: event.at, decided_by: event.by });
  const prior = command.approvals ?? [];
  if (prior.some((a) => a.by === event.by)) {
    return {
      ok: false,
      code: 'AlreadyApproved',
      message: `${event.by} already approved command ${command.id}; it waits for ${needed - prior.length} more owner${needed - prior.length === 1 ? '' : 's'}`,
    };
  }
  const approvals = [...prior, { by: event.by, at: event.at }];
  // The N-th distinct approval approves; before it, the command waits with the approval recorded.
  const phase: Phase =
    approvals.length < needed
      ? { state: 'awaiting_review' }
      : { state: 'approved', decided_at: event.at, decided_by: event.by };
  return { ok: true, command: { ...command, version: command.version + 1, approvals, phase } };
}

/**
 * Contract 20: the file changed between the approved preview and the launch. Nothing was sent; the command
 * awaits review again with the new preview, and every approval of it is spent (no `approvals`, no decider).
 */
function rebind(command: Command, event: Extract<Event, { type: 'rebind' }>): TransitionResult {
  if (command.phase.state !== 'approved') return reject('NotStartable', command, 'rebind');
  const { approvals: _spent, revert_base: _none, ...rest } = command;
  const back: Command = {
    ...rest,
    version: command.version + 1,
    phase: { state: 'awaiting_review' },
    preview: event.preview,
    review_expires_at: event.review_expires_at,
    rebound_at: event.at,
  };
  if (command.approvals_needed !== undefined) back.approvals = [];
  return { ok: true, command: back };
}

/** An owner's or a policy's denial (with the owner's note, when one is given). */
function deny(command: Command, event: Extract<Event, { type: 'deny' }>): TransitionResult {
  const p = command.phase;
  if (p.state !== 'awaiting_review') return reject('AlreadyDecided', command, 'deny');
  const reason = event.policy === true ? 'PolicyDenied' : 'OwnerDenied';
  const phase: Phase = {
    state: 'denied',
    reason,
    detail: DETAIL[reason],
    decided_at: event.at,
    decided_by: event.by,
  };
  if (event.note !== undefined && event.note !== '') phase.owner_note = event.note;
  return next(command, phase);
}

/** The executor's one outcome (rule 3): succeeded, failed for sure, or unknown. */
function finish(finished: Command, event: Extract<Event, { type: 'finish' }>): TransitionResult {
  let command = finished;
  const p = command.phase;
  if (p.state !== 'running') return reject('NotRunning', command, 'finish');
  const base = {
    decided_at: p.decided_at,
    decided_by: p.decided_by,
    started_at: p.started_at,
    finished_at: event.at,
  };
  const r = event.result;
  if (r.kind === 'succeeded') return next(command, { state: 'succeeded', ...base, outcome: r.outcome });
  // Contract 20: only a succeeded write can be taken back; any other outcome keeps no previous content.
  if (command.revert_base !== undefined) {
    const { revert_base: _dropped, ...rest } = command;
    command = rest;
  }
  if (r.kind === 'failed') {
    return next(command, {
      state: 'failed',
      ...base,
      reason: r.reason,
      detail: r.detail,
      outcome: r.outcome,
      reconciliations: [],
    });
  }
  return next(command, {
    state: 'unknown',
    ...base,
    reason: r.reason,
    detail: r.detail,
    outcome: r.outcome,
    reconciliations: [],
  });
}

/** Rules 3 and 4: what a restart does to a command that was not final when the daemon stopped. */
function recover(command: Command, at: string, carriesSecret: boolean): TransitionResult {
  const p = command.phase;
  switch (p.state) {
    case 'running':
      return next(command, {
        state: 'unknown',
        reason: 'DaemonRestarted',
        detail: DETAIL.DaemonRestarted,
        decided_at: p.decided_at,
        decided_by: p.decided_by,
        started_at: p.started_at,
        finished_at: at,
        outcome: {},
        reconciliations: [],
      });
    case 'awaiting_review':
      if (!carriesSecret) return reject('NothingToRecover', command, 'recover');
      return next(command, {
        state: 'denied',
        reason: 'SessionSecretNotRetained',
        detail: DETAIL.SecretNotRetainedPending,
        decided_at: at,
        decided_by: 'daemon',
      });
    case 'approved':
      if (!carriesSecret) return reject('NothingToRecover', command, 'recover');
      return next(command, {
        state: 'failed',
        reason: 'SessionSecretNotRetained',
        detail: DETAIL.SecretNotRetainedApproved,
        decided_at: p.decided_at,
        decided_by: p.decided_by,
        finished_at: at,
        outcome: {},
        reconciliations: [],
      });
    default:
      return reject('NothingToRecover', command, 'recover');
  }
}
