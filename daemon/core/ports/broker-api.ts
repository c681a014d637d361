/**
 * The broker as the edges see it (issue 20 item 4: what was daemon/context.ts's broker half): a new command
 * as an edge asks for it, the results of the broker's actions, and an owner's grant. Edges depend on these
 * interfaces, not on how the broker is built.
 */
import type { BrokerErrorCode } from '../../base/index.js';
import type { AmendAction, Amended, ChainEntry, Command, Grant, KindFields, State } from '../model/index.js';
import type { AuditEntry, HistorySearch } from './store.js';

/**
 * A new command as an edge asks for it — the command's own fields an edge gives (lifecycle.ts says what each
 * means) — and the broker adds id, version, times and phase. Its kind's own fields (KindFields:
 * kinds/<kind>/fields.ts) are stored on the command as they come.
 */
export interface SubmitRequest
  extends KindFields,
    Pick<
      Command,
      | 'tool'
      | 'command'
      | 'args'
      | 'display'
      | 'justification'
      | 'client'
      | 'request_id'
      | 'task'
      | 'revert_of'
      | 'preview'
    > {
  /** Held in memory only, handed to the executor on launch (rule 4). Never stored, logged or shown. */
  secret?: unknown;
  /**
   * Approved at submit by a policy the owner set up (contract 7 trust_read_only_hint: `policy:read_only`),
   * in the same step as the insert; still a command, recorded and shown.
   */
  approved_by?: string;
}

export type SubmitResult =
  | { ok: true; command: Command; created: boolean }
  | { ok: false; code: 'RequestIdReused'; message: string }
  /** Contract 1.3/3.2 (v2): a cap on PENDING commands; `message` names the cap and its value. */
  | { ok: false; code: 'TooManyPending'; message: string };

export type ActionResult =
  | { ok: true; command: Command; grant?: Grant }
  | { ok: false; code: BrokerErrorCode; message: string };

/** What the daemon learnt about a command awaiting review (contract 12: its preview), and its audit entry. */
export interface Amendment {
  fields: Amended;
  action: AmendAction;
  detail: Record<string, unknown>;
}

/** An owner's new grant (contract 8): what it allows, for how long, how many times. */
export interface GrantSpec {
  command: string;
  /** One client name or `*`. */
  client: string;
  /** Present: only these exact arguments (JSON equality). Absent: any arguments. */
  args?: Record<string, unknown>;
  /** Contract 11: instead of `args`, the requests for which this CEL expression is true. */
  when?: string;
  ttl_s: number;
  uses?: number;
  note?: string;
  /**
   * Contract 16 (v4): the node whose commands it approves (a name, or `*` for all). Absent: the node the
   * owner is connected to (a bare grant) or of the command approved (approve … grant).
   */
  node?: string;
}

/** The grant part of an approve frame (contract 5 v2): approve and allow the same again. */
export interface ApproveGrant {
  /** True: the command's exact arguments; false: any. Absent when `when` is given (contract 11). */
  same_args?: boolean;
  /** Contract 11: instead of `same_args`, the requests for which this CEL expression is true. */
  when?: string;
  ttl_s: number;
  uses?: number;
  note?: string;
  /** Contract 16 (v4): the node whose commands it approves; absent: the approved command's node. */
  node?: string;
}

/**
 * Contract 13.3: what the owner edge found of a passkey assertion sent with an approval — verified (the
 * record kept in the approval's audit entry) or not (why). The broker trusts its edge: it only checks that
 * a passkey-required command gets a verified one.
 */
export type PasskeyEvidence = { ok: true; kept: Record<string, unknown> } | { ok: false; why: string };

export type GrantResult =
  | { ok: true; grant: Grant }
  | { ok: false; code: 'NotFound' | 'NotGrantable' | 'NotRevocable'; message: string };

/** A new command awaiting review, queued and not yet durable; `committed` settles once its batch did. */
export interface Queued {
  command: Command;
  committed: Promise<boolean>;
}

/**
 * The broker as the edges see it. The broker is the only writer of command state. Its actions resolve once
 * their change committed (group commit: architecture.md example 3), and reject with the store's error when
 * the commit failed (nothing of it is kept); its reads see committed state only.
 */
