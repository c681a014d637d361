/**
 * The result object every tool but `list_commands` returns (contracts.md 3.2), built from a command.
 * A field that does not apply is absent, never null; nothing here says "timed out" (rule 7).
 */
import type { CommandResult } from '../../../common/view.js';
import { type Command, type Outcome, statusOf } from './lifecycle.js';
import { prunedSentence } from './retention-rule.js';

export type { CommandResult } from '../../../common/view.js';

const PENDING_DETAIL = {
  awaiting_review:
    'Waiting for the owner to approve or deny; call await_command_result with this pending_id.',
  approved: 'Approved by the owner and about to launch; call await_command_result with this pending_id.',
  running: 'Approved and running; call await_command_result with this pending_id.',
} as const;

function copyOutcome(result: CommandResult, o: Outcome): void {
  if (o.exit_code !== undefined) result.exit_code = o.exit_code;
  if (o.signal !== undefined) result.signal = o.signal;
  if (o.stdout !== undefined) result.stdout = o.stdout;
  if (o.stderr !== undefined) result.stderr = o.stderr;
  if (o.output_truncated !== undefined) result.output_truncated = o.output_truncated;
  if (o.delivery !== undefined) result.delivery = o.delivery;
  if (o.upstream_result !== undefined) result.upstream_result = o.upstream_result;
}

/** Contract 3.2's result for a command. */
export function toResult(command: Command): CommandResult {
  const p = command.phase;
  const result: CommandResult = {
    pending_id: command.id,
    status: statusOf(p.state),
    command: command.command,
    display: command.display,
    ...(command.node === undefined ? {} : { node: command.node }),
    created_at: command.created_at,
    review_expires_at: command.review_expires_at,
  };
  // Contract 20: a revert says which command's write it takes back.
  if (command.revert_of !== undefined) result.revert_of = command.revert_of;
  switch (p.state) {
    case 'awaiting_review':
    case 'approved':
    case 'running':
      result.phase = p.state;
      result.detail = PENDING_DETAIL[p.state];
      break;
    case 'denied':
      result.reason = p.reason;
      result.detail = p.detail;
      result.decided_at = p.decided_at;
      if (p.owner_note !== undefined) result.owner_note = p.owner_note;
      break;
    case 'succeeded':
    case 'failed':
    case 'unknown':
      if (p.state !== 'succeeded') {
        result.reason = p.reason;
        result.detail = p.detail;
      }
      break;
  }
  if ('decided_at' in p) result.decided_at = p.decided_at;
  if ('started_at' in p && p.started_at !== undefined) result.started_at = p.started_at;
  if ('finished_at' in p) result.finished_at = p.finished_at;
  if ('outcome' in p) copyOutcome(result, p.outcome);
  // Retention (retention-rule.ts): the output that is gone is absent, and detail says what it was and when.
  const pruned = prunedSentence(command);
  if (pruned !== undefined)
    result.detail = result.detail === undefined ? pruned : `${result.detail} ${pruned}`;
  if ('reconciliations' in p) {
    const last = p.reconciliations.at(-1);
    if (last !== undefined) {
      result.reconciliation = { outcome: last.outcome, at: last.at };
      if (last.note !== undefined) result.reconciliation.note = last.note;
    }
  }
  return result;
}

/**
 * `text` cut to at most `maxBytes` of UTF-8 on a code point boundary, or undefined when it already fits.
 * Counts bytes as Buffer.from(text) would encode them (a lone surrogate as the 3-byte U+FFFD) without
 * encoding the whole string: it stops at the cut, so a 1 MiB output costs the first 16 KiB only.
 */
export function cutUtf8(text: string, maxBytes: number): string | undefined {
  // Every UTF-16 unit encodes to at most 3 bytes (a surrogate pair to 4 for two units).
  if (text.length * 3 <= maxBytes) return undefined;
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    let width = 3;
    let units = 1;
    if (c < 0x80) width = 1;
    else if (c < 0x800) width = 2;
    else if (c >= 0xd800 && c <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        width = 4;
        units = 2;
      }
    }
    if (bytes + width > maxBytes) return text.slice(0, i);
    bytes += width;
    i += units - 1;
  }
  return undefined;
}

/** One summary line for the text content of a tool result (`DENY OgfBridgeNotConfigured: ...`). */
export function summaryLine(result: CommandResult): string {
  const id = result.pending_id === undefined ? '' : ` ${result.pending_id}`;
  switch (result.status) {
    case 'PENDING':
      return `PENDING${id} (${result.phase}): ${result.detail ?? ''}`.trimEnd();
    case 'SUCCEEDED':
      return `SUCCEEDED${id}: ${result.command} finished.`;
    case 'DENIED':
      return `DENY ${result.reason}${id}: ${result.detail ?? ''}`.trimEnd();
    case 'ERROR':
      return `ERROR ${result.reason}${id}: ${result.detail ?? ''} Do not retry; the owner observes and reconciles.`;
    case 'UNKNOWN':
      return `UNKNOWN ${result.reason}${id}: ${result.detail ?? ''} Do not replay; the owner observes and reconciles.`;
  }
}
