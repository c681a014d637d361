/**
 * A reload (contract 17: SIGHUP, `ogf-broker reload`): the config file is read again exactly as `start`
 * read it; a config that does not load changes nothing (the old one stays, the error is logged and
 * answered). Otherwise, in this order, with nothing awaited before the last synchronous step: the config
 * in force (the broker's policy, the edges, the doctor read it), the rules, the sources (the catalog), the
 * notification channels; then the config grants (through the group commit), the upstreams (a changed entry
 * restarted, the others untouched), the rules' status file and the `config_loaded` entry (contract 14: a
 * weaker config is told to the owners). What only a restart applies is named, never half-applied.
 */
import type { Logger } from '../base/index.js';
import type { Config } from '../config/index.js';
import type { AuditStore, Broker } from '../core/index.js';
import type { ReloadOutcome } from '../owner/index.js';
import { writeRulesStatus } from '../rules/index.js';
import { assertConfinable, type Confiner } from '../sandbox/index.js';
import type { Source } from '../tool-kind/index.js';
import type { UpstreamRegistry } from '../upstreams/index.js';
import { recordConfigLoaded } from './config-loaded.js';
import type { ConfigRules } from './config-rules.js';
import type { LiveConfig } from './live-config.js';
import type { OwnerNotifications } from './owner-notifications.js';
import { reloadPlan, upstreamChanges } from './reload-plan.js';

/** The parts of a running daemon a reload changes. */
export interface Reloadable {
  live: LiveConfig;
  rules: ConfigRules;
  sources: readonly Source[];
  notifications: OwnerNotifications;
  broker: Broker;
  upstreams: UpstreamRegistry;
  audits: AuditStore;
  confiner: Confiner;
  log: Logger;
}

export async function reloadConfig(r: Reloadable, reread: () => Config): Promise<ReloadOutcome> {
  let next: Config;
  try {
    next = reread();
    // Contract 21: refused like a start when a confined entry cannot be confined here.
    assertConfinable(next, r.confiner);
    // Contract 18: a config rule may not take an owners' rule's id.
    const clash = r.rules.clash(next);
    if (clash !== undefined) throw new Error(clash);
  } catch (e) {
    const error = (e as Error).message;
    r.log.log('error', 'reload_failed', { error, kept: r.live.current.configSha256 });
    return { ok: false, error };
  }
  const running = r.live.current;
  const plan = reloadPlan(running, next);
  const config = plan.applied;
  const ups = upstreamChanges(running.upstreams, config.upstreams);
  // Rules first: building them is the only step that could refuse, and it changes nothing until it is done.
  r.rules.replace(config);
  r.live.replace(config);
  for (const s of r.sources) s.reload?.(config);
  r.notifications.reload(config);
  try {
    await r.broker.reloadConfigGrants(config.grants);
    await r.upstreams.reload(config.upstreams, ups.changed);
    writeRulesStatus(config.dataDir, process.pid, r.rules.count);
    await recordConfigLoaded({
      config,
      audits: r.audits,
      publish: (e) => r.notifications.publish(e),
      log: r.log,
    });
  } catch (e) {
    // The store refused a write (the disk, the database): the new config is in force, its record is not.
    const error = `the config was applied but not recorded: ${(e as Error).message}`;
    r.log.log('error', 'reload_failed', { error });
    return { ok: false, error };
  }
  r.log.log('info', 'config_reloaded', {
    config_sha256: config.configSha256,
    changed: plan.changed,
    restart_needed: plan.restartNeeded,
    upstreams_started: ups.added,
    upstreams_restarted: ups.changed,
    upstreams_stopped: ups.removed,
  });
  return {
    ok: true,
    config_sha256: config.configSha256,
    changed: plan.changed,
    restart_needed: plan.restartNeeded,
  };
}
