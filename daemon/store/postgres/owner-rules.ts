/**
 * The owners' rules in PostgreSQL (contract 18), the same rows and meaning as broker.db
 * (store/sqlite/owner-rules.ts): every change and its audit entry in one transaction, which holds the audit
 * tail every writer takes first (transaction.ts), so two nodes changing rules at once change them one after
 * the other. The table's trigger (schema.ts) announces each change on the feed: every other node reads the
 * rules again (app/owner-rules.ts).
 */
import type { OwnerRule, OwnerRuleStore } from '../../core/index.js';
import { RULE_DECIDED_SQL } from '../rules/index.js';
import type { PgTransactions } from './transaction.js';

export function pgOwnerRules(tx: PgTransactions): OwnerRuleStore {
  return {
    all: async () =>
      (await tx.read<{ body: string }>('SELECT body FROM owner_rules ORDER BY pos')).map(
        (r) => JSON.parse(r.body) as OwnerRule,
      ),
    add: (rule, position, audit) =>
      tx.steps(async (s) => {
        if ((await s.query('SELECT 1 FROM owner_rules WHERE id = $1', [rule.id])).rowCount > 0) return false;
        let pos: number | undefined;
        if (position !== undefined) {
          const at = await s.query<{ pos: number }>(
            'SELECT pos FROM owner_rules ORDER BY pos LIMIT 1 OFFSET $1',
            [position],
          );
          pos = at.rows[0]?.pos === undefined ? undefined : Number(at.rows[0].pos);
          if (pos !== undefined) await s.query('UPDATE owner_rules SET pos = pos + 1 WHERE pos >= $1', [pos]);
        }
        if (pos === undefined) {
          const last = await s.query<{ p: number }>('SELECT coalesce(max(pos) + 1, 0) AS p FROM owner_rules');
          pos = Number(last.rows[0]!.p);
        }
        await s.query('INSERT INTO owner_rules (id, pos, body) VALUES ($1, $2, $3)', [
          rule.id,
          pos,
          JSON.stringify(rule),
        ]);
        await s.append(audit);
        return true;
      }),
    update: (rule, audit) =>
      tx.steps(async (s) => {
        const r = await s.query('UPDATE owner_rules SET body = $1 WHERE id = $2', [
          JSON.stringify(rule),
          rule.id,
        ]);
        if (r.rowCount === 0) return false;
        await s.append(audit);
        return true;
      }),
    remove: (id, audit) =>
      tx.steps(async (s) => {
        if ((await s.query('DELETE FROM owner_rules WHERE id = $1', [id])).rowCount === 0) return false;
        await s.append(audit);
        return true;
      }),
    decided: async () => {
      const out: Record<string, number> = {};
      for (const r of await tx.read<{ id: string; n: number }>(RULE_DECIDED_SQL)) out[r.id] = Number(r.n);
      return out;
    },
  };
}
