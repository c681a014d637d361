/**
 * Owners' passkeys in PostgreSQL (contract 13.3), the same rows and meaning as broker.db
 * (store/sqlite/passkeys.ts): public data only; adding and removing one is audited in the same transaction
 * (`passkey_added`, `passkey_removed`), and `token owner --rotate` removes them all (`passkeys_removed`).
 */
import type { AuditEntry, PasskeyStore } from '../../core/index.js';
import { type PasskeyRow, recordedOf, toPasskey } from '../rows/index.js';
import { RECORDED_PASSKEYS_WHERE } from '../rules/index.js';
import { AUDIT_SELECT, withAudit } from './audit-sql.js';
import type { PgTransactions } from './transaction.js';

const COLUMNS = 'credential_id, owner, public_key, rp_id, counter, transports, created_at, last_used_at';

const ADD = withAudit(
  `WITH p AS (INSERT INTO passkeys (credential_id, owner, public_key, rp_id, counter, transports, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING 1),
   a AS (${AUDIT_SELECT} FROM p RETURNING 1)
   SELECT 1 FROM p, a`,
  7,
);

export function pgPasskeys(
  tx: PgTransactions,
): PasskeyStore & { removeAll(owner: string, audit: AuditEntry): Promise<number> } {
  return {
    add: (p, audit) =>
      tx.write(
        ADD,
        [
          p.credential_id,
          p.owner,
          p.public_key,
          p.rp_id,
          p.counter,
          p.transports === undefined ? null : JSON.stringify(p.transports),
          p.created_at,
        ],
        () => undefined,
        audit,
      ),
    get: async (id) =>
      (await tx.read<PasskeyRow>(`SELECT ${COLUMNS} FROM passkeys WHERE credential_id = $1`, [id])).map(
        toPasskey,
      )[0],
    list: async (owner) =>
      (
        await tx.read<PasskeyRow>(`SELECT ${COLUMNS} FROM passkeys WHERE owner = $1 ORDER BY seq`, [owner])
      ).map(toPasskey),
    remove: (owner, id, audit) =>
      tx.steps(async (s) => {
        const r = await s.query('DELETE FROM passkeys WHERE owner = $1 AND credential_id = $2', [owner, id]);
        if (r.rowCount === 0) return false;
        await s.append(audit);
        return true;
      }),
    removeAll: (owner, audit) =>
      tx.steps(async (s) => {
        const removed = (await s.query('DELETE FROM passkeys WHERE owner = $1', [owner])).rowCount;
        if (removed > 0) await s.append({ ...audit, detail: { ...audit.detail, removed } });
        return removed;
      }),
    recorded: async () =>
      recordedOf(
        (
          await tx.read<{ entry: string }>(
            `SELECT entry FROM audit WHERE ${RECORDED_PASSKEYS_WHERE} ORDER BY seq`,
          )
        ).map((r) => r.entry),
      ),
    used: (id, counter, at) =>
      tx.write(
        'UPDATE passkeys SET counter = $1, last_used_at = $2 WHERE credential_id = $3',
        [counter, at, id],
        () => undefined,
      ),
  };
}
