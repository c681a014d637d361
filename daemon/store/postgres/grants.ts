/**
 * Grants in PostgreSQL (contract 8): the whole record as JSON text, `seq` for creation order, `uses_left` as
 * a column and `rev` raised by each write. A grant with uses is replaced only while it is stored live,
 * by a use (exactly one fewer than stored) or an end (as many, a state that is not live) — decided on the
 * newest committed row, which PostgreSQL locks for the statement — so two daemons taking one use of a
 * grant cannot both have it: the second write is refused and its transaction fails (nothing of it is
 * stored). Contract 8's uses are exact across daemons.
 */
import { type Grant, type GrantStore, StaleWrite } from '../../core/index.js';
import { AUDIT_SELECT, withAudit } from './audit-sql.js';
import type { Apply } from './mirror.js';
import type { PgTransactions } from './transaction.js';

const PUT = withAudit(
  `WITH g AS (INSERT INTO grants (id, state, body, uses_left) VALUES ($1, $2, $3, $4)
     ON CONFLICT (id) DO UPDATE SET state = excluded.state, body = excluded.body,
       uses_left = excluded.uses_left, rev = grants.rev + 1
     WHERE grants.uses_left IS NULL OR (grants.state = 'live' AND (excluded.uses_left = grants.uses_left - 1
       OR (excluded.uses_left = grants.uses_left AND excluded.state <> 'live')))
     RETURNING seq, rev),
   a AS (${AUDIT_SELECT} FROM g RETURNING 1)
   SELECT g.seq, g.rev FROM g, a`,
  4,
);

const parse = (rows: Array<{ body: string }>): Grant[] => rows.map((r) => JSON.parse(r.body) as Grant);

export function pgGrants(tx: PgTransactions, apply: Apply): GrantStore {
  return {
    put: (grant, audit) =>
      tx.write<{ seq: number; rev: number }>(
        PUT,
        [grant.id, grant.state, JSON.stringify(grant), grant.uses_left ?? null],
        (rows) => {
          if (rows.length !== 1) {
            throw new StaleWrite(
              'grants',
              grant.id,
              `store: grant ${grant.id} no longer has the uses this write takes from (another writer took one first)`,
            );
          }
          const { seq, rev } = rows[0]!;
          return () => apply((m) => m.applyGrant(grant, seq, rev));
        },
        audit,
      ),
    get: async (id) => parse(await tx.read('SELECT body FROM grants WHERE id = $1', [id]))[0],
    live: async () => parse(await tx.read("SELECT body FROM grants WHERE state = 'live' ORDER BY seq")),
    recent: async (limit) =>
      parse(await tx.read('SELECT body FROM grants ORDER BY seq DESC LIMIT $1', [limit])),
  };
}
