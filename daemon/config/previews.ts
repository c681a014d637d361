/**
 * An upstream's previews (contract 12): per upstream tool, how the daemon shows the owner a call's effect
 * before they decide — `file_diff` (read the file through the upstream's own read-only tool, diff it against
 * the proposed content) or `dry_run` (the same tool with its dry-run flag) — and `preset`, named sets of
 * them for well-known servers. The presets' entries live with the machinery that runs them
 * (kinds/upstream/previews/presets.ts, typed by PREVIEW_PRESETS so the two cannot drift apart).
 */
import { z } from 'zod';
import { describeValue } from './fields.js';

/** The presets `preset` accepts (contract 12: the official filesystem server). */
export const PREVIEW_PRESETS = ['filesystem'] as const;
export type PreviewPreset = (typeof PREVIEW_PRESETS)[number];

const KINDS = 'must be "file_diff" or "dry_run"';

/** What came, in words: a string quoted (an enum's wrong value), else as describeValue says. */
function got(v: unknown): string {
  if (v === undefined) return 'none';
  return typeof v === 'string' ? JSON.stringify(v.slice(0, 40)) : describeValue(v);
}

/** A tool or argument name: what the upstream's own schema names, so any non-empty string. */
const name = (what: string) =>
  z
    .string({ error: (i) => `must be ${what} (a string), got ${describeValue(i.input)}` })
    .min(1, `must be ${what}`);

const fileDiffSchema = z.strictObject({
  kind: z.literal('file_diff'),
  read: name('the name of the upstream tool that reads the file (annotated readOnlyHint: true)'),
  path_arg: name('the name of the argument holding the file path'),
  content_arg: name('the name of the argument holding the proposed content'),
  mode: z
    .enum(['replace', 'append'], {
      error: (i) => `must be "replace" or "append", got ${got(i.input)}`,
    })
    .default('replace'),
});

const dryRunSchema = z.strictObject({
  kind: z.literal('dry_run'),
  arg: name('the name of the boolean argument that asks the tool for a dry run'),
});

/** One tool's preview (contract 12). */
export const previewSpecSchema = z.discriminatedUnion('kind', [fileDiffSchema, dryRunSchema], {
  error: (i) =>
    i.code === 'invalid_union'
      ? `${KINDS}, got ${got((i.input as Record<string, unknown> | undefined)?.kind)}`
      : `must be an object with a kind (${KINDS.slice(8)})`,
});

export type PreviewSpec = z.infer<typeof previewSpecSchema>;
export type FileDiffSpec = z.infer<typeof fileDiffSchema>;
export type DryRunSpec = z.infer<typeof dryRunSchema>;

/** `previews`: upstream tool name → its preview. */
export const previewsSchema = z.record(z.string().min(1, 'tool names must be non-empty'), previewSpecSchema, {
  error: (i) => `must be an object mapping upstream tool names to previews, got ${describeValue(i.input)}`,
});

/** `preset`: one of PREVIEW_PRESETS. */
export const presetSchema = z.enum(PREVIEW_PRESETS, {
  error: (i) => `must be one of ${PREVIEW_PRESETS.map((p) => `"${p}"`).join(', ')}, got ${got(i.input)}`,
});
