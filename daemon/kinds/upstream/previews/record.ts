/**
 * What a preview leaves in the audit log (contract 12: "recorded in its audit entries"; contract 14's
 * "preview made"): its kind and status, a one-line summary, and the size and SHA-256 of the text shown —
 * enough to prove later what the owner saw, without copying the previewed content into the log.
 */

import { createHash } from 'node:crypto';
import type { Preview } from '../../../core/index.js';

/** "3 lines added, 1 removed": a unified diff's body lines counted (its `---`/`+++` headers not). */
export function diffCounts(diff: string): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  let body = false;
  for (const line of diff.split('\n')) {
    if (line.startsWith('@@')) body = true;
    else if (body && line.startsWith('+')) added++;
    else if (body && line.startsWith('-')) removed++;
  }
  return { added, removed };
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** What a ready preview whose text is gone says instead. */
const REMOVED = 'its text was removed after the command ended; the audit record keeps its SHA-256';

/** The preview in one line, for the audit log and `list`. */
export function previewSummary(p: Preview): string {
  if (p.status === 'pending') return 'being computed';
  if (p.status === 'failed') return `failed: ${p.error ?? 'no reason given'}`;
  // Contract 12 (v4): a command that ended keeps no preview text (core/model/preview-end.ts).
  if (p.diff === undefined && p.text === undefined) return REMOVED;
  const cut = p.truncated ? ' (cut at 256 KiB)' : '';
  if (p.diff !== undefined) {
    const { added, removed } = diffCounts(p.diff);
    if (added === 0 && removed === 0) return `no change to the file${cut}`;
    const counts = `${plural(added, 'line')} added, ${removed} removed`;
    return `${p.new_file ? 'new file, ' : ''}${counts}${cut}`;
  }
  return `dry run answered ${plural([...(p.text ?? '')].length, 'character')}${cut}`;
}

/** The audit entry's detail of a preview made. */
export function previewRecord(p: Preview): Record<string, unknown> {
  const detail: Record<string, unknown> = { preview: p.kind, status: p.status, summary: previewSummary(p) };
  const shown = p.diff ?? p.text;
  if (shown !== undefined) {
    detail.bytes = Buffer.byteLength(shown);
    detail.sha256 = createHash('sha256').update(shown, 'utf8').digest('hex');
  }
  return detail;
}
