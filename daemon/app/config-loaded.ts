/**
 * `config_loaded` (contract 14 (v4)): each start and reload appends the config's record (config/record.ts) to the audit
 * chain, and when something that decides whether the owner's hand is needed weakened since the last entry
 * — on this node or another of a shared database — logs it and sends a `config` notification (contract
 * 13.1) saying what changed. Code running as the owner's user can edit the config; this is how the owner
 * hears of it, and the chain (pinned by the next checkpoint) keeps it.
 */
import type { Logger } from '../base/index.js';
import { type Config, configRecord, readRecord, weakenings } from '../config/index.js';
import type { AuditStore } from '../core/index.js';
import type { PublishedEvent } from '../notify/index.js';

/** Appends this start's or reload's `config_loaded`; returns what weakened since the last one (empty: nothing). */
export async function recordConfigLoaded(o: {
  config: Config;
  audits: AuditStore;
  publish: (e: PublishedEvent) => void;
  log: Logger;
  at?: string;
}): Promise<string[]> {
  const now = configRecord(o.config);
  const last = await o.audits.lastOf('config_loaded');
  const before = last === undefined ? undefined : readRecord(last.detail);
  const weakened = before === undefined ? [] : weakenings(before, now);
  await o.audits.append({
    at: o.at ?? new Date().toISOString(),
    actor: { kind: 'daemon', name: 'daemon' },
    action: 'config_loaded',
    detail: weakened.length === 0 ? { ...now } : { ...now, weakened },
  });
  if (weakened.length > 0) {
    o.log.log('warn', 'config_weakened', { changes: weakened });
    o.publish({
      event: 'config',
      title: 'ogf-broker: the config now asks less of you',
      summary: `Since the config was last loaded: ${weakened.join('; ')}. If you did not change it, someone else did.`,
      fields: { config_sha256: now.config_sha256 ?? '', weakened },
    });
  }
  return weakened;
}
