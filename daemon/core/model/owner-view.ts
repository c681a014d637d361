/**
 * The owner's View of a command (contracts.md section 5): what every owner socket receives in
 * `snapshot`, `upsert` and `history`. Built from the stored command, so it cannot hold a session UUID.
 *
 * Its `result` carries at most 16 KiB of each of `stdout` and `stderr` (contract 5, v2), flagged
 * `output_truncated` when cut; the MCP result keeps up to `output_limit_bytes`. Output is the one part of
 * a View whose size the AI chooses beyond the catalog's own bounds, so with the PENDING caps (contract
 * 1.3) this keeps every snapshot bounded (worst case in test/attack-flood.test.ts).
 *
 * Its `args` likewise travel whole only up to 16 KiB of JSON; larger ones become a bounded preview flagged
 * `args_truncated` (args-preview.ts), and the owner loads them whole with the `args` frame (an addition to
 * contract 5; test/attack-owner-frames.test.ts: 110 calls of 1 MiB made a ~110 MB snapshot).
 */
import type { View } from '../../../common/view.js';
import { argsPreview } from './args-preview.js';
import type { KindPolicies } from './kind-policy.js';
import { type Command, reasonOf, statusOf } from './lifecycle.js';
import { type CommandResult, cutUtf8, toResult } from './tool-result.js';

/** Bytes of UTF-8 of each of stdout and stderr an owner frame carries (contract 5, v2). */
export const VIEW_OUTPUT_MAX_BYTES = 16 * 1024;

export type { View } from '../../../common/view.js';

/**
 * The result as owners see it: stdout and stderr cut to VIEW_OUTPUT_MAX_BYTES each, and an upstream's
 * result (kept up to 4 MiB for the AI, contract 7) replaced by its first VIEW_OUTPUT_MAX_BYTES of JSON
 * text when larger, so owner frames stay bounded (contract 5 (v2)).
 */
function ownerResult(command: Command): CommandResult {
  const result = toResult(command);
  if (result.upstream_result !== undefined) {
    const json = JSON.stringify(result.upstream_result);
    const cut = cutUtf8(json, VIEW_OUTPUT_MAX_BYTES);
    if (cut !== undefined) {
      delete result.upstream_result;
      result.stdout = cut;
      result.output_truncated = true;
    }
  }
  for (const stream of ['stdout', 'stderr'] as const) {
    const text = result[stream];
    const cut = text === undefined ? undefined : cutUtf8(text, VIEW_OUTPUT_MAX_BYTES);
    if (cut !== undefined) {
      result[stream] = cut;
      result.output_truncated = true;
    }
  }
  return result;
}

/** The View of a command; its summary and kind-specific fields come from its kind (`kinds`). */
export function toView(command: Command, kinds: KindPolicies): View {
  const state = command.phase.state;
  const view: View = {
    id: command.id,
    version: command.version,
    tool: command.tool,
    command: command.command,
    display: command.display,
    summary: kinds.of(command.tool).summary(command),
    args: command.args,
    client: command.client,
    ...(command.node === undefined ? {} : { node: command.node }),
    created_at: command.created_at,
    review_expires_at: command.review_expires_at,
    state,
    status: statusOf(state),
    result: ownerResult(command),
  };
  const preview = argsPreview(command.args);
  if (preview !== undefined) Object.assign(view, preview);
  // The kind's fields where they stood in the JSON before the kinds moved out of core (after `result`).
  Object.assign(view, kinds.view(command));
  if (command.justification !== undefined) view.justification = command.justification;
  if (state === 'awaiting_review' || state === 'approved' || state === 'running') view.phase = state;
  const reason = reasonOf(command.phase);
  if (reason !== undefined) view.reason = reason;
  if (view.result?.reconciliation !== undefined) view.reconciliation = view.result.reconciliation;
  if ('decided_by' in command.phase) view.decided_by = command.phase.decided_by;
  if (command.approvals_needed !== undefined) {
    view.approvals_needed = command.approvals_needed;
    view.approvals = command.approvals ?? [];
  }
  // Stored already within the 256 KiB of owner frames (kinds/upstream/previews/diff.ts).
  if (command.preview !== undefined) view.preview = command.preview;
  if (command.passkey_required === true) view.passkey_required = true;
  // Contract 20: a command back from a changed file, a revert, and one whose write can be taken back. The
  // kept content itself never leaves the store in a View: the card shows the preview's diff reversed.
  if (command.rebound_at !== undefined) view.rebound_at = command.rebound_at;
  if (command.revert_of !== undefined) view.revert_of = command.revert_of;
  if (command.revert_base !== undefined && command.phase.state === 'succeeded')
    view.revertible_until = command.revert_base.until;
  return view;
}

/**
 * A command's View as JSON text, serialised once per command object. The broker never changes a command
 * it has published (every change is a new object, lifecycle.ts), so the text cannot go stale, and the
 * WeakMap lets it go with the command. The owner hub sends the same text in the upsert and in every later
 * snapshot: with 10,000 commands awaiting review a snapshot no longer rebuilds and re-serialises 10,000
 * Views (bench row 5, docs/performance.md).
 */
const viewJsonCache = new WeakMap<Command, string>();

export function viewJson(command: Command, kinds: KindPolicies): string {
  let text = viewJsonCache.get(command);
  if (text === undefined) {
    text = JSON.stringify(toView(command, kinds));
    viewJsonCache.set(command, text);
  }
  return text;
}
