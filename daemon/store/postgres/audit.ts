/**
 * The append-only, hash-chained audit log in PostgreSQL (contract 14; triggers refuse UPDATE, DELETE and
 * TRUNCATE, except chaining a row an older version wrote: schema.ts). The chain is sealed by the
 * transaction that appends (transaction.ts); this file reads it and signs the 10-minute checkpoints.
 */
import type { AuditStore, Checkpoint } from '../../core/index.js';
import { type AuditRow, toAudit, toChain } from '../rows/index.js';
import { AUDIT_PAGE } from '../rules/index.js';
import { AUDIT_SELECT, withAudit } from './audit-sql.js';
import type { PgTransactions } from './transaction.js';

const APPEND = withAudit(AUDIT_SELECT, 0);

/** The audit port; `onCheckpoint` is the store's (it hears of this process's commits). */
export function pgAudit(tx: PgTransactions, onCheckpoint: AuditStore['onCheckpoint']): AuditStore {
  return {
    append: (entry) => tx.write(APPEND, [], () => undefined, entry),
    forCommand: async (id) =>
      (await tx.read<AuditRow>('SELECT * FROM audit WHERE command_id = $1 ORDER BY seq', [id])).map(toAudit),
    since: async (seq, limit = AUDIT_PAGE) =>
      (await tx.read<AuditRow>('SELECT * FROM audit WHERE seq > $1 ORDER BY seq LIMIT $2', [seq, limit])).map(
        toAudit,
      ),
    lastOf: async (action) =>
      (
        await tx.read<AuditRow>(
          'SELECT * FROM audit WHERE action = $1 AND hash IS NOT NULL ORDER BY seq DESC LIMIT 1',
          [action],
        )
      ).map(toAudit)[0],
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

export { type AuditRow, toAudit, toChain };
