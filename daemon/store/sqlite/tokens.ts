/**
 * Token hashes in broker.db: owners (contract 9) and MCP clients. Only a SHA-256 of each token is kept
 * (contract 1.2, rule 4); every change is audited in the same transaction, naming the owner or client,
 * never the token.
 */
import type { Actor } from '../../core/index.js';
import { type TokenTable, tokenSetEntries } from '../rules/index.js';
import type { SqliteAudit } from './audit.js';
import type { Db } from './schema.js';
import { writeTransaction } from './transaction.js';

/** One table of names and token hashes, synchronously, on one connection. */
export class SqliteTokenHashes {
  readonly #db: Db;
  readonly #table: TokenTable;
  readonly #audit: SqliteAudit;
  readonly #stmts;

  constructor(db: Db, table: TokenTable, audit: SqliteAudit) {
    this.#db = db;
    this.#table = table;
    this.#audit = audit;
    this.#stmts = {
      byHash: db.prepare(`SELECT name FROM ${table} WHERE token_hash = ?`),
      hash: db.prepare(`SELECT token_hash FROM ${table} WHERE name = ?`),
      all: db.prepare(`SELECT name, token_hash FROM ${table} ORDER BY name`),
      // A client's row takes the new time too; an owner's keeps the time it was created.
      upsert: db.prepare(
        table === 'owners'
          ? 'INSERT INTO owners (name, token_hash, created_at) VALUES (?, ?, ?) ON CONFLICT(name) DO UPDATE SET token_hash = excluded.token_hash'
          : 'INSERT INTO mcp_clients (name, token_hash, created_at) VALUES (?, ?, ?) ON CONFLICT(name) DO UPDATE SET token_hash = excluded.token_hash, created_at = excluded.created_at',
      ),
    };
  }

  /** The name owning a token hash, if any. */
  byTokenHash(hash: string): string | undefined {
    return (this.#stmts.byHash.get(hash) as { name: string } | undefined)?.name;
  }

  /** A name's current token hash, or undefined when there is no such name. */
  tokenHash(name: string): string | undefined {
    return (this.#stmts.hash.get(name) as { token_hash: string } | undefined)?.token_hash;
  }

  /** Every name and its current token hash, by name. */
  all(): Map<string, string> {
    const rows = this.#stmts.all.all() as Array<{ name: string; token_hash: string }>;
    return new Map(rows.map((r) => [r.name, r.token_hash]));
  }

  /** Creates or replaces a token hash with its audit entry (store/rules.ts) in the same transaction. */
  set(name: string, hash: string, at: string, actor: Actor, detail: Record<string, unknown> = {}): void {
    writeTransaction(this.#db, () => {
      const existed = this.#stmts.hash.get(name) !== undefined;
      this.#stmts.upsert.run(name, hash, at);
      const entries = tokenSetEntries(this.#table, name, at, actor, detail);
      this.#audit.append(existed ? entries.rotated : entries.created);
    });
  }
}
