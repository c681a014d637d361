/**
 * Taking a write back (contract 20): for a succeeded upstream call whose `file_diff` preview (mode `replace`)
 * read a file that existed, the daemon kept the file's previous content (`revert_base`, set with `running`:
 * ./previews/recheck.ts). While the file still holds exactly what the command wrote — checked here by
 * reading it through the preview connection, the same read as a preview — a revert is the owner's own
 * command: the same upstream tool with the same path and the previous content, client `owner:<name>`,
 * `revert_of` naming the original. Its preview (the diff back) is made from the read that checked the file,
 * so the launch-time check binds it: a file changed between this check and the write is not written either.
 *
 * Refused with `NotRevertible`: a command that is not a succeeded write of this kind, a new file (no delete
 * is made on the owner's behalf), a window (`revert_days`) that has passed, a file that changed since.
 */
import { iso } from '../../base/index.js';
import type { Command, Preview, SubmitRequest } from '../../core/index.js';
import type { UpstreamRegistry } from '../../upstreams/index.js';
import { type FileSeen, fileLane, previewSpecs, previewThrough, sha256Of } from './previews/index.js';

/** What the owner edge gets back: the request to queue as the owner's, or why there is none. */
export type RevertPlan =
  | { ok: true; request: Omit<SubmitRequest, 'client'> }
  | { ok: false; code: 'NotFound' | 'NotRevertible'; message: string };

export interface RevertWorld {
  registry: UpstreamRegistry;
  now(): number;
}

const refuse = (message: string): RevertPlan => ({
  ok: false,
  code: 'NotRevertible',
  message: `NotRevertible: ${message}`,
});

/** Why `c` cannot be reverted from what it keeps alone, or undefined. */
function unkept(c: Command, now: number): string | undefined {
  if (c.tool !== 'upstream' || c.upstream === undefined)
    return 'only a file write of an upstream tool can be reverted';
  if (c.phase.state !== 'succeeded')
    return `the command is ${c.phase.state}; only a succeeded write can be reverted`;
  if (c.preview?.new_file === true)
    return 'the command made a new file; no delete is made on the owner’s behalf';
  const base = c.revert_base;
  if (base === undefined)
    return 'the daemon kept no previous content of this file (no file_diff preview in replace mode, over 1 MiB, or revert_days 0)';
  if (Date.parse(base.until) <= now) return `the previous content was kept until ${base.until}`;
  return undefined;
}

/** The owner's revert of `c`, checked against the file as it is now (never throws). */
export async function planRevert(c: Command | undefined, w: RevertWorld): Promise<RevertPlan> {
  if (c === undefined) return { ok: false, code: 'NotFound', message: 'no such command' };
  const why = unkept(c, w.now());
  if (why !== undefined) return refuse(why);
  const ref = c.upstream!;
  const base = c.revert_base!;
  const config = w.registry.config(ref.name);
  const spec = config === undefined ? undefined : previewSpecs(config).get(ref.tool);
  if (config === undefined || spec?.kind !== 'file_diff' || spec.mode !== 'replace')
    return refuse(`the upstream ${ref.name} no longer previews ${ref.tool} as a file write`);
  const args = { ...c.args, [spec.path_arg]: base.path, [spec.content_arg]: base.previous };
  const seen: FileSeen = {};
  const computed = await previewThrough(w.registry, { upstream: ref.name, tool: ref.tool, spec, args, seen });
  if (computed === undefined || computed.status !== 'ready' || seen.current === undefined)
    return refuse(`the file could not be read to check it (${computed?.error ?? 'no answer'})`);
  if (seen.newFile === true || sha256Of(seen.current) !== base.written_sha256)
    return refuse('the file changed after this command');
  const preview: Preview = { ...computed, computed_at: iso(w.now()) };
  const request: Omit<SubmitRequest, 'client'> = {
    tool: 'upstream',
    command: c.command,
    args,
    display: c.display,
    upstream: ref,
    revert_of: c.id,
    preview,
    justification: `Revert of ${c.id}: write back the content ${base.path} had before it.`,
  };
  if (c.reach !== undefined) request.reach = c.reach;
  const lane = fileLane(ref.name, config, ref.tool, args);
  if (lane !== undefined) request.file_lane = lane;
  return { ok: true, request };
}
