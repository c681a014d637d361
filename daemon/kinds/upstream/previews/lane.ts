/**
 * Contract 20 with rule 3: two approved calls that write one file must not pass their launch-time checks
 * together (both would see the file as approved, and the second would overwrite the first's write unseen).
 * A call with a preview takes the launch lane of its file (core/runtime/session-lanes.ts, the FIFO cues take
 * per session): one launch at a time per upstream and path, so the second re-checks after the first ran.
 */
import { posix } from 'node:path';
import type { UpstreamConfig } from '../../../config/index.js';
import { previewSpecs } from './presets.js';

/** The lane of a call to `tool` with `args` on the upstream `name`, or undefined when it has no preview. */
export function fileLane(
  name: string,
  config: UpstreamConfig,
  tool: string,
  args: Record<string, unknown>,
): string | undefined {
  const spec = previewSpecs(config).get(tool);
  if (spec === undefined) return undefined;
  const path = args[spec.kind === 'file_diff' ? spec.path_arg : (spec.stat?.path_arg ?? 'path')];
  if (typeof path !== 'string') return undefined;
  // `a//b/./c` and `a/b/c` are one file to the server; other spellings (links, `..`) may still differ.
  return `file:${name}:${posix.normalize(path)}`;
}
