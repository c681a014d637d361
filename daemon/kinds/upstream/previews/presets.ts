/**
 * Named sets of previews for well-known servers (contract 12 `preset`), and the one rule that merges them
 * with an upstream's own `previews`: an explicit entry wins over the preset's entry for the same tool.
 */
import type { PreviewPreset, PreviewSpec, UpstreamConfig } from '../../../config/index.js';

/** Typed by the config's PREVIEW_PRESETS: a preset the config accepts always has its entries here. */
const PRESETS: Record<PreviewPreset, Record<string, PreviewSpec>> = {
  // @modelcontextprotocol/server-filesystem: write_file replaces a file's content (read it through the
  // read-only read_text_file and diff); edit_file answers a git-style diff when asked for a dry run.
  filesystem: {
    write_file: {
      kind: 'file_diff',
      read: 'read_text_file',
      path_arg: 'path',
      content_arg: 'content',
      mode: 'replace',
    },
    edit_file: { kind: 'dry_run', arg: 'dryRun' },
  },
};

/** An upstream's previews by its own tool name: the preset's, then its explicit entries over them. */
export function previewSpecs(config: UpstreamConfig): ReadonlyMap<string, PreviewSpec> {
  const specs = new Map<string, PreviewSpec>();
  if (config.preset !== undefined)
    for (const [tool, s] of Object.entries(PRESETS[config.preset])) specs.set(tool, s);
  for (const [tool, s] of Object.entries(config.previews ?? {})) specs.set(tool, s);
  return specs;
}
