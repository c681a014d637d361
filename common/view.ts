/**
 * The owner's View of a command (contracts.md section 5) and what it is made of: the shapes every owner
 * socket receives in `snapshot`, `upsert` and `history`, and the result object of contract 3.2. The daemon
 * builds them (daemon/core/model/owner-view.ts, tool-result.ts, args-preview.ts) and the panel reads them; types only, so
 * the panel's bundle takes nothing from here at run time.
 */
import type { KindView, Tool } from './kinds.js';

export type { Tool };

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
 * Contract 12: a call's effect, shown to the owner before they decide — computed in the background while
 * the call awaits review (kinds/upstream/previews/: only upstream calls have one today), stored with the command, never shown to the AI.
 */
export interface Preview {
  kind: 'file_diff' | 'dry_run';
  status: 'pending' | 'ready' | 'failed';
  /** file_diff: a unified diff (3 lines of context, `--- <path>` / `+++ <path>`, `--- /dev/null` when new). */
  diff?: string;
  /** dry_run: the text the tool answered. */
  text?: string;
  /** file_diff: there was no file (the read said it does not exist). */
  new_file?: boolean;
  /** The diff or text was cut at 256 KiB (contract 12). */
  truncated?: boolean;
  computed_at?: string;
  /** Why it failed: one sentence. */
  error?: string;
  /**
   * Contract 20: lower-case hex SHA-256 of what the preview was made from — the file as read (file_diff) or
   * the dry run's whole answer (dry_run). The daemon makes the preview again just before launch and sends
   * nothing when this differs.
   */
  basis_sha256?: string;
}

/** One argument too large for the preview: what it is called, where it sits, how large, how it starts. */
export interface ArgCut {
  /** The argument's name: its first CUT_NAME_CHARS characters. */
  name: string;
  /** The name's whole length in characters, when longer than `name`. */
  name_chars?: number;
  /** Its position among all the arguments (0-based, in the order the AI gave them). */
  at: number;
  /** UTF-8 bytes of its value's JSON. */
  bytes: number;
  /** The first CUT_START_CHARS characters of its value's JSON. */
  start: string;
}

export interface CommandResult {
  pending_id?: string;
  status: Status;
  phase?: 'awaiting_review' | 'approved' | 'running';
  command: string;
  display?: string[];
  /** Contract 16: the node that received it (absent on commands stored before nodes existed). */
  node?: string;
  created_at?: string;
  review_expires_at?: string;
  reason?: string;
  detail?: string;
  decided_at?: string;
  started_at?: string;
  finished_at?: string;
  exit_code?: number;
  signal?: string;
  stdout?: string;
  stderr?: string;
  output_truncated?: boolean;
  owner_note?: string;
  delivery?: { cue_id: string; applied_at: string };
  reconciliation?: { outcome: 'delivered' | 'not_delivered'; note?: string; at: string };
  /** Upstream calls that got an answer (contract 7): the upstream's result as it came. */
  upstream_result?: Record<string, unknown>;
  /** Contract 20: an owner's revert, naming the command whose write it takes back. */
  revert_of?: string;
}

/** The View's common fields; a kind adds its own (KindView, contract 5), e.g. the session fingerprint. */
export interface View extends KindView {
  id: string;
  version: number;
  tool: Tool;
  command: string;
  display: string[];
  summary: string;
  /** The arguments; when `args_truncated`, only those small enough to keep (each whole and exact). */
  args: Record<string, unknown>;
  /** Set when the arguments' JSON is over 16 KiB: `args` is a preview; the `args` frame gives them whole. */
  args_truncated?: true;
  /** With `args_truncated`: UTF-8 bytes of the whole arguments' JSON. */
  args_bytes?: number;
  /** With `args_truncated`: each argument not in `args`, by name, size and the start of its JSON. */
  args_cut?: ArgCut[];
  /** With `args_truncated`: how many arguments are neither in `args` nor in `args_cut` (too many to list). */
  args_hidden?: number;
  justification?: string;
  client: string;
  /** Contract 16: the node that received it (absent on commands stored before nodes existed). */
  node?: string;
  created_at: string;
  review_expires_at: string;
  state: State;
  status: Status;
  phase?: 'awaiting_review' | 'approved' | 'running';
  reason?: string;
  result?: CommandResult;
  reconciliation?: { outcome: 'delivered' | 'not_delivered'; note?: string; at: string };
  /**
   * Who decided, once decided (contract 5 (v2)): an owner's name, `daemon` (expiry, restarts), the client
   * that cancelled, `policy:read_only`, (with grants) `grant:<id>`, or (contract 11) `rule:<id>`.
   */
  decided_by?: string;
  /** Contract 9: when more than one owner must approve, how many, and who approved when. */
  approvals_needed?: number;
  approvals?: Array<{ by: string; at: string }>;
  /** Contract 12 (v3 View line): the effect of the call, at most 256 KiB (`truncated` beyond). */
  preview?: Preview;
  /** Contract 13.3 (an addition to the View): approving it needs the owner's passkey. */
  passkey_required?: true;
  /**
   * Contract 20 (an addition to the View): when it came back to awaiting review because the file changed
   * between the preview the owners approved and its launch; its `preview` is the new one.
   */
  rebound_at?: string;
  /** Contract 20: an owner's revert, naming the command whose write it takes back. */
  revert_of?: string;
  /**
   * Contract 20 (an addition to the View): until when its card offers `Revert …` (a succeeded file write whose
   * file's previous content the daemon keeps); the daemon checks the file again when asked.
   */
  revertible_until?: string;
}
