/**
 * The command lifecycle (contracts.md section 2) as data: states, phases, commands, events. The one pure
 * function that moves a command along it, `transition`, is transition.ts.
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
 * notifies. A daemon restart is an event too (`restart`), so recovery (rules 3 and 4) is decided there.
 */
import type { Preview, State, Status, Tool } from '../../../common/view.js';
import type { DenyReason, FailReason, RejectionCode, UnknownReason } from '../../base/index.js';

export type { Preview, State, Status, Tool } from '../../../common/view.js';

/**
 * What a kind adds to its commands and requests beyond the common fields, declared in the kind's folder
 * (kinds/<kind>/fields.ts, declaration merging). Stored flat in the command body as before, so stored rows
 * and every reader of them stay as they were; the core carries them and asks the kind (core/model/kind-policy.ts).
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled in by each kind (declaration merging)
export interface KindFields {}
export type Actor = { kind: 'client' | 'owner' | 'daemon'; name: string };

/** What was removed from one field: enough to check a copy kept elsewhere. */
export interface PrunedField {
  /** `stdout`, `stderr`, `upstream_result`, or `args.<name>`. */
  field: string;
  /** UTF-8 bytes of the text (stdout, stderr) or of the JSON (an upstream result, an argument). */
  bytes: number;
  /** Lower-case hex SHA-256 of those bytes. */
  sha256: string;
}

/** On a pruned command: when, and what went. */
export interface Pruned {
  at: string;
  fields: PrunedField[];
}

/** UTF-8 size and lower-case hex SHA-256 of a text (digest.ts). */
export type Digest = (text: string) => { bytes: number; sha256: string };

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
  /**
   * Contract 16: the node (daemon) that received it; only that node launches it and applies restart rules
   * 3–4 to it. Absent on commands stored before nodes existed.
   */
  node?: string;
  request_id?: string;
  /** Made as an MCP task (contract 10): the task is this command, kept this long at least. */
  task?: { ttl_ms: number };
  /** Contract 9: how many distinct owners must approve; present only when more than 1. */
  approvals_needed?: number;
  /** Contract 9: the approvals given so far, oldest first (only on commands needing more than one). */
  approvals?: Approval[];
  /**
   * Contract 13.3: fixed at submit from the config (`require_passkey`): each approval needs a passkey
   * assertion from the approving owner; no grant, policy or rule approves it.
   */
  passkey_required?: true;
  created_at: string;
  review_expires_at: string;
  phase: Phase;
  /** Its bulky fields' size and hash, once the retention rule removed them (retention-rule.ts). */
  pruned?: Pruned;
  /** Contract 12: its preview, set by the daemon (never by a request) while it awaits review. */
  preview?: Preview;
  /**
   * Contract 20: set when it came back to awaiting review because what its approved preview was made from
   * changed before launch (the `rebind` event); cleared by nothing — the audit tells each time.
   */
  rebound_at?: string;
  /** Contract 20: an owner's revert names the command whose write it takes back (set only by the owner edge). */
  revert_of?: string;
  /**
   * Contract 20: the file's content just before this command wrote it, kept for a revert until `until`
   * (set with `running` by the daemon, dropped unless the command succeeds; never in a View or result).
   */
  revert_base?: RevertBase;
}

/** What a revert needs of a file write (contract 20): the file as it was, and what the write left. */
export interface RevertBase {
  /** The file's whole content just before the write (at most 1 MiB). */
  previous: string;
  /** Lower-case hex SHA-256 of what the write left in the file (checked by reading it before a revert). */
  written_sha256: string;
  /** The path argument's value. */
  path: string;
  /** Until when a revert is offered (`revert_days` after the launch). */
  until: string;
}

/** What the launch-time preview (contract 20) sets with `running`: the preview it approves, the revert base. */
export type StartFields = Pick<Command, 'preview' | 'revert_base'>;

export type Event =
  /** `passkey`: the verified assertion kept with the approval in its audit entry (contract 13.3). */
  /** `via`: the notification channel whose one-time action decided it (contract 19 (v4)). */
  | { type: 'approve'; at: string; by: string; passkey?: Record<string, unknown>; via?: string }
  /** `policy`: a rule of the owner's config denied it at submit (contract 11: PolicyDenied). */
  | { type: 'deny'; at: string; by: string; note?: string; policy?: true; via?: string }
  | { type: 'expire'; at: string }
  | { type: 'cancel'; at: string; by: string }
  /**
   * Durable mark before spawn (rule 3). Contract 20: with the preview made again at launch (the one a grant
   * or a pending preview's approval approves; for a bound one, equal to the approved one) and the file's
   * previous content, and what the audit entry records of it (`detail`).
   */
  | { type: 'start'; at: string; fields?: StartFields; detail?: Record<string, unknown> }
  /**
   * Contract 20: the preview made again at launch differs from the approved one: nothing is sent, the command
   * awaits review again with the new preview (same deadline rule as a new one: `review_expires_at`), every
   * approval spent; `detail` (both hashes) goes to the audit.
   */
  | {
      type: 'rebind';
      at: string;
      preview: Preview;
      review_expires_at: string;
      detail: Record<string, unknown>;
    }
  | { type: 'finish'; at: string; result: FinishResult }
  /** The executor could not even start (e.g. the session file could not be written): nothing ran. */
  | { type: 'abort'; at: string; reason: FailReason; detail: string }
  | { type: 'reconcile'; at: string; by: string; outcome: 'delivered' | 'not_delivered'; note?: string }
  /**
   * Recovery at daemon start (rules 3 and 4): secrets never survive a restart. `carriesSecret` is the
   * kind's answer (core/model/kind-policy.ts): whether this command needed a secret held in memory only.
   */
  | { type: 'restart'; at: string; carriesSecret: boolean }
  /** The retention rule (retention-rule.ts): a command final for 7 days loses its bulky fields. */
  | { type: 'prune'; at: string; digest: Digest }
  /**
   * Something the daemon learnt about a command awaiting review that is not a change of the command
   * (contract 12: a preview arriving): its kind's fields set, the SAME version (an approval sent before it
   * stays valid), recorded as the audit entry `action` with `detail`.
   */
  | { type: 'amend'; at: string; fields: Amended; action: AmendAction; detail: Record<string, unknown> };

/** What an amend may set (contract 12): only what the daemon learns while a command awaits review. */
/** What an amend is recorded as in the audit (audit-chain.ts's actions): a preview began or arrived (contract 12). */
export type AmendAction = 'preview_started' | 'preview_made';

export type Amended = Pick<Command, 'preview'>;

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
