/**
 * Named sets of previews for well-known servers (contract 12 `preset`), and the one rule that merges them
 * with an upstream's own `previews`: an explicit entry wins over the preset's entry for the same tool.
 *
 * Contract 12 (v4): with `preset: "filesystem"` the daemon first asks the server's `get_file_info` and reads
 * only a regular file of at most 1 MiB. The AI chooses the path: a 9 MiB file answered more than a message
 * may weigh, and a FIFO held the server's worker threads until a writer came (issue 35 finding 3). The
 * preset's entries carry that check (`stat`); a config's own entry has none (it names its own server).
 */
import type { DryRunSpec, FileDiffSpec, PreviewPreset, UpstreamConfig } from '../../../config/index.js';

/** A read-only tool asked about the path before anything reads it (./file-info.ts). */
export interface StatSpec {
  /** The tool (the filesystem server's `get_file_info`: its text has `size:` and `isFile:` lines). */
  tool: string;
  /** The argument of the call holding the path. */
  path_arg: string;
}

/** A preview as the runner makes it: the config's entry, plus the preset's check of the path. */
export type RunDiff = FileDiffSpec & { stat?: StatSpec };
export type RunDry = DryRunSpec & { stat?: StatSpec };
export type RunSpec = RunDiff | RunDry;

const FS_STAT: StatSpec = { tool: 'get_file_info', path_arg: 'path' };

/** Typed by the config's PREVIEW_PRESETS: a preset the config accepts always has its entries here. */
const PRESETS: Record<PreviewPreset, Record<string, RunSpec>> = {
  // @modelcontextprotocol/server-filesystem: write_file replaces a file's content (read it through the
  // read-only read_text_file and diff); edit_file answers a git-style diff when asked for a dry run (it
  // reads the file too, so the same check comes first).
  filesystem: {
    write_file: {
      kind: 'file_diff',
      read: 'read_text_file',
      path_arg: 'path',
      content_arg: 'content',
      mode: 'replace',
      stat: FS_STAT,
    },
    edit_file: { kind: 'dry_run', arg: 'dryRun', stat: FS_STAT },
  },
};

/** An upstream's previews by its own tool name: the preset's, then its explicit entries over them. */
export function previewSpecs(config: UpstreamConfig): ReadonlyMap<string, RunSpec> {
  const specs = new Map<string, RunSpec>();
  if (config.preset !== undefined)
    for (const [tool, s] of Object.entries(PRESETS[config.preset])) specs.set(tool, s);
  for (const [tool, s] of Object.entries(config.previews ?? {})) specs.set(tool, s);
  return specs;
}
