/**
 * The broker over the store and the kinds' executors, and the rules it asks (contracts 11, 18): the
 * config's and the owners' in one rule book (config-rules.ts), the owners' kept by their desk
 * (owner-rules.ts). What a reload may change — which commands need several owners or a passkey, the rules —
 * is read from the config in force at each request. Its own file so the daemon's stays the order of
 * things, not their making.
 */
import type { Logger } from '../base/index.js';
import { type Config, commandApprovals, requiresPasskey } from '../config/index.js';
import { Broker, faultsFromEnv } from '../core/index.js';
import { KINDS } from '../kinds/index.js';
import type { PublishedEvent } from '../notify/index.js';
import { writeRulesStatus } from '../rules/index.js';
import type { DaemonStore } from '../store/index.js';
import { executorsOf, type Source } from '../tool-kind/index.js';
import { ConfigRules } from './config-rules.js';
import type { LiveConfig } from './live-config.js';
import { OwnerRules } from './owner-rules.js';

export function createBroker(o: {
  live: LiveConfig;
  store: DaemonStore;
  sources: Source[];
  env: NodeJS.ProcessEnv;
  log: Logger;
  /** The owners' notifications once they are started (a rule changed is a `config` event). */
  publish: (e: PublishedEvent) => void;
}): { broker: Broker; rules: ConfigRules; desk: OwnerRules } {
  const { live, store, log } = o;
  const config: Config = live.current;
  const rules = new ConfigRules(config, log);
  const broker = new Broker({
    store,
    reviewTimeoutS: config.review_timeout_s,
    maxPendingPerClient: config.max_pending_per_client,
    maxPending: config.max_pending,
    kinds: KINDS,
    executors: executorsOf(o.sources),
    // Contract 8: what may be granted is what the config names (catalog commands, upstream tools).
    commandPolicy: (name) => {
      const approvals = commandApprovals(live.current, name);
      return approvals === undefined ? undefined : { approvals };
    },
    // Contract 13.3: approvals of these need the approving owner's passkey; never granted or auto-approved.
    passkeyRequired: (name) => requiresPasskey(live.current, name),
    configGrants: config.grants,
    // Contract 16: commands carry this node's name; on a shared database only its own are launched here.
    node: config.node_name,
    shared: config.database_url !== null,
    // Contract 11: the config's rules (the loader compiled each once); v4: path_under resolves links for
    // commands of stdio upstreams (rules/facts.ts). Contract 18: then the owners'.
    rules,
    log,
    // Test-only crash points, armed by OGF_BROKER_FAULT in the daemon's environment (core/runtime/fault-points.ts).
    faults: faultsFromEnv(o.env),
  });
  const desk = new OwnerRules({
    store,
    book: rules,
    publish: o.publish,
    log,
    // `status` says how many rules are active; a data dir that cannot take the file keeps the old count.
    counted: (n) => {
      try {
        writeRulesStatus(live.current.dataDir, process.pid, n);
      } catch {}
    },
  });
  return { broker, rules, desk };
}