export interface BrokerApi {
  /**
   * Queues a request (idempotent on `client` + `request_id`; an identical pending cue returns its twin),
   * unless the client or the broker is at its PENDING cap (`TooManyPending`, nothing queued).
   */
  submit(req: SubmitRequest): Promise<SubmitResult>;
  /**
   * Owner approval; `AlreadyDecided` is checked before `VersionConflict` (contract 5). With `grant`, the
   * approval and a new grant for the command's `command` and `client` commit together (contract 5 v2, 8).
   * A passkey-required command (contract 13.3) needs `passkey` verified, else `PasskeyRequired`, checked
   * after the contract 5/9 checks; a verified one is kept in the approval's audit entry. `via` (contract 19):
   * the notification channel whose one-time action decides, kept in the decision's audit entry.
   */
  approve(
    id: string,
    version: number,
    by: string,
    grant?: ApproveGrant,
    passkey?: PasskeyEvidence,
    via?: string,
  ): Promise<ActionResult>;
  deny(id: string, version: number, by: string, note?: string, via?: string): Promise<ActionResult>;
  /** Caller cancel while awaiting review; otherwise returns the command unchanged (ok). */
  cancel(id: string, by: string): Promise<ActionResult>;
  reconcile(
    id: string,
    outcome: 'delivered' | 'not_delivered',
    by: string,
    note?: string,
  ): Promise<ActionResult>;
  get(id: string): Command | undefined;
  /** Resolves at the first final state, or after `seconds` (or on abort) with the current command. */
  wait(id: string, seconds: number, signal?: AbortSignal): Promise<Command>;
  /** Every committed change, in commit order, synchronously after its batch committed. Returns unsubscribe. */
  subscribe(listener: (command: Command) => void): () => void;
  /**
   * A new command that awaits review, as soon as it is queued — before it is durable — for read-only work
   * that may start early (contract 12's preview read: bench row 13), with whether its commit succeeded.
   * Nothing a listener learns may be told to anyone, nor recorded, before that settles true.
   */
  subscribeQueued(listener: (queued: Queued) => void): () => void;
  /**
   * Every committed grant change (created, used, revoked, expired, spent), in commit order with the
   * command changes (a grant-approved command's upsert comes before its grant's). Returns unsubscribe.
   */
  subscribeGrants(listener: (grant: Grant) => void): () => void;
  /** Creates an owner grant (contract 8). */
  grant(spec: GrantSpec, by: string): Promise<GrantResult>;
  /** Ends a grant at once; an already ended one is ok; a config grant is `NotRevocable`. */
  revoke(id: string, by: string): Promise<GrantResult>;
  /** Every live grant, oldest first (the owner snapshot). */
  liveGrants(): Grant[];
  /** The newest `limit` grants in any state, newest first (`grant list --all`). */
  recentGrants(limit: number): Promise<Grant[]>;
  /** Every non-final command plus the newest `finalLimit` final ones, newest first. */
  snapshot(finalLimit?: number): Command[];
  /** Commands newest first, before a pending_id (or an ISO time) when given. */
  history(limit: number, before?: string): Promise<Command[]>;
  /** The history search (contract 14): newest first, before a pending_id, served by the store's indexes. */
  search(filter: HistorySearch, limit: number, before?: string): Promise<Command[]>;
  /** These commands' audit entries, oldest first (contract 14). */
  auditFor(commandIds: readonly string[]): Promise<ChainEntry[]>;
  /**
   * One page of `client`'s tasks, newest first, older than the task `before` (issue 19 finding 3: read by
   * index, never another client's rows): at most `limit`, and about `maxChars` of stored records. Undefined
   * when `before` is not one of this client's tasks.
   */
  tasksOf(
    client: string,
    limit: number,
    maxChars: number,
    before?: string,
  ): Promise<{ commands: Command[]; more: boolean } | undefined>;
  counts(): Promise<Partial<Record<State, number>>>;
  /**
   * Contract 12: sets kind fields the daemon learnt about a command awaiting review (its preview) without
   * changing its version, recorded as the audit entry `action`; `AlreadyDecided` once it was decided.
   */
  amend(id: string, amendment: Amendment): Promise<ActionResult>;
  /** An audit entry that changes no command (a feature-off cue, a refused login, ...). */
  audit(entry: AuditEntry): void;
}
