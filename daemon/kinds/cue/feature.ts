/**
 * The OGF feature (contracts.md 3.3 and 4): turns a validated `ogf_cue` input into an `ogf.cue` request
 * and supplies the executor that delivers it. Off (undefined) when `ogf_bridge` is not configured, so the
 * cue source (./source.ts) answers `OgfBridgeNotConfigured` without queueing anything.
 *
 * The session UUID goes only into `SubmitRequest.secret` (memory, rule 4). Everything stored or shown
 * is derived through an HMAC under a key kept in the data dir: `session_key` (the per-session FIFO key,
 * rule 6) and the short `sess·3f9a1c` fingerprint the owner sees.
 */
import { createHmac } from 'node:crypto';
import type { Logger } from '../../base/index.js';
import type { Config } from '../../config/index.js';
import type { Executor, SubmitRequest } from '../../core/index.js';
import { type DataDir, newToken, readOrCreateSecret } from '../../datadir/index.js';
import { CueExecutor, type CueSecret } from './executor.js';
import type { OgfCueInput } from './input.js';
import { newSessionFilePath } from './session-file.js';

/** What the cue source asks the feature for. */
export interface CuesApi {
  /** Builds the `ogf.cue` request for validated input: fingerprint, session key, session file path, display. */
  prepare(input: OgfCueInput, client: string): SubmitRequest;
}

export interface CueFeatureDeps {
  config: Config;
  paths: DataDir;
  log: Logger;
}

/** The argv the owner sees; the executor runs exactly this, resolved to the installed script (contract 4). */
export function cueDisplay(sessionFile: string): string[] {
  return ['ogf-bridge-client', 'deliver', '--session-file', sessionFile];
}

/** The cue fields as stored and shown: no `session_id`, no `wait_seconds`; a fixed key order (twin rule). */
export function cueArgs(input: OgfCueInput): Record<string, unknown> {
  const args: Record<string, unknown> = {
    action: input.action,
    emotion: input.emotion,
    intensity: input.intensity,
    gaze: input.gaze,
    ttl_ms: input.ttl_ms,
  };
  // Absent = leave the shown message alone; null = clear it (contract 3.3): keep the difference.
  if (input.message !== undefined) args.message = input.message;
  return args;
}

/** The OGF feature when configured: the preparer the MCP edge uses and the executor the broker runs. */
export function createCueFeature(deps: CueFeatureDeps): { cues: CuesApi; executor: Executor } | undefined {
  const bridge = deps.config.ogf_bridge;
  if (bridge === null) return undefined;
  const key = readOrCreateSecret(deps.paths.fingerprintKey, newToken);
  const cues: CuesApi = {
    prepare(input: OgfCueInput, client: string): SubmitRequest {
      // sessionIdSchema already lower-cased it; do it again so no caller can break the one form (3.3).
      const sessionId = input.session_id.toLowerCase();
      const mac = createHmac('sha256', key).update(sessionId, 'utf8').digest('hex');
      const sessionFile = newSessionFilePath(deps.paths.run);
      const secret: CueSecret = { session_id: sessionId };
      return {
        tool: 'ogf_cue',
        command: 'ogf.cue',
        args: cueArgs(input),
        display: cueDisplay(sessionFile),
        session_file: sessionFile,
        session_key: mac,
        session_fingerprint: `sess·${mac.slice(0, 6)}`,
        client,
        secret,
      };
    },
  };
  return {
    cues,
    executor: new CueExecutor({ bridge, outputLimitBytes: deps.config.output_limit_bytes, log: deps.log }),
  };
}
