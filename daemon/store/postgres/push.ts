/**
 * Web Push subscriptions in PostgreSQL (contract 13.2), the same rows and meaning as broker.db
 * (store/sqlite/push.ts): one row per endpoint with its owner and whole record; every change is audited
 * in the same transaction.
 */
import type { PushStore, PushSubscriptionRecord } from '../../core/index.js';
import { AUDIT_SELECT, withAudit } from './audit-sql.js';
import type { PgTransactions } from './transaction.js';

const PUT = withAudit(
  `WITH p AS (INSERT INTO push_subscriptions (endpoint, owner, body, created_at) VALUES ($1, $2, $3, $4)
     ON CONFLICT (endpoint) DO UPDATE SET owner = excluded.owner, body = excluded.body,
       created_at = excluded.created_at RETURNING 1),
   a AS (${AUDIT_SELECT} FROM p RETURNING 1)
   SELECT 1 FROM p, a`,
  4,
);

export function pgPush(tx: PgTransactions): PushStore {
  return {
    put: (sub, audit) =>
      tx.write(PUT, [sub.endpoint, sub.owner, JSON.stringify(sub), sub.created_at], () => undefined, audit),
    remove: (endpoint, audit) =>
      tx.steps(async (s) => {
        const r = await s.query('DELETE FROM push_subscriptions WHERE endpoint = $1', [endpoint]);
        if (r.rowCount === 0) return false;
        await s.append(audit);
        return true;
      }),
    all: async () =>
      (
        await tx.read<{ body: string }>('SELECT body FROM push_subscriptions ORDER BY created_at, endpoint')
      ).map((r) => JSON.parse(r.body) as PushSubscriptionRecord),
  };
}
