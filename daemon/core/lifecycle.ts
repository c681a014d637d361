/**
 * The command lifecycle (contracts.md section 2), as data and one pure function.
 *
 * ```
 *                  approve                 launch (per-session FIFO)        exit / ack
 *  awaiting_review ───────▶ approved ────────────────────────▶ running ───────────────▶ succeeded
 *       │  deny / expire / cancel                                  │  failed for sure ─▶ failed   (ERROR)
 *       ▼                                                          │  outcome unknowable ▶ unknown (UNKNOWN)
 *     denied (DENIED)                                              ▼
 *                                                  failed / unknown ──owner reconcile──▶ (same state, record added)
 * ```
 *
 * Quorum (contract 9): a command whose `approvals_needed` is N > 1 stays `awaiting_review` until N distinct
 * owners approved it; each approval is a change of its own (version + 1, `approvals` gains `{by, at}`), the
 * N-th approves, a second approval by the same owner is `AlreadyApproved`, one deny denies.
 *
 * `transition(command, event)` never throws and does no I/O: it returns the next command (version + 1)
 * or a rejection with a stable code. The broker applies what it returns in one SQLite transaction, then
 * notifies. A daemon restart is an event too (`restart`), so recovery (rules 3 and 4) is decided here.
 */
import type { DenyReason, FailReason, RejectionCode, UnknownReason } from '../errors.js';
import { type Digest, type Pruned, pruneCommand } from './retention.js';

export type State =
  | 'awaiting_review'
  | 'approved'
  | 'running'
  | 'succeeded'
  | 'denied'
  | 'failed'
  | 'unknown';
export type Status = 'PENDING' | 'SUCCEEDED' | 'DENIED' | 'ERROR' | 'UNKNOWN';
/**
 * The kinds of tool (contract 5 View.tool). Each kind names itself in its own folder (kinds/<kind>/fields.ts
 * adds its tool to this interface by declaration merging), so core/ never names one (issue 20 item 1).
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled in by each kind (declaration merging)
export interface KindTools {}
export type Tool = keyof KindTools & string;
/**
 * What a kind adds to its commands and requests beyond the common fields, declared in the kind's folder
 * (kinds/<kind>/fields.ts, declaration merging). Stored flat in the command body as before, so stored rows
 * and every reader of them stay as they were; the core carries them and asks the kind (core/kind-policy.ts).
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled in by each kind (declaration merging)
export interface KindFields {}
export type Actor = { kind: 'client' | 'owner' | 'daemon'; name: string };

/** What a finished launch produced. Fields that do not apply are absent (contract 3.2: never null). */
export interface Outcome {
  exit_code?: number;
  signal?: string;
  stdout?: string;
  stderr?: string;
  output_truncated?: boolean;
  /** Cues: the app's acknowledgement. */
  delivery?: { cue_id: string; applied_at: string };
  /** Cues: whether the bridge client consumed (read and unlinked) its session file. */
  session_file_consumed?: boolean;
  /** Upstream calls that got an answer (contract 7): the upstream's CallToolResult as it came. */
  upstream_result?: Record<string, unknown>;
}

/** One owner's approval of a quorum command (contract 9). */
export interface Approval {
  by: string;
  at: string;
}

export interface Reconciliation {
  outcome: 'delivered' | 'not_delivered';
  note?: string;
  at: string;
  by: string;
}

/** The state-specific part of a command: a tagged union on `state`. */
export type Phase =
  | { state: 'awaiting_review' }
  | { state: 'approved'; decided_at: string; decided_by: string }
  | { state: 'running'; decided_at: string; decided_by: string; started_at: string }
  | {
      state: 'succeeded';
      decided_at: string;
      decided_by: string;
      started_at: string;
      finished_at: string;
      outcome: Outcome;
    }
  | {
      state: 'denied';
      reason: DenyReason;
      detail: string;
      decided_at: string;
      decided_by: string;
      owner_note?: string;
    }
  | {
      state: 'failed';
      reason: FailReason;
      detail: string;
      decided_at: string;
      decided_by: string;
      started_at?: string;
      finished_at: string;
      outcome: Outcome;
      reconciliations: Reconciliation[];
    }
  | {
      state: 'unknown';
      reason: UnknownReason;
      detail: string;
      decided_at: string;
      decided_by: string;
      started_at?: string;
      finished_at: string;
      outcome: Outcome;
      reconciliations: Reconciliation[];
    };

/**
 * One queued tool request. Never holds a session UUID (rule 4): a kind's fields (KindFields) hold only what
 * may be stored.
 */
