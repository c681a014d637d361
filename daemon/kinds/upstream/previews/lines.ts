/**
 * A call's preview as `ogf-broker list` lines (contract 12: `list` prints the diff, escaped as in 5): a
 * heading with its state in words, then each line of the diff or dry-run text behind a `| ` gutter — every
 * line escaped on its own (control and bidi characters as `\u001b`), so no previewed text can redraw the
 * terminal or pass for another command's lines.
 */

import { escapeForTerminal as esc } from '../../../base/index.js';
import type { Preview } from '../../../core/index.js';
import { gutterLines } from '../../../tool-kind/index.js';
import { previewSummary } from './record.js';

const KIND_WORDS: Record<Preview['kind'], string> = { file_diff: 'file diff', dry_run: 'dry run' };

/** The preview's lines under a command in `list`; none when the call has no preview. */
export function previewLines(p: Preview | undefined): string[] {
  if (p === undefined) return [];
  const head = `    preview (${KIND_WORDS[p.kind] ?? esc(String(p.kind))}): ${esc(previewSummary(p))}`;
  if (p.status !== 'ready' || (p.diff === undefined && p.text === undefined)) return [head];
  const lines = [`${head}; the file may still change before the command runs`];
  const shown = p.diff ?? p.text ?? '';
  lines.push(...gutterLines(shown));
  if (p.truncated) lines.push('      … the preview was cut at 256 KiB; the rest is not shown');
  return lines;
}
