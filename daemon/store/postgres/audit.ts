/**
 * The append-only, hash-chained audit log in PostgreSQL (contract 14; triggers refuse UPDATE, DELETE and
 * TRUNCATE, except chaining a row an older version wrote: schema.ts). The chain is sealed by the
 * transaction that appends (transaction.ts); this file reads it and signs the 10-minute checkpoints.
 */
import type { AuditStore, ChainEntry, Checkpoint, StoredAudit } from '../../core/index.js';
import { AUDIT_SELECT, withAudit } from './audit-sql.js';
import type { PgTransactions } from './transaction.js';

interface AuditRow {
  seq: number;
  at: string;
  actor_kind: StoredAudit['actor']['kind'];
  actor: string;
  action: StoredAudit['action'];
  command_id: string | null;
  version: number | null;
  detail: string | null;
}

const APPEND = withAudit(AUDIT_SELECT, 0);

/** The audit port; `onCheckpoint` is the store's (it hears of this process's commits). */
export function pgAudit(tx: PgTransactions, onCheckpoint: AuditStore['onCheckpoint']): AuditStore {
  return {
    append: (entry) => tx.write(APPEND, [], () => undefined, entry),
    forCommand: async (id) =>
      (await tx.read<AuditRow>('SELECT * FROM audit WHERE command_id = $1 ORDER BY seq', [id])).map(toAudit),
    since: async (seq, limit = 1000) =>
      (await tx.read<AuditRow>('SELECT * FROM audit WHERE seq > $1 ORDER BY seq LIMIT $2', [seq, limit])).map(
        toAudit,
      ),
    chainFor: async (ids) => {
      const rows = await tx.read<{ entry: string; hash: string }>(
        'SELECT entry, hash FROM audit WHERE command_id = ANY($1) AND hash IS NOT NULL ORDER BY seq',
        [[...new Set(ids)]],
      );
      return rows.map(toChain);
    },
    // The 10-minute checkpoint: at the tail, when entries exist past the last one (and a signer is set).
    checkpoint: (at) =>
      tx.steps(async (s): Promise<Checkpoint | undefined> => {
        const last = await s.query<{ seq: number | null }>('SELECT max(seq) AS seq FROM audit_checkpoints');
        if (s.tail.seq <= (last.rows[0]?.seq ?? 0)) return undefined;
        return s.sign(at);
      }),
    onCheckpoint,
  };
}

/** A chained row as the contract's entry. */
export function toChain(row: { entry: string; hash: string }): ChainEntry {
  return { ...(JSON.parse(row.entry) as Omit<ChainEntry, 'hash'>), hash: row.hash };
}

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

export type { AuditRow };
