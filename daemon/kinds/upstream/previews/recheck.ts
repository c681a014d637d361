/**
 * The effect the owner approved, or nothing (contract 20): just before launch — before `running` is written —
 * the preview is made again, the same read or dry run through the preview connection (./through.ts), and
 * compared with the approved one by the SHA-256 of what it was made from (the file as read for `file_diff`,
 * the dry run's whole answer for `dry_run`). When they differ nothing is sent: the command goes back to the
 * owners with the new preview (core/model/transition.ts `rebind`), both hashes in the audit.
 *
 * - An approved preview that was not ready (pending, failed, none) binds nothing: the launch-time preview is
 *   what is approved. So for a command approved at submit (a grant, a rule, the read-only policy) — which never
 *   awaited review and so never had a preview — the preview made at launch is the one its grant approves,
 *   and it is recorded with `running` (the card and the audit show what was written). Such a launch is
 *   never held back by it: the grant approved "any content of this call", not a file's state.
 * - A launch-time re-check that fails (the preview connection down, the file unreadable) after a ready
 *   preview was approved cannot show the file is unchanged, so nothing is sent: the command comes back with
 *   the failed preview, and an approval of that one binds nothing.
 * - A `file_diff` in `replace` mode of a file that existed (at most 1 MiB) keeps the file's content as read
 *   here, for a revert (`revert_days`), with the SHA-256 of what the write will leave.
 *
 * What the re-check reads is only compared, never sent: a hostile upstream answering the read differently can
 * bring the command back to the owners, never make an unapproved write happen. Two approved commands on one
 * file are kept apart by their lane (the path: ../source.ts), so the second re-checks after the first ran.
 */
import { iso } from '../../../base/index.js';
import type { Bound, Command, Preview, Rebound, RevertBase } from '../../../core/index.js';
import type { UpstreamRegistry } from '../../../upstreams/index.js';
import { PREVIEW_CALL_MAX_BYTES } from './call.js';
import { type FileSeen, sha256Of } from './compute.js';
import { previewSpecs, type RunSpec } from './presets.js';
import { previewRecord } from './record.js';
import { previewThrough } from './through.js';

/** Send, with what goes with `running` (none: this call has no preview, or binding is off); or come back. */
export type Recheck = { kind: 'launch'; bound?: Bound } | { kind: 'rebound'; rebound: Rebound };

export interface RecheckWorld {
  registry: UpstreamRegistry;
  now(): number;
  /** Contract 20: days a write keeps the file's previous content (0: none). */
  revertDays(): number;
}

/** The hash a ready preview was made from; an older one (no `basis_sha256`) by its shown text's. */
function basisOf(p: Preview): string | undefined {
  if (p.status !== 'ready') return undefined;
  return p.basis_sha256 ?? (previewRecord(p).sha256 as string | undefined);
}

function revertBase(spec: RunSpec, p: Preview, seen: FileSeen, w: RecheckWorld): RevertBase | undefined {
  const days = w.revertDays();
  if (days <= 0 || spec.kind !== 'file_diff' || spec.mode !== 'replace' || p.status !== 'ready') return;
  const { path, current, proposed, newFile } = seen;
  // A new file is never reverted (no delete on the owner's behalf); a file over 1 MiB is not kept.
  if (newFile !== false || path === undefined || current === undefined || proposed === undefined) return;
  if (Buffer.byteLength(current) > PREVIEW_CALL_MAX_BYTES) return;
  return {
    previous: current,
    written_sha256: sha256Of(proposed),
    path,
    until: iso(w.now() + days * 86_400_000),
  };
}

/** The launch-time check of one approved upstream call (never throws). */
export async function recheck(command: Command, w: RecheckWorld): Promise<Recheck> {
  const ref = command.upstream;
  const config = ref === undefined ? undefined : w.registry.config(ref.name);
  if (ref === undefined || config === undefined || config.bind_previews === false) return { kind: 'launch' };
  const spec = previewSpecs(config).get(ref.tool);
  if (spec === undefined) return { kind: 'launch' };
  const approved = command.preview;
  const bound = approved !== undefined && approved.status === 'ready';
  // A read of the very file approved answers with the approved preview: no diff made again.
  const seen: FileSeen = bound ? { approved } : {};
  const computed = await previewThrough(w.registry, {
    upstream: ref.name,
    tool: ref.tool,
    spec,
    args: command.args,
    seen,
  });
  const preview: Preview = {
    ...(computed ?? { kind: spec.kind, status: 'failed', error: 'the preview could not be made again' }),
    computed_at: iso(w.now()),
  };
  const approvedSha = approved === undefined ? undefined : basisOf(approved);
  const currentSha = basisOf(preview);
  const hashes = { approved_sha256: approvedSha ?? null, current_sha256: currentSha ?? null };
  if (bound && (approvedSha === undefined || approvedSha !== currentSha)) {
    return {
      kind: 'rebound',
      rebound: { kind: 'rebound', preview, detail: { ...hashes, preview: previewRecord(preview) } },
    };
  }
  const base = revertBase(spec, preview, seen, w);
  // Bound and equal: the approved preview stays the command's. Nothing bound: the launch-time one is approved.
  const fields: Bound['fields'] = bound ? {} : { preview };
  if (base !== undefined) fields.revert_base = base;
  return {
    kind: 'launch',
    bound: {
      fields,
      detail: {
        preview_checked: { ...hashes, bound, revertible: base !== undefined },
        preview: previewRecord(preview),
      },
    },
  };
}
