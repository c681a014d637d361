/** Grants in broker.db (contract 8): each row keeps the whole record as JSON; `seq` keeps creation order. */
import type { AuditEntry, Grant } from '../../core/index.js';
import type { SqliteAudit } from './audit.js';
import type { Db } from './schema.js';

const parseAll = (rows: unknown[]): Grant[] =>
  (rows as Array<{ body: string }>).map((r) => JSON.parse(r.body) as Grant);

/** Grant rows, synchronously, on one connection. */
export class SqliteGrants {
  readonly #stmts;
  readonly #audit: SqliteAudit;
  readonly #atomic: (fn: () => void) => void;

  constructor(db: Db, audit: SqliteAudit, atomic: (fn: () => void) => void) {
    this.#audit = audit;
    this.#atomic = atomic;
    this.#stmts = {
      insert: db.prepare('INSERT INTO grants (id, state, body) VALUES (?, ?, ?)'),
      // A write that takes a use takes it from the uses still stored (see `put`).
      update: db.prepare(
        `UPDATE grants SET state = @state, body = @body WHERE id = @id AND (json_extract(body, '$.uses_left') IS NULL
           OR (state = 'live' AND (json_extract(body, '$.uses_left') = @uses + 1
             OR (json_extract(body, '$.uses_left') = @uses AND @state <> 'live'))))`,
      ),
      exists: db.prepare('SELECT 1 FROM grants WHERE id = ?'),
      get: db.prepare('SELECT body FROM grants WHERE id = ?'),
      live: db.prepare("SELECT body FROM grants WHERE state = 'live' ORDER BY seq"),
      recent: db.prepare('SELECT body FROM grants ORDER BY seq DESC LIMIT ?'),
      adopt: db.prepare(
        "UPDATE grants SET body = json_set(body, '$.node', ?) WHERE json_extract(body, '$.node') IS NULL",
      ),
    };
  }

  /**
   * Contract 16 (v4): grants stored before grants named their node take `node`. broker.db has one writer,
   * this daemon, so it is the node that made them (docs/fleet.md); no audit entry, as a command's adoption.
   */
  adopt(node: string): number {
    return this.#stmts.adopt.run(node).changes;
  }

  /**
   * Inserts a new grant, or replaces the stored one with the same id, with its audit entry. A grant with
   * uses is replaced only while stored live, by a use (exactly one fewer) or an end (as many, not live): a
   * use or an end another writer (a second daemon on a shared database, contract 16) made first makes
   * this write refused, so no use is ever taken twice.
   */
  put(grant: Grant, audit: AuditEntry): void {
    this.#atomic(() => {
      const body = JSON.stringify(grant);
      const row = { state: grant.state, body, id: grant.id, uses: grant.uses_left ?? null };
      if (this.#stmts.update.run(row).changes === 0) {
        if (this.#stmts.exists.get(grant.id) !== undefined) {
          throw new Error(
            `store: grant ${grant.id} no longer has the uses this write takes from (another writer took one first)`,
          );
        }
        this.#stmts.insert.run(grant.id, grant.state, body);
      }
      this.#audit.append(audit);
    });
  }

  get(id: string): Grant | undefined {
    const row = this.#stmts.get.get(id) as { body: string } | undefined;
    return row === undefined ? undefined : (JSON.parse(row.body) as Grant);
  }

  /** Every grant stored as live (some may have passed their expiry), oldest first. */
  live(): Grant[] {
    return parseAll(this.#stmts.live.all());
  }

  /** The newest `limit` grants in any state, newest first. */
  recent(limit: number): Grant[] {
    return parseAll(this.#stmts.recent.all(limit));
  }
}
