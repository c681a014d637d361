/**
 * What a command's preview keeps once the command ends (contract 12 (v4)): its kind, status, `new_file`,
 * `truncated` and `computed_at`, but not its text. The diff or dry-run text shows the file as it was — the
 * owner's notes, a key in a config file — and served the owner's decision only; kept in the store it would
 * outlive that use by months. What proves later what the owner saw stays in the audit record: the text's
 * size and SHA-256 in the command's `preview_made` entry (kinds/upstream/previews/record.ts).
 *
 * Pure (transition.ts applies it to every event that ends a command). A ready preview with neither `diff`
 * nor `text` is one whose text was removed; the panel and `list` say so.
 */
import type { Command } from './lifecycle.js';

/**
 * Contract 20: a command whose ended preview the daemon keeps — a succeeded write it keeps the previous
 * content of, so its card can show the diff back (the preview reversed) while a revert is offered. The
 * retention rule (retention-rule.ts) removes both once that window has passed.
 */
export function keepsPreviewText(command: Command): boolean {
  return command.revert_base !== undefined && command.phase.state === 'succeeded';
}

/** `command` (which has just ended) with its preview's text removed, unless contract 20 keeps it. */
export function withEndedPreview(command: Command): Command {
  const p = command.preview;
  if (p === undefined || (p.diff === undefined && p.text === undefined) || keepsPreviewText(command))
    return command;
  const { diff: _diff, text: _text, ...rest } = p;
  return { ...command, preview: rest };
}
