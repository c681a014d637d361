/** An audit row (contracts 9, 14): the internal entry's columns, and the chained entry's text and hash. */
import type { ChainEntry, StoredAudit } from '../../core/index.js';

export interface AuditRow {
  seq: number;
  at: string;
  actor_kind: StoredAudit['actor']['kind'];
  actor: string;
  action: StoredAudit['action'];
  command_id: string | null;
  version: number | null;
  detail: string | null;
}

/** A chained row as the contract's entry. */
export function toChain(row: { entry: string; hash: string }): ChainEntry {
  return { ...(JSON.parse(row.entry) as Omit<ChainEntry, 'hash'>), hash: row.hash };
}

/** A row as the internal entry the store was handed (what older rows are chained from). */
export function toAudit(row: AuditRow): StoredAudit {
  const entry: StoredAudit = {
    seq: row.seq,
    at: row.at,
    actor: { kind: row.actor_kind, name: row.actor },
    action: row.action,
  };
  if (row.command_id !== null) entry.command_id = row.command_id;
  if (row.version !== null) entry.version = row.version;
  if (row.detail !== null) entry.detail = JSON.parse(row.detail) as Record<string, unknown>;
  return entry;
}
