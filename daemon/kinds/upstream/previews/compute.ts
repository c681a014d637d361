/**
 * Computing one preview (contract 12) through the upstream's own connection:
 *
 * - `file_diff`: calls the `read` tool — only one the upstream annotates `readOnlyHint: true`, else
 *   `PreviewUnavailable: <tool> is not read-only` and nothing is called — with `{"path": <path_arg value>}`,
 *   takes its text as the current file (an `isError` saying the file does not exist → an empty "new file";
 *   any other error → failed, saying what the upstream answered, such as a path outside its roots), and diffs
 *   it against the proposed content (`replace`) or the current content plus it (`append`).
 * - `dry_run`: calls the same tool with the request's arguments plus `"<arg>": true` and keeps its text.
 *
 * Each call is bounded by the caller (10 s, cancelled when the command is decided); an answer over 1 MiB
 * of JSON fails the preview. Never throws: every failure is a preview with `status: "failed"` and one
 * sentence. Nothing here logs: previewed content goes to the owner's View only.
 */
import { ProtocolError, SdkError, SdkErrorCode, type Tool } from '@modelcontextprotocol/client';
import type { DryRunSpec, FileDiffSpec, PreviewSpec } from '../../../config/index.js';
import type { Preview } from '../../../core/index.js';
import { bounded, unifiedDiff } from './diff.js';

/** Contract 12: the most one preview call may answer (JSON of its result), and the proposed content. */
export const PREVIEW_CALL_MAX_BYTES = 1024 * 1024;

/** What one computation may do: call a tool of the upstream, and see what it listed. */
export interface PreviewIo {
  /** Sends one tools/call through the upstream connection (bounded by the caller); rejects on failure. */
  call(tool: string, args: Record<string, unknown>): Promise<unknown>;
  /** The tool as the upstream listed it, or undefined. */
  listed(tool: string): Tool | undefined;
  /** The upstream's name, for the words of a failure. */
  upstream: string;
  /** The per-call deadline in seconds, for the words of a failure. */
  timeoutS: number;
}

/** A preview before its time is stamped. */
export type Computed = Omit<Preview, 'computed_at'>;

/** Contract 12: the words of a read error that mean "there is no such file". */
const NO_FILE_RE = /ENOENT|no such file|does not exist/i;

function failed(kind: Preview['kind'], error: string): Computed {
  return { kind, status: 'failed', error };
}

/** The first line of a text the upstream wrote, cut to 200 characters, for one sentence of ours. */
function said(text: string): string {
  const line = text.trim().split('\n')[0] ?? '';
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}

/** The result's text blocks joined, or undefined when it is not a tool result or has no text. */
function textOf(result: unknown): string | undefined {
  const content = (result as { content?: unknown } | null)?.content;
  if (!Array.isArray(content)) return undefined;
  const texts = content
    .filter((b): b is { type: 'text'; text: string } => b?.type === 'text' && typeof b.text === 'string')
    .map((b) => b.text);
  return texts.length === 0 ? undefined : texts.join('');
}

/** Why a call failed, in words (never its content). */
function callFailure(e: unknown, io: PreviewIo): string {
  if (e instanceof SdkError && e.code === SdkErrorCode.RequestTimeout)
    return `the upstream ${io.upstream} did not answer the preview call within ${io.timeoutS} s`;
  if (
    e instanceof SdkError &&
    (e.code === SdkErrorCode.NotConnected || e.code === SdkErrorCode.ConnectionClosed)
  )
    return `the connection to the upstream ${io.upstream} ended before it answered the preview call`;
  if (e instanceof ProtocolError)
    return `the upstream ${io.upstream} answered an error (${e.code}: ${said(e.message)})`;
  return `the upstream ${io.upstream}'s answer to the preview call could not be read (${said((e as Error)?.message ?? String(e))})`;
}

/** One call, its answer checked: a tool result of at most 1 MiB, else the reason it is not. */
async function callBounded(
  io: PreviewIo,
  tool: string,
  args: Record<string, unknown>,
): Promise<{ ok: true; result: { isError?: unknown } } | { ok: false; why: string }> {
  let result: unknown;
  try {
    result = await io.call(tool, args);
  } catch (e) {
    return { ok: false, why: callFailure(e, io) };
  }
  if (Buffer.byteLength(JSON.stringify(result) ?? '') > PREVIEW_CALL_MAX_BYTES)
    return { ok: false, why: `the upstream ${io.upstream} answered more than 1 MiB to the preview call` };
  if (
    result === null ||
    typeof result !== 'object' ||
    !Array.isArray((result as { content?: unknown }).content)
  )
    return {
      ok: false,
      why: `the upstream ${io.upstream} did not answer the preview call with a tool result`,
    };
  return { ok: true, result: result as { isError?: unknown } };
}

async function fileDiff(spec: FileDiffSpec, args: Record<string, unknown>, io: PreviewIo): Promise<Computed> {
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
  const answer = await callBounded(io, spec.read, { path });
  if (!answer.ok) return fail(answer.why);
  const text = textOf(answer.result);
  let current = '';
  let newFile = false;
  if (answer.result.isError === true) {
    if (text === undefined || !NO_FILE_RE.test(text))
      return fail(
        `the upstream ${io.upstream} refused to read the file: ${said(text ?? 'it gave no reason')}`,
      );
    newFile = true;
  } else if (text === undefined) return fail(`the upstream ${io.upstream} answered the read with no text`);
  else current = text;
  const proposed = spec.mode === 'append' ? current + content : content;
  const diff = unifiedDiff(path, current, proposed, newFile);
  if (diff === undefined) return fail('the change is too large to show as a diff in time');
  const shown = bounded(diff);
  const preview: Computed = { kind: 'file_diff', status: 'ready', diff: shown.text };
  if (newFile) preview.new_file = true;
  if (shown.truncated) preview.truncated = true;
  return preview;
}

async function dryRun(
  spec: DryRunSpec,
  tool: string,
  args: Record<string, unknown>,
  io: PreviewIo,
): Promise<Computed> {
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
  const preview: Computed = { kind: 'dry_run', status: 'ready', text: shown.text };
  if (shown.truncated) preview.truncated = true;
  return preview;
}

/** The preview of a call to `tool` with `args`; never throws. */
export function computePreview(
  spec: PreviewSpec,
  tool: string,
  args: Record<string, unknown>,
  io: PreviewIo,
): Promise<Computed> {
  return spec.kind === 'file_diff' ? fileDiff(spec, args, io) : dryRun(spec, tool, args, io);
}
