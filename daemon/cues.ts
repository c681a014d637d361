// Placeholder until issue 5 lands: the OGF feature reports itself off.
import type { Config } from './config.js';
import type { CuesApi } from './context.js';
import type { DataDir } from './datadir.js';
import type { Executor } from './executor.js';
import type { Logger } from './log.js';

export interface CueFeatureDeps {
  config: Config;
  paths: DataDir;
  log: Logger;
}

/** The OGF feature when configured: the preparer the MCP edge uses and the executor the broker runs. */
export function createCueFeature(_deps: CueFeatureDeps): { cues: CuesApi; executor: Executor } | undefined {
  return undefined;
}
