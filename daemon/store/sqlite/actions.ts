/**
 * A notification's one-time actions in broker.db (contract 19 (v4)): one row per token, by its SHA-256,
 * bound to a command's version, an action, an owner and a channel. Spending is one `DELETE … RETURNING`,
 * so a token is spent once however many requests carry it. No audit entry: minting decides nothing; the
 * decision an action makes is audited by the broker with `via`.
 */
import type { ActionRecord } from '../../core/index.js';
import type { Db } from './schema.js';
import { writeTransaction } from './transaction.js';

const COLUMNS = 'token_hash, command_id, version, action, owner, channel, expires_at';

export class SqliteActions {
  readonly #db: Db;
  readonly #stmts;

  constructor(db: Db) {
    this.#db = db;
    this.#stmts = {
      put: db.prepare(`INSERT INTO actions (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)`),
      find: db.prepare(`SELECT ${COLUMNS} FROM actions WHERE token_hash = ?`),
      spend: db.prepare(`DELETE FROM actions WHERE token_hash = ? RETURNING ${COLUMNS}`),
      prune: db.prepare('DELETE FROM actions WHERE expires_at < ?'),
    };
  }

  put(rows: readonly ActionRecord[]): void {
    writeTransaction(this.#db, () => {
      for (const r of rows)
        this.#stmts.put.run(
          r.token_hash,
          r.command_id,
          r.version,
          r.action,
          r.owner,
          r.channel,
          r.expires_at,
        );
    });
  }

  find(hash: string): ActionRecord | undefined {
    return this.#stmts.find.get(hash) as ActionRecord | undefined;
  }

  spend(hash: string): ActionRecord | undefined {
    return writeTransaction(this.#db, () => this.#stmts.spend.get(hash) as ActionRecord | undefined);
  }

  prune(now: string): number {
    return writeTransaction(this.#db, () => this.#stmts.prune.run(now).changes);
  }
}
