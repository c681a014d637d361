/**
 * The first start of the version with the chain (contract 14, docs/audit.md) chains what an older version
 * wrote to this database (rows without a hash, renumbered 1…n by schema.ts), in seq order after the
 * chained ones, in one transaction that holds the chain's tail — as broker.db's `chainOlder`
 * (store/sqlite/audit.ts) — and seals them at once with a checkpoint. Several daemons starting together
 * chain them once: the second finds none left.
 */
import { chainEntry, sealEntry } from '../../core/index.js';
import { type AuditRow, toAudit } from './audit.js';
import type { PgTransactions } from './transaction.js';

/** Chains the rows an older version wrote; returns how many. */
export function chainOlder(tx: PgTransactions): Promise<number> {
  return tx.steps(async (s) => {
    const { rows } = await s.query<AuditRow>('SELECT * FROM audit WHERE hash IS NULL ORDER BY seq');
    if (rows.length === 0) return 0;
    let prev = s.tail.hash;
    for (const row of rows) {
      const { text, hash } = sealEntry(chainEntry(toAudit(row), row.seq, prev));
      await s.query('UPDATE audit SET entry = $1, hash = $2 WHERE seq = $3', [text, hash, row.seq]);
      prev = hash;
    }
    s.setTail(rows.at(-1)!.seq, prev);
    s.sign(rows.at(-1)!.at);
    return rows.length;
  });
}
