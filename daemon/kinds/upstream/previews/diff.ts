/**
 * The file_diff preview's text (contract 12): a unified diff made by the `diff` library (jsdiff's
 * createTwoFilesPatch, 3 lines of context, `--- <path>` / `+++ <path>` headers only, `--- /dev/null` for a
 * new file) — no diff algorithm of our own — and the 256 KiB bound of owner frames.
 */
import { createTwoFilesPatch, FILE_HEADERS_ONLY } from 'diff';

/** Contract 12: a preview carries at most this many bytes of diff or text in owner frames. */
export const PREVIEW_MAX_BYTES = 256 * 1024;

/**
 * The longest the diff may run on the event loop: jsdiff's Myers diff is O(N·D), so two unrelated 1 MiB
 * files could hold the daemon for seconds. Past it the preview fails and says the change is too large.
 */
const DIFF_TIMEOUT_MS = 500;

/** The unified diff of `current` → `proposed` at `path`, or undefined when it took too long to compute. */
export function unifiedDiff(
  path: string,
  current: string,
  proposed: string,
  newFile: boolean,
): string | undefined {
  return createTwoFilesPatch(newFile ? '/dev/null' : path, path, current, proposed, undefined, undefined, {
    context: 3,
    headerOptions: FILE_HEADERS_ONLY,
    timeout: DIFF_TIMEOUT_MS,
  });
}

/**
 * `text` within PREVIEW_MAX_BYTES of UTF-8: whole, or cut at the last line that fits (a line longer than the
 * bound is cut inside, never inside a character), with `truncated`.
 */
export function bounded(text: string): { text: string; truncated?: true } {
  if (Buffer.byteLength(text) <= PREVIEW_MAX_BYTES) return { text };
  let cut = Buffer.from(text).subarray(0, PREVIEW_MAX_BYTES).toString('utf8');
  // A character split by the byte cut decodes as U+FFFD at the end: drop it.
  if (cut.endsWith('\uFFFD')) cut = cut.slice(0, -1);
  const lastNewline = cut.lastIndexOf('\n');
  if (lastNewline > 0) cut = cut.slice(0, lastNewline + 1);
  return { text: cut, truncated: true };
}
