/**
 * What every command change leaves behind besides its row: one audit entry, written in the same transaction
 * (docs/security.md: the audit log is append-only), and one log line. Pure builders; the broker writes and
 * logs them. Its own file (issue 20 item 3) so the broker's applying code reads as the steps it takes.
 */
import type { Logger } from '../../base/index.js';
import type { Actor, Command, Event } from '../model/index.js';
import { canonicalJson, sha256Hex } from '../model/index.js';
import type { AuditAction, AuditEntry, Awaitable } from '../ports/index.js';

/** The audit entry of `c`'s change by `actor` at `at` (what `event` said that the row does not keep). */
export function auditOf(
  c: Command,
  action: AuditAction,
  actor: Actor,
  at: string,
  event?: Event,
): AuditEntry {
  const detail: Record<string, unknown> = { state: c.phase.state, command: c.command };
  // What was asked, checkable against any copy of the arguments without keeping them here for ever (the
  // retention rule removes bulky ones from the command; contract 14 entries are append-only).
  if (action === 'submit') {
    detail.args_sha256 = sha256Hex(canonicalJson(c.args));
    // Contract 14 (v4): what the owner's card shows as the command line, checked like the arguments.
    detail.display_sha256 = sha256Hex(canonicalJson(c.display));
    // Contract 20: an owner's revert names the command it takes back.
    if (c.revert_of !== undefined) detail.revert_of = c.revert_of;
  }
  if ('reason' in c.phase) detail.reason = c.phase.reason;
  // Contract 14 (v4): who decided, on every entry after the decision, so `audit verify` checks the row's
  // `decided_by` against the latest entry (audit/history-check.ts).
  if ('decided_by' in c.phase) detail.decided_by = c.phase.decided_by;
  if (event && 'note' in event && event.note !== undefined) detail.note = event.note;
  if (event?.type === 'reconcile') detail.outcome = event.outcome;
  // Contract 13.3/14: the verified assertion, whole, so `audit verify` can check it without the daemon.
  if (event?.type === 'approve' && event.passkey !== undefined) detail.passkey = event.passkey;
  // Contract 19 (v4): decided through a notification's one-time action: which channel carried it.
  if ((event?.type === 'approve' || event?.type === 'deny') && event.via !== undefined)
    detail.via = event.via;
  if (event?.type === 'prune' && c.pruned !== undefined) {
    detail.pruned = c.pruned.fields;
    // The arguments as they read from now on (a pruned one is its marker): the digest the history check
    // compares with the row once the submit's no longer applies.
    detail.args_sha256 = sha256Hex(canonicalJson(c.args));
  }
  if (event?.type === 'amend') Object.assign(detail, event.detail);
  // Contract 20: the preview made again at launch (its hash, and the approved one), or both when it differed.
  if ((event?.type === 'start' || event?.type === 'rebind') && event.detail !== undefined)
    Object.assign(detail, event.detail);
  return { at, actor, action, command_id: c.id, version: c.version, detail };
}

/** The one `command` log line of a committed change. */
export function logChange(log: Logger, c: Command, actor: Actor): void {
  const fields: Record<string, unknown> = {
    id: c.id,
    version: c.version,
    command: c.command,
    client: c.client,
    state: c.phase.state,
    actor: `${actor.kind}:${actor.name}`,
  };
  if ('reason' in c.phase) fields.reason = c.phase.reason;
  log.log('info', 'command', fields);
}

/** What a command change carries besides its own row: applied, written and announced with it. */
export interface Also {
  /** Working memory, at once (a grant made live). */
  apply?(): void;
  /** Store writes in the same transaction. */
  write?(): Awaitable<void>;
  /** After the commit, after the command's own event (a launch, a grant's event). */
  after?(next: Command): void;
}
