/**
 * What a reload may change (contract 17): rules, notification channels (and their actions, 19), config grants, catalog commands,
 * upstream entries (their previews, tools, approvals, require_passkey) and the `require_passkey` /
 * `approvals` of commands apply to requests from then on. Everything else the daemon took at start — where
 * it listens, its data, its database, its URL, its avatar app, its limits — needs a restart: the config it
 * applies keeps the values it runs with (so nothing claims a port it does not listen on), and the answer
 * names each such field so `ogf-broker reload` can say so.
 */
import type { Config } from '../config/index.js';
import { canonicalJson } from '../core/index.js';

/** The fields a reload applies, in the order the answer names them. */
const RELOADED = [
  'rules',
  'notify',
  'push',
  'grants',
  'commands',
  'upstreams',
  'require_passkey',
  'revert_days',
] as const;

/** Fields read once at start: a change is reported, not applied (the names as in config.json or flags). */
const AT_START: ReadonlyArray<[keyof Config, string]> = [
  ['dataDir', 'data dir'],
  ['host', 'host'],
  ['port', 'port'],
  ['database_url', 'database_url'],
  ['database_url_env', 'database_url_from_env'],
  ['node_name', 'node_name'],
  ['public_url', 'public_url'],
  ['oauth', 'oauth'],
  ['ogf_bridge', 'ogf_bridge'],
  ['mcp_allowed_origins', 'mcp_allowed_origins'],
  ['review_timeout_s', 'review_timeout_s'],
  ['output_limit_bytes', 'output_limit_bytes'],
  ['max_pending_per_client', 'max_pending_per_client'],
  ['max_pending', 'max_pending'],
];

export interface ReloadPlan {
  /** The config to apply: the new file's reloadable parts over the running values of everything else. */
  applied: Config;
  /** The reloadable fields whose value changed. */
  changed: string[];
  /** Fields that changed in the file but apply only after a restart. */
  restartNeeded: string[];
}

const same = (a: unknown, b: unknown): boolean => canonicalJson(a ?? null) === canonicalJson(b ?? null);

export function reloadPlan(running: Config, next: Config): ReloadPlan {
  const applied: Config = { ...next };
  const restartNeeded: string[] = [];
  for (const [key, name] of AT_START) {
    if (same(running[key], next[key])) continue;
    restartNeeded.push(name);
    (applied as unknown as Record<string, unknown>)[key] = running[key];
  }
  const changed = RELOADED.filter((k) => !same(running[k], next[k]));
  return { applied, changed, restartNeeded };
}

/** Which upstreams to restart, start or stop: an entry that changed at all is restarted (contract 17). */
export function upstreamChanges(
  running: Config['upstreams'],
  next: Config['upstreams'],
): { added: string[]; changed: string[]; removed: string[] } {
  const added = Object.keys(next).filter((n) => !Object.hasOwn(running, n));
  const removed = Object.keys(running).filter((n) => !Object.hasOwn(next, n));
  const changed = Object.keys(next).filter((n) => Object.hasOwn(running, n) && !same(running[n], next[n]));
  return { added, changed, removed };
}
