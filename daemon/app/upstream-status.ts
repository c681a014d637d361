/**
 * `upstreams.json` (contract 7: `status` shows each upstream's state and the tools it exposes): rewritten
 * whenever an upstream's state or its exposed tools change; present while some upstream is configured (a
 * reload may add the first or remove the last).
 */
import type { Logger } from '../base/index.js';
import type { DataDir } from '../datadir/index.js';
import type { Source } from '../tool-kind/index.js';
import {
  removeUpstreamStatus,
  type UpstreamRegistry,
  withExposed,
  writeUpstreamStatus,
} from '../upstreams/index.js';

export function upstreamStatusWriter(
  paths: DataDir,
  upstreams: UpstreamRegistry,
  sources: () => readonly Source[],
  log: Logger,
): () => void {
  return () => {
    try {
      if (upstreams.names().length === 0) return removeUpstreamStatus(paths.upstreamsJson);
      const listing = Object.assign({}, ...sources().map((s) => s.listing?.().fields ?? {}));
      writeUpstreamStatus(paths.upstreamsJson, process.pid, withExposed(upstreams.status(), listing));
    } catch (e) {
      log.log('error', 'upstream_status_not_written', { error: (e as Error).message });
    }
  };
}
