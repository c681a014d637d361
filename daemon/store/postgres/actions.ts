/**
 * A notification's one-time actions in PostgreSQL (contract 19 (v4)), the same rows and meaning as
 * broker.db's (store/sqlite/actions.ts). Every node of the fleet reads and spends the same rows: `DELETE …
 * RETURNING` is one statement, so of two POSTs of one token reaching two nodes at once exactly one gets the
 * row. No audit entry: minting decides nothing; the decision an action makes is audited by the broker.
 */
import type { ActionRecord, ActionStore } from '../../core/index.js';
import type { PgTransactions } from './transaction.js';

const COLUMNS = 'token_hash, command_id, version, action, owner, channel, expires_at';

export function pgActions(tx: PgTransactions): ActionStore {
  return {
    async put(rows) {
      if (rows.length === 0) return;
      const values: unknown[] = [];
      const tuples = rows.map((r, i) => {
        values.push(r.token_hash, r.command_id, r.version, r.action, r.owner, r.channel, r.expires_at);
        const n = i * 7;
        return `($${n + 1}, $${n + 2}, $${n + 3}, $${n + 4}, $${n + 5}, $${n + 6}, $${n + 7})`;
      });
      await tx.read(`INSERT INTO actions (${COLUMNS}) VALUES ${tuples.join(', ')}`, values);
    },
    async find(hash) {
      const rows = await tx.read<ActionRecord>(`SELECT ${COLUMNS} FROM actions WHERE token_hash = $1`, [
        hash,
      ]);
      return rows[0];
    },
    async spend(hash) {
      const rows = await tx.read<ActionRecord>(
        `DELETE FROM actions WHERE token_hash = $1 RETURNING ${COLUMNS}`,
        [hash],
      );
      return rows[0];
    },
    async prune(now) {
      const rows = await tx.read('DELETE FROM actions WHERE expires_at < $1 RETURNING 1', [now]);
      return rows.length;
    },
  };
}
