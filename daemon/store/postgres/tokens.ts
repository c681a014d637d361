/**
 * Owners' and MCP clients' token hashes in PostgreSQL (contract 9, 16: shared by every daemon). Only a
 * SHA-256 of each token (rule 4); each change and its audit entry are one statement, with the same entries
 * as broker.db (store/sqlite/tokens.ts): `mcp_token_set` (`rotated` said) for a client, `owner_created` or
 * `owner_token_rotated` for an owner — decided by whether the row existed, which only the statement knows,
 * so both entries are sealed at the chain's place and the statement stores the one that fits
 * (transaction.ts writeEither).
 */
import type { Actor, TokenHashStore } from '../../core/index.js';
import { type TokenTable, tokenSetEntries } from '../rules/index.js';
import { withAudit } from './audit-sql.js';
import type { Apply } from './mirror.js';
import type { PgTransactions } from './transaction.js';

const COLUMNS = 'seq, at, actor_kind, actor, action, command_id, version, detail, entry, hash';
const TYPES = ['bigint', 'text', 'text', 'text', 'text', 'text', 'integer', 'text', 'text', 'text'];

/** The upsert and its audit entry: $1 name, $2 hash, $3 time; then the two entries' values. */
function setSql(table: TokenTable): string {
  // A client's row takes the new time too; an owner's keeps the time it was created (as broker.db).
  const created = table === 'owners' ? '' : ', created_at = excluded.created_at';
  const pick = TYPES.map((t, i) => `CASE WHEN t.created THEN $A${i + 1}::${t} ELSE $B${i + 1}::${t} END`);
  // `xmax = 0` on the returned row: PostgreSQL's mark of a row this statement inserted, not updated.
  return withAudit(
    `WITH t AS (INSERT INTO ${table} (name, token_hash, created_at) VALUES ($1, $2, $3)
       ON CONFLICT (name) DO UPDATE SET token_hash = excluded.token_hash${created}, rev = ${table}.rev + 1
       RETURNING rev, (xmax = 0) AS created),
     a AS (INSERT INTO audit (${COLUMNS}) SELECT ${pick.join(', ')} FROM t RETURNING hash)
     SELECT t.rev, a.hash AS chain_hash FROM t, a`,
    3,
  );
}

export function pgTokens(tx: PgTransactions, apply: Apply, table: TokenTable): TokenHashStore {
  const sql = setSql(table);
  return {
    byTokenHash: async (hash) =>
      (await tx.read<{ name: string }>(`SELECT name FROM ${table} WHERE token_hash = $1`, [hash]))[0]?.name,
    tokenHash: async (name) =>
      (await tx.read<{ token_hash: string }>(`SELECT token_hash FROM ${table} WHERE name = $1`, [name]))[0]
        ?.token_hash,
    all: async () => {
      const rows = await tx.read<{ name: string; token_hash: string }>(
        `SELECT name, token_hash FROM ${table} ORDER BY name`,
      );
      return new Map(rows.map((r) => [r.name, r.token_hash]));
    },
    setTokenHash: (
      name: string,
      hash: string,
      at: string,
      actor: Actor,
      detail: Record<string, unknown> = {},
    ) => {
      const { created, rotated } = tokenSetEntries(table, name, at, actor, detail);
      return tx.writeEither<{ rev: number }>(
        sql,
        [name, hash, at],
        (rows) => {
          const rev = rows[0]!.rev;
          return () => apply((m) => m.applyToken(table, name, hash, rev));
        },
        created,
        rotated,
      );
    },
  };
}