export interface Command extends KindFields {
  id: string;
  version: number;
  tool: Tool;
  /** The name the kind gives it (a catalog name, an exposed tool name...): what grants match. */
  command: string;
  /** The command's params (a kind keeps out of them what must not be stored). */
  args: Record<string, unknown>;
  /** The exact argv shown to the owner and run on approval. */
  display: string[];
  justification?: string;
  client: string;
  request_id?: string;
  /** Made as an MCP task (contract 10): the task is this command, kept this long at least. */
  task?: { ttl_ms: number };
  /** Contract 9: how many distinct owners must approve; present only when more than 1. */
  approvals_needed?: number;
  /** Contract 9: the approvals given so far, oldest first (only on commands needing more than one). */
  approvals?: Approval[];
  created_at: string;
  review_expires_at: string;
  phase: Phase;
  /** Its bulky fields' size and hash, once the retention rule removed them (retention.ts). */
  pruned?: Pruned;
}

export type Event =
  | { type: 'approve'; at: string; by: string }
  | { type: 'deny'; at: string; by: string; note?: string }
  | { type: 'expire'; at: string }
  | { type: 'cancel'; at: string; by: string }
  /** Durable mark before spawn (rule 3). */
  | { type: 'start'; at: string }
  | { type: 'finish'; at: string; result: FinishResult }
  /** The executor could not even start (e.g. the session file could not be written): nothing ran. */
  | { type: 'abort'; at: string; reason: FailReason; detail: string }
  | { type: 'reconcile'; at: string; by: string; outcome: 'delivered' | 'not_delivered'; note?: string }
  /**
   * Recovery at daemon start (rules 3 and 4): secrets never survive a restart. `carriesSecret` is the
   * kind's answer (core/kind-policy.ts): whether this command needed a secret held in memory only.
   */
  | { type: 'restart'; at: string; carriesSecret: boolean }
  /** The retention rule (retention.ts): a command final for 7 days loses its bulky fields. */
  | { type: 'prune'; at: string; digest: Digest };

/** What an executor reports: exactly one outcome (architecture.md). */
export type FinishResult =
  | { kind: 'succeeded'; outcome: Outcome }
  | { kind: 'failed'; reason: FailReason; detail: string; outcome: Outcome }
  | { kind: 'unknown'; reason: UnknownReason; detail: string; outcome: Outcome };

export type TransitionResult =
  | { ok: true; command: Command }
  | { ok: false; code: RejectionCode; message: string };

const FINAL: ReadonlySet<State> = new Set(['succeeded', 'denied', 'failed', 'unknown']);

/** True when the command will never change state again (reconciliation aside). */
export function isFinal(command: Command): boolean {
  return FINAL.has(command.phase.state);
}

const STATUS: Record<State, Status> = {
  awaiting_review: 'PENDING',
  approved: 'PENDING',
  running: 'PENDING',
  succeeded: 'SUCCEEDED',
  denied: 'DENIED',
  failed: 'ERROR',
  unknown: 'UNKNOWN',
};

/** The status a client sees for a state (contract 2). */
export function statusOf(state: State): Status {
  return STATUS[state];
}

/** The reason code of a final state, when it has one. */
export function reasonOf(phase: Phase): string | undefined {
  return 'reason' in phase ? phase.reason : undefined;
}

function next(command: Command, phase: Phase): TransitionResult {
  return { ok: true, command: { ...command, version: command.version + 1, phase } };
}

function reject(code: RejectionCode, command: Command, what: string): TransitionResult {
  return { ok: false, code, message: `cannot ${what} command ${command.id}: it is ${command.phase.state}` };
}

const DETAIL = {
  OwnerDenied: 'The owner denied this request.',
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
 * `version` by one (rule 8).
 */
export function transition(command: Command, event: Event): TransitionResult {
  const p = command.phase;
  switch (event.type) {
    case 'approve': {
      if (p.state !== 'awaiting_review') return reject('AlreadyDecided', command, 'approve');
      const needed = command.approvals_needed ?? 1;
      if (needed <= 1)
        return next(command, { state: 'approved', decided_at: event.at, decided_by: event.by });
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
    case 'deny': {
      if (p.state !== 'awaiting_review') return reject('AlreadyDecided', command, 'deny');
      const phase: Phase = {
        state: 'denied',
        reason: 'OwnerDenied',
        detail: DETAIL.OwnerDenied,
        decided_at: event.at,
        decided_by: event.by,
      };
      if (event.note !== undefined && event.note !== '') phase.owner_note = event.note;
      return next(command, phase);
    }
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
      return next(command, {
        state: 'running',
        decided_at: p.decided_at,
        decided_by: p.decided_by,
        started_at: event.at,
      });
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
    case 'finish': {
      if (p.state !== 'running') return reject('NotRunning', command, 'finish');
      const base = {
        decided_at: p.decided_at,
        decided_by: p.decided_by,
        started_at: p.started_at,
        finished_at: event.at,
      };
      const r = event.result;
      if (r.kind === 'succeeded') return next(command, { state: 'succeeded', ...base, outcome: r.outcome });
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
    default:
      return reject('UnknownEvent', command, `apply event ${String((event as { type?: unknown }).type)} to`);
  }
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
