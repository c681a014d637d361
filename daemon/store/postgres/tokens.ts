/**
 * Owners' and MCP clients' token hashes in PostgreSQL (contract 9, 16: shared by every daemon). Only a
 * SHA-256 of each token (rule 4); each change and its audit entry are one statement: `mcp_token_set` for a
 * client, `owner_created` or `owner_token_rotated` for an owner (decided by whether the row existed).
 */
import type { Actor, TokenHashStore } from '../../core/index.js';
import type { Apply, TokenTable } from './mirror.js';
import type { PgTransactions } from './transaction.js';

/** The upsert and its audit entry: $1 name, $2 hash, $3 time, $4 actor kind, $5 actor, $6 detail. */
function setSql(table: TokenTable): string {
  // A client's row takes the new time too; an owner's keeps the time it was created (as broker.db).
  const created = table === 'owners' ? '' : ', created_at = excluded.created_at';
  const action =
    table === 'owners'
      ? "CASE WHEN t.created THEN 'owner_created' ELSE 'owner_token_rotated' END"
      : "'mcp_token_set'";
  // `xmax = 0` on the returned row: PostgreSQL's mark of a row this statement inserted, not updated.
  return `WITH t AS (INSERT INTO ${table} (name, token_hash, created_at) VALUES ($1, $2, $3)
       ON CONFLICT (name) DO UPDATE SET token_hash = excluded.token_hash${created}, rev = ${table}.rev + 1
       RETURNING rev, (xmax = 0) AS created),
     a AS (INSERT INTO audit (at, actor_kind, actor, action, detail)
       SELECT $3::text, $4::text, $5::text, ${action}, $6::text FROM t RETURNING 1)
     SELECT t.rev FROM t, a`;
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
      const audit = table === 'owners' ? { owner: name, ...detail } : { client: name };
      const values = [name, hash, at, actor.kind, actor.name, JSON.stringify(audit)];
      return tx.write<{ rev: number }>(sql, values, (rows) => {
        const rev = rows[0]!.rev;
        return () => apply((m) => m.applyToken(table, name, hash, rev));
      });
    },
  };
}
