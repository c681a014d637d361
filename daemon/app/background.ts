/**
 * What runs beside the requests once the daemon listens: the upstreams' connections and `upstreams.json`
 * (upstream-status.ts), the kinds' work (previews, contract 12: started before the connections open, so a
 * preview goes through them once they are up) and the retention pass (issue 19 finding 3: finished
 * commands' bulky fields pruned after 7 days, off the hot path). `close()` stops the last two; the
 * connections are the registry's to close.
 */
import { type Logger, systemClock } from '../base/index.js';
import { type Broker, RetentionPass } from '../core/index.js';
import { type SourceWorld, startKindWork } from '../kinds/index.js';
import type { DaemonStore } from '../store/index.js';
import type { Source } from '../tool-kind/index.js';
import { upstreamStatusWriter } from './upstream-status.js';

export function startBackground(o: {
  world: SourceWorld;
  broker: Broker;
  store: DaemonStore;
  sources: readonly Source[];
  /** Calls `l` when any source's tool set may have changed. */
  onToolsChange: (l: () => void) => () => void;
  log: Logger;
}): { close(): void } {
  const { world, broker, store } = o;
  const { paths, upstreams } = world;
  // Both the upstream's state and its exposed tools (compiled after it lists them) are in the status.
  const publishStatus = upstreamStatusWriter(paths, upstreams, () => o.sources, o.log);
  const work = startKindWork(world, broker);
  upstreams.onChange(publishStatus);
  o.onToolsChange(publishStatus);
  if (upstreams.names().length > 0) publishStatus();
  upstreams.start();
  const retention = new RetentionPass({
    scan: (after, limit) => store.commands.retentionScan(after, limit),
    prune: (id) => broker.prune(id),
    clock: systemClock,
    log: o.log,
  });
  retention.start();
  return {
    close() {
      retention.close();
      for (const w of work) w.close();
    },
  };
}
