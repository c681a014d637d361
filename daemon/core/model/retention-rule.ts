/**
 * The retention rule for finished commands (issue 19 finding 3; docs/lifecycle.md "Retention"): once a
 * command has been final for longer than the longest a task may live (7 days, contract 10), its bulky
 * fields — stdout, stderr, an upstream's result, each argument whose JSON is over 4 KiB, and a preview's
 * diff or text (contract 12; the preview keeps its kind and status, flagged `truncated`) — are replaced
 * by their size and SHA-256. Everything else stays: the state, reason, times, exit code, the View's shape,
 * and the audit log (never touched; the prune itself is appended to it).
 *
 * Pure, like transition.ts: `pruneCommand` is the `prune` event's transition, decided from `event.at` (the
 * injected clock's time), so a fake clock tests the rule. retention-pass.ts decides when to apply it. The
 * hash comes with the event (digest.ts): this file is part of the owner panel's type graph, which has no
 * Node modules.
 */
import type { Command, Digest, Outcome, Pruned, PrunedField, TransitionResult } from './lifecycle.js';

/** Contract 10: the longest a task may live, and so how long a final command keeps its bulky fields. */
export const RETENTION_MS = 7 * 24 * 3600_000;
/** A field larger than this (UTF-8 bytes of the text, or of an argument's JSON) is pruned. */
export const FIELD_KEEP_BYTES = 4096;

const OUTPUT_FIELDS = ['stdout', 'stderr', 'upstream_result'] as const;

function measure(digest: Digest, field: string, text: string): PrunedField | undefined {
  // A UTF-16 unit is at most 3 bytes of UTF-8: a short text is kept without being encoded.
  if (text.length * 3 <= FIELD_KEEP_BYTES) return undefined;
  const d = digest(text);
  return d.bytes <= FIELD_KEEP_BYTES ? undefined : { field, ...d };
}

/** The value an argument is replaced by: says what it was, so the owner's card stays truthful. */
export function argMarker(f: PrunedField): string {
  return `[pruned ${RETENTION_MS / 86_400_000} days after the command ended: ${f.bytes} bytes of JSON, sha256 ${f.sha256}]`;
}

/** When a final command ended: its finish, or its decision for a denial (nothing ran). */
export function endedAt(command: Command): string | undefined {
  const p = command.phase;
  if ('finished_at' in p) return p.finished_at;
  if (p.state === 'denied') return p.decided_at;
  return undefined;
}

function nothing(command: Command, why: string): TransitionResult {
  const state = command.phase.state;
  return {
    ok: false,
    code: 'NothingToPrune',
    message: `nothing to prune in ${state} command ${command.id}: ${why}`,
  };
}

/**
 * The `prune` event: the command with its bulky fields replaced, version + 1; or `NothingToPrune` when it is
 * not final, ended less than RETENTION_MS before `at`, or has no field over FIELD_KEEP_BYTES.
 */
export function pruneCommand(command: Command, at: string, digest: Digest): TransitionResult {
  const ended = endedAt(command);
  if (ended === undefined) return nothing(command, 'it is not final');
  if (Date.parse(ended) + RETENTION_MS > Date.parse(at)) return nothing(command, `it ended at ${ended}`);
  const fields: PrunedField[] = [];
  let phase = command.phase;
  if ('outcome' in phase) {
    const outcome: Outcome = { ...phase.outcome };
    for (const name of OUTPUT_FIELDS) {
      const value = outcome[name];
      if (value === undefined) continue;
      const f = measure(digest, name, typeof value === 'string' ? value : JSON.stringify(value));
      if (f === undefined) continue;
      fields.push(f);
      delete outcome[name];
    }
    if (fields.length > 0) phase = { ...phase, outcome: { ...outcome, output_truncated: true } };
  }
  let args = command.args;
  for (const [name, value] of Object.entries(command.args)) {
    const json = JSON.stringify(value);
    const f = json === undefined ? undefined : measure(digest, `args.${name}`, json);
    // A marker is far under the bound, so an argument pruned before is never pruned again.
    if (f === undefined) continue;
    fields.push(f);
    args = { ...args, [name]: argMarker(f) };
  }
  let preview = command.preview;
  const shown = preview?.diff ?? preview?.text;
  const p = shown === undefined ? undefined : measure(digest, 'preview', shown);
  if (preview !== undefined && p !== undefined) {
    fields.push(p);
    const { diff: _diff, text: _text, ...rest } = preview;
    preview = { ...rest, truncated: true };
  }
  // Contract 20: a write's kept previous content goes whatever its size (revert_days is at most 7).
  const base = command.revert_base;
  if (base !== undefined) fields.push({ field: 'revert_base', ...digest(base.previous) });
  if (fields.length === 0) return nothing(command, `no field is over ${FIELD_KEEP_BYTES} bytes`);
  const pruned: Pruned = { at, fields: [...(command.pruned?.fields ?? []), ...fields] };
  const { revert_base: _gone, ...kept } = command;
  const next: Command = { ...kept, version: command.version + 1, args, phase, pruned };
  if (preview !== undefined) next.preview = preview;
  return { ok: true, command: next };
}

/**
 * `args` as they would read once pruned like `command`'s: each pruned argument whose JSON has the same
 * SHA-256 becomes the same marker. So a repeat of a pruned command's request_id with the same arguments
 * still finds it (contract 3.1), and different ones are still `RequestIdReused`.
 */
export function argsAsPruned(
  args: Record<string, unknown>,
  command: Command,
  digest: Digest,
): Record<string, unknown> {
  const fields = command.pruned?.fields.filter((f) => f.field.startsWith('args.'));
  if (fields === undefined || fields.length === 0) return args;
  const out = { ...args };
  for (const f of fields) {
    const name = f.field.slice('args.'.length);
    if (!Object.hasOwn(out, name)) continue;
    const json = JSON.stringify(out[name]);
    if (json !== undefined && digest(json).sha256 === f.sha256) {
      out[name] = argMarker(f);
    }
  }
  return out;
}

/**
 * The sentence a pruned command's result adds to `detail` (contract 3.2: one field, no new one), naming
 * the output fields removed with their size and hash; undefined when no output field was pruned.
 */
export function prunedSentence(command: Command): string | undefined {
  // Contract 12: the AI's result never carries the preview, not even its size and hash.
  const outputs =
    command.pruned?.fields.filter(
      (f) => !f.field.startsWith('args.') && f.field !== 'preview' && f.field !== 'revert_base',
    ) ?? [];
  if (outputs.length === 0) return undefined;
  const parts = outputs.map((f) => `${f.field} (${f.bytes} bytes, sha256 ${f.sha256})`);
  return `Its ${parts.join(' and ')} ${parts.length === 1 ? 'was' : 'were'} removed ${RETENTION_MS / 86_400_000} days after it ended, on ${command.pruned?.at} (retention rule).`;
}
