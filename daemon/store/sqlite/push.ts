/**
 * Web Push subscriptions in broker.db (contract 13.2): one row per endpoint, with its owner and its whole
 * record as JSON; every change is audited in the same transaction (naming the owner and the push service's
 * origin, never the endpoint's secret path or the keys).
 */
import type { AuditEntry, PushSubscriptionRecord } from '../../core/index.js';
import type { SqliteAudit } from './audit.js';
import type { Db } from './schema.js';
import { writeTransaction } from './transaction.js';

export class SqlitePush {
  readonly #db: Db;
  readonly #audit: SqliteAudit;
  readonly #stmts;

  constructor(db: Db, audit: SqliteAudit) {
    this.#db = db;
    this.#audit = audit;
    this.#stmts = {
      put: db.prepare(
        'INSERT INTO push_subscriptions (endpoint, owner, body, created_at) VALUES (?, ?, ?, ?) ON CONFLICT(endpoint) DO UPDATE SET owner = excluded.owner, body = excluded.body, created_at = excluded.created_at',
      ),
      remove: db.prepare('DELETE FROM push_subscriptions WHERE endpoint = ?'),
      all: db.prepare('SELECT body FROM push_subscriptions ORDER BY created_at, endpoint'),
    };
  }

  put(sub: PushSubscriptionRecord, audit: AuditEntry): void {
    writeTransaction(this.#db, () => {
      this.#stmts.put.run(sub.endpoint, sub.owner, JSON.stringify(sub), sub.created_at);
      this.#audit.append(audit);
    });
  }

  remove(endpoint: string, audit: AuditEntry): boolean {
    return writeTransaction(this.#db, () => {
      const gone = this.#stmts.remove.run(endpoint).changes > 0;
      if (gone) this.#audit.append(audit);
      return gone;
    });
  }

  all(): PushSubscriptionRecord[] {
    return (this.#stmts.all.all() as Array<{ body: string }>).map(
      (r) => JSON.parse(r.body) as PushSubscriptionRecord,
    );
  }
}
