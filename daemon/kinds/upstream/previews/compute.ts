/**
 * Computing one preview (contract 12) through the upstream's preview connection (never the one approved
 * calls use: contract 12 (v4), upstreams/preview-instances.ts):
 *
 * - `file_diff`: calls the `read` tool — only one the upstream annotates `readOnlyHint: true`, else
 *   `PreviewUnavailable: <tool> is not read-only` and nothing is called — with `{"path": <path_arg value>}`,
 *   takes its text as the current file (an `isError` saying the file does not exist → an empty "new file";
 *   any other error → failed, saying what the upstream answered, such as a path outside its roots), and diffs
 *   it against the proposed content (`replace`) or the current content plus it (`append`).
 * - `dry_run`: calls the same tool with the request's arguments plus `"<arg>": true` and keeps its text.
 * - with `preset: "filesystem"` (contract 12 (v4)), both first ask the server about the path and read only a
 *   regular file of at most 1 MiB (./file-info.ts).
 *
 * Each call is bounded by the caller (10 s, cancelled when the command is decided); an answer over 1 MiB
 * of JSON fails the preview. Never throws: every failure is a preview with `status: "failed"` and one
 * sentence. Nothing here logs: previewed content goes to the owner's View only.
 */
import { createHash } from 'node:crypto';
import {
  type Computed,
  callBounded,
  failed,
  NO_FILE_RE,
  PREVIEW_CALL_MAX_BYTES,
  type PreviewIo,
  said,
  textOf,
} from './call.js';
import { bounded, unifiedDiff } from './diff.js';
import { checkFile } from './file-info.js';
import type { RunDiff, RunDry, RunSpec } from './presets.js';

/** The current content: read (after the preset's check), or empty for a new file; else why not. */
async function current(
  spec: RunDiff,
  path: string,
  io: PreviewIo,
): Promise<{ ok: true; text: string; newFile: boolean } | { ok: false; why: string }> {
  if (spec.stat !== undefined) {
    const found = await checkFile(io, spec.stat, path);
    if (!found.ok) return found;
    if (!found.exists) return { ok: true, text: '', newFile: true };
  }
  const answer = await callBounded(io, spec.read, { path });
  if (!answer.ok) return answer;
  const text = textOf(answer.result);
  if (answer.result.isError === true) {
    if (text === undefined || !NO_FILE_RE.test(text))
      return {
        ok: false,
        why: `the upstream ${io.upstream} refused to read the file: ${said(text ?? 'it gave no reason')}`,
      };
    return { ok: true, text: '', newFile: true };
  }
  if (text === undefined)
    return { ok: false, why: `the upstream ${io.upstream} answered the read with no text` };
  return { ok: true, text, newFile: false };
}

/** Lower-case hex SHA-256 of a text's UTF-8 bytes. */
export function sha256Of(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/**
 * Contract 20: what a file_diff preview read — the file as it was, and what the write would leave — for the
 * launch-time check and a revert. Filled in by `computePreview` when the caller hands one.
 */
export interface FileSeen {
  path?: string;
  current?: string;
  newFile?: boolean;
  proposed?: string;
  /**
   * The launch-time check (contract 20): the approved ready preview. A read whose file hashes to its basis
   * answers with it, no diff made again: the same file and the same arguments make the same diff.
   */
  approved?: Computed;
}

async function fileDiff(
  spec: RunDiff,
  args: Record<string, unknown>,
  io: PreviewIo,
  seen: FileSeen,
): Promise<Computed> {
  const fail = (why: string) => failed('file_diff', why);
  const read = io.listed(spec.read);
  if (read === undefined)
    return fail(`PreviewUnavailable: ${spec.read} is not a tool of the upstream ${io.upstream}`);
  // Contract 12: the AI chooses the path, so only a tool the server itself calls read-only is ever called.
  if (read.annotations?.readOnlyHint !== true)
    return fail(`PreviewUnavailable: ${spec.read} is not read-only`);
  const path = args[spec.path_arg];
  if (typeof path !== 'string')
    return fail(`the ${spec.path_arg} argument is not a string, so there is no file to read`);
  const content = args[spec.content_arg];
  if (typeof content !== 'string')
    return fail(`the ${spec.content_arg} argument is not a string, so there is no content to compare`);
  if (Buffer.byteLength(content) > PREVIEW_CALL_MAX_BYTES)
    return fail('the proposed content is larger than 1 MiB');
  const found = await current(spec, path, io);
  if (!found.ok) return fail(found.why);
  const { text, newFile } = found;
  const proposed = spec.mode === 'append' ? text + content : content;
  // Contract 20: the file it was made from, by hash (a new file: the empty text's).
  const basis = sha256Of(text);
  const { approved } = seen;
  if (approved?.kind === 'file_diff' && approved.status === 'ready' && approved.basis_sha256 === basis) {
    Object.assign(seen, { path, current: text, newFile, proposed });
    return approved;
  }
  const diff = unifiedDiff(path, text, proposed, newFile);
  if (diff === undefined) return fail('the change is too large to show as a diff in time');
  Object.assign(seen, { path, current: text, newFile, proposed });
  const shown = bounded(diff);
  const preview: Computed = { kind: 'file_diff', status: 'ready', diff: shown.text, basis_sha256: basis };
  if (newFile) preview.new_file = true;
  if (shown.truncated) preview.truncated = true;
  return preview;
}

async function dryRun(
  spec: RunDry,
  tool: string,
  args: Record<string, unknown>,
  io: PreviewIo,
): Promise<Computed> {
  // The server reads the file for a dry run too: the preset's check first (no file: the dry run says so).
  const path = spec.stat === undefined ? undefined : args[spec.stat.path_arg];
  if (spec.stat !== undefined && typeof path === 'string') {
    const found = await checkFile(io, spec.stat, path);
    if (!found.ok) return failed('dry_run', found.why);
  }
  // The request's arguments with the flag forced on: an AI's `"dryRun": false` cannot make it a real run.
  const answer = await callBounded(io, tool, { ...args, [spec.arg]: true });
  if (!answer.ok) return failed('dry_run', answer.why);
  const text = textOf(answer.result);
  if (answer.result.isError === true)
    return failed(
      'dry_run',
      `the upstream ${io.upstream} answered that the dry run failed: ${said(text ?? 'it gave no reason')}`,
    );
  if (text === undefined)
    return failed('dry_run', `the upstream ${io.upstream} answered the dry run with no text`);
  const shown = bounded(text);
  // Contract 20: the dry run's whole answer, by hash.
  const preview: Computed = {
    kind: 'dry_run',
    status: 'ready',
    text: shown.text,
    basis_sha256: sha256Of(text),
  };
  if (shown.truncated) preview.truncated = true;
  return preview;
}

/** The preview of a call to `tool` with `args`; never throws. `seen`: what a file_diff read (contract 20). */
export function computePreview(
  spec: RunSpec,
  tool: string,
  args: Record<string, unknown>,
  io: PreviewIo,
  seen: FileSeen = {},
): Promise<Computed> {
  return spec.kind === 'file_diff' ? fileDiff(spec, args, io, seen) : dryRun(spec, tool, args, io);
}
