/**
 * The config on the record (contract 14 (v4)): each start appends `config_loaded` with the config's SHA-256,
 * the commands and upstreams that need a passkey or several approvals, and the rules' ids and decisions —
 * what decides whether the owner's hand is needed. Code running as the owner's user can edit the config;
 * it cannot do so unseen: the entry is pinned by the next checkpoint, and when one of those weakened since
 * the last entry (a `require_passkey` dropped, approvals lowered, an `allow` rule added — or a `deny` rule
 * taken away) a `config` notification says what changed. Pure.
 *
 * Names: a catalog command by its name, an upstream as `<id>__*` (it covers every tool), `*` for the
 * top-level `require_passkey: true`.
 */
import type { Config } from './load.js';

/** What `config_loaded` records (its `data`). */
export interface ConfigRecord {
  /** SHA-256 of the config file's bytes as read; null when no file was read (the built-in defaults). */
  config_sha256: string | null;
  /** What needs a passkey for each approval, sorted. */
  require_passkey: string[];
  /** What needs more than one approval, and how many. */
  approvals: Record<string, number>;
  /** The rules in order: id and decision. */
  rules: Array<{ id: string; decision: string }>;
}

const upstreamName = (id: string) => `${id}__*`;

/** The record of a loaded config. */
export function configRecord(config: Config): ConfigRecord {
  const passkey: string[] = [];
  if (config.require_passkey) passkey.push('*');
  const approvals: Record<string, number> = {};
  for (const [name, c] of Object.entries(config.commands)) {
    if (c.require_passkey === true) passkey.push(name);
    if ((c.approvals ?? 1) > 1) approvals[name] = c.approvals!;
  }
  for (const [id, u] of Object.entries(config.upstreams)) {
    if (u.require_passkey === true) passkey.push(upstreamName(id));
    if (u.approvals > 1) approvals[upstreamName(id)] = u.approvals;
  }
  return {
    config_sha256: config.configSha256,
    require_passkey: passkey.sort(),
    approvals,
    rules: config.rules.map((r) => ({ id: r.id, decision: r.decision })),
  };
}

/** A previous entry's data read back (an older or foreign entry: what cannot be read counts as absent). */
export function readRecord(data: Record<string, unknown> | undefined): ConfigRecord | undefined {
  if (data === undefined) return undefined;
  const passkey = Array.isArray(data.require_passkey)
    ? data.require_passkey.filter((x): x is string => typeof x === 'string')
    : [];
  const approvals: Record<string, number> = {};
  if (typeof data.approvals === 'object' && data.approvals !== null)
    for (const [k, v] of Object.entries(data.approvals)) if (typeof v === 'number') approvals[k] = v;
  const rules = Array.isArray(data.rules)
    ? data.rules.filter(
        (r): r is { id: string; decision: string } =>
          typeof r?.id === 'string' && typeof r?.decision === 'string',
      )
    : [];
  return {
    config_sha256: typeof data.config_sha256 === 'string' ? data.config_sha256 : null,
    require_passkey: passkey,
    approvals,
    rules,
  };
}

/** What weakened from `before` to `now`, one line each (empty: nothing did). */
export function weakenings(before: ConfigRecord, now: ConfigRecord): string[] {
  const out: string[] = [];
  const everyNow = now.require_passkey.includes('*');
  for (const name of before.require_passkey) {
    if (everyNow || now.require_passkey.includes(name)) continue;
    out.push(
      name === '*' ? 'require_passkey: true (every command) dropped' : `require_passkey dropped from ${name}`,
    );
  }
  for (const [name, n] of Object.entries(before.approvals)) {
    const after = now.approvals[name] ?? 1;
    if (after < n) out.push(`approvals of ${name} lowered from ${n} to ${after}`);
  }
  const decisionBefore = new Map(before.rules.map((r) => [r.id, r.decision]));
  const decisionNow = new Map(now.rules.map((r) => [r.id, r.decision]));
  for (const r of now.rules)
    if (r.decision === 'allow' && decisionBefore.get(r.id) !== 'allow') out.push(`allow rule ${r.id} added`);
  for (const r of before.rules)
    if (r.decision === 'deny' && decisionNow.get(r.id) !== 'deny') out.push(`deny rule ${r.id} removed`);
  return out;
}
