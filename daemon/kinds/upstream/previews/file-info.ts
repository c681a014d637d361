/**
 * Contract 12 (v4): with `preset: "filesystem"`, before anything reads the path the AI named, the daemon asks
 * the server's read-only `get_file_info` about it and reads only a regular file of at most 1 MiB; otherwise
 * the preview fails saying why ("larger than 1 MiB", "not a regular file"). So a FIFO is never opened (the
 * server's read of one waits for a writer, holding a worker thread: four of them stopped the server), nor a
 * device, nor a file whose answer would outweigh a message (issue 35 finding 3).
 *
 * The filesystem server answers `get_file_info` with `key: value` lines (`size: 123`, `isFile: true`, …).
 * An answer without them fails the preview: nothing is read on a guess.
 */
import { callBounded, NO_FILE_RE, PREVIEW_CALL_MAX_BYTES, type PreviewIo, said, textOf } from './call.js';
import type { StatSpec } from './presets.js';

/** What the check found: a file to read, no file (a new one), or why the preview stops here. */
export type FileCheck = { ok: true; exists: boolean } | { ok: false; why: string };

/** `path` as the server's get_file_info describes it, judged by contract 12 (v4). */
export async function checkFile(io: PreviewIo, stat: StatSpec, path: string): Promise<FileCheck> {
  const tool = io.listed(stat.tool);
  if (tool === undefined)
    return {
      ok: false,
      why: `PreviewUnavailable: ${stat.tool} is not a tool of the upstream ${io.upstream}`,
    };
  if (tool.annotations?.readOnlyHint !== true)
    return { ok: false, why: `PreviewUnavailable: ${stat.tool} is not read-only` };
  const answer = await callBounded(io, stat.tool, { [stat.path_arg]: path });
  if (!answer.ok) return answer;
  const text = textOf(answer.result);
  if (answer.result.isError === true) {
    if (text !== undefined && NO_FILE_RE.test(text)) return { ok: true, exists: false };
    return {
      ok: false,
      why: `the upstream ${io.upstream} refused to read the file: ${said(text ?? 'it gave no reason')}`,
    };
  }
  const size = /^size: (\d+)$/m.exec(text ?? '')?.[1];
  const isFile = /^isFile: (true|false)$/m.exec(text ?? '')?.[1];
  if (size === undefined || isFile === undefined)
    return {
      ok: false,
      why: `the ${stat.tool} answer of the upstream ${io.upstream} did not say the file's size and type, so it was not read`,
    };
  if (isFile !== 'true') return { ok: false, why: 'the path is not a regular file, so no preview reads it' };
  if (Number(size) > PREVIEW_CALL_MAX_BYTES)
    return {
      ok: false,
      why: `the file is larger than 1 MiB (${size} bytes), so no preview reads it`,
    };
  return { ok: true, exists: true };
}
