/**
 * A command's arguments as owner frames carry them (an addition to contract 5 (v2); issue 19, owner frames):
 * whole while their JSON is at most VIEW_ARGS_MAX_BYTES, else a bounded preview. Output was already cut to
 * 16 KiB per stream, but an AI choosing ~1 MiB of arguments per upstream call (queued and cancelled, so no
 * cap bites) made every snapshot ~110 MB, which a test owner socket died of and the panel parsed on every
 * reconnect. The owner loads the whole arguments on demand with the `args` frame (owner/args-frame.ts).
 *
 * The preview never changes a value: every argument is either in `args` whole and exact, or listed in
 * `args_cut` by name with its size and the start of its JSON — never silently shortened in place, so no
 * client can mistake a cut value for what will run. Arguments beyond even that budget are counted in
 * `args_hidden` (an AI may send 100,000 tiny ones): the owner sees that they exist, and how many.
 *
 * Pure, no Node modules: this file is in the owner panel's type graph (via owner-view.ts).
 */
import type { ArgCut } from '../../../common/view.js';

/** Arguments whose JSON is at most this many UTF-8 bytes travel whole, like each output stream (16 KiB). */
export const VIEW_ARGS_MAX_BYTES = 16 * 1024;
/** An argument kept whole in a preview is at most this many bytes of JSON; larger ones are cut. */
export const ARG_KEEP_BYTES = 2048;
/** Characters of a cut argument's name (a name is the AI's text too) and of the start of its JSON. */
export const CUT_NAME_CHARS = 256;
export const CUT_START_CHARS = 512;
/** What a preview's arguments and cut entries may weigh together, about (UTF-8 bytes of JSON). */
export const PREVIEW_BUDGET_BYTES = 16 * 1024;

export type { ArgCut } from '../../../common/view.js';

/** What a View carries instead of `args` when they are over VIEW_ARGS_MAX_BYTES. */
export interface ArgsPreview {
  /** The arguments small enough to keep, whole and exact. */
  args: Record<string, unknown>;
  args_truncated: true;
  /** UTF-8 bytes of the whole arguments' JSON. */
  args_bytes: number;
  args_cut: ArgCut[];
  /** Arguments neither kept nor listed (past the budget), counted. */
  args_hidden?: number;
}

/** UTF-8 bytes of a JSON text (JSON.stringify writes lone surrogates as escapes, so every pair is whole). */
export function utf8Bytes(text: string): number {
  let bytes = text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) bytes += 1;
    else if (c >= 0xd800 && c <= 0xdbff) {
      // A pair: two units counted already, four bytes in all.
      bytes += 2;
      i++;
    } else bytes += 2;
  }
  return bytes;
}

/** `text` cut to `max` characters, never between the halves of a surrogate pair. */
function head(text: string, max: number): string {
  if (text.length <= max) return text;
  const end = (text.charCodeAt(max - 1) & 0xfc00) === 0xd800 ? max - 1 : max;
  return text.slice(0, end);
}

/**
 * The preview of `args`, or undefined when they travel whole. Work: one JSON.stringify of the arguments and
 * one of each argument — the arguments are bounded at the door (1 MiB of JSON, upstream-bounds.ts), and the
 * View's text is made once per command (owner-view.ts viewJson).
 */
export function argsPreview(args: Record<string, unknown>): ArgsPreview | undefined {
  const whole = JSON.stringify(args);
  // A UTF-16 unit is at most 3 bytes: short arguments are kept without counting.
  if (whole.length * 3 <= VIEW_ARGS_MAX_BYTES) return undefined;
  const total = utf8Bytes(whole);
  if (total <= VIEW_ARGS_MAX_BYTES) return undefined;
  const kept: Record<string, unknown> = {};
  const cut: ArgCut[] = [];
  let hidden = 0;
  let used = 0;
  Object.keys(args).forEach((name, at) => {
    const json = JSON.stringify(args[name]) ?? 'null';
    const bytes = utf8Bytes(json);
    const nameBytes = utf8Bytes(JSON.stringify(name));
    if (
      name.length <= CUT_NAME_CHARS &&
      bytes <= ARG_KEEP_BYTES &&
      used + nameBytes + bytes <= PREVIEW_BUDGET_BYTES
    ) {
      kept[name] = args[name];
      used += nameBytes + bytes + 2;
      return;
    }
    const entry: ArgCut = { name: head(name, CUT_NAME_CHARS), at, bytes, start: head(json, CUT_START_CHARS) };
    if (entry.name.length < name.length) entry.name_chars = name.length;
    const cost = utf8Bytes(JSON.stringify(entry));
    if (used + cost > PREVIEW_BUDGET_BYTES) {
      hidden++;
      return;
    }
    cut.push(entry);
    used += cost + 1;
  });
  const preview: ArgsPreview = { args: kept, args_truncated: true, args_bytes: total, args_cut: cut };
  if (hidden > 0) preview.args_hidden = hidden;
  return preview;
}
