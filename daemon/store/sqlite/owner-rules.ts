/**
 * The owners' rules in broker.db (contract 18): one row per rule, its whole record as JSON and `pos`, its
 * place in the owners' order (gaps allowed: a removal leaves one; an insertion moves the rules after it
 * one place down). Every change is audited in the same transaction; how many requests each rule decided
 * is read from the audit record (store/rules `RULE_DECIDED_SQL`, served by the partial index
 * `audit_rule_decided`).
 */
import type { AuditEntry, OwnerRule } from '../../core/index.js';
import { RULE_DECIDED_SQL } from '../rules/index.js';
import type { SqliteAudit } from './audit.js';
import type { Db } from './schema.js';
import { writeTransaction } from './transaction.js';

export class SqliteOwnerRules {
  readonly #db: Db;
  readonly #audit: SqliteAudit;
  readonly #stmts;

  constructor(db: Db, audit: SqliteAudit) {
    this.#db = db;
    this.#audit = audit;
    this.#stmts = {
      all: db.prepare('SELECT body FROM owner_rules ORDER BY pos'),
      has: db.prepare('SELECT 1 FROM owner_rules WHERE id = ?'),
      posAt: db.prepare('SELECT pos FROM owner_rules ORDER BY pos LIMIT 1 OFFSET ?').pluck(),
      last: db.prepare('SELECT coalesce(max(pos) + 1, 0) FROM owner_rules').pluck(),
      shift: db.prepare('UPDATE owner_rules SET pos = pos + 1 WHERE pos >= ?'),
      insert: db.prepare('INSERT INTO owner_rules (id, pos, body) VALUES (?, ?, ?)'),
      update: db.prepare('UPDATE owner_rules SET body = ? WHERE id = ?'),
      remove: db.prepare('DELETE FROM owner_rules WHERE id = ?'),
      decided: db.prepare(RULE_DECIDED_SQL),
    };
  }

  all(): OwnerRule[] {
    return (this.#stmts.all.all() as Array<{ body: string }>).map((r) => JSON.parse(r.body) as OwnerRule);
  }

  add(rule: OwnerRule, position: number | undefined, audit: AuditEntry): boolean {
    return writeTransaction(this.#db, () => {
      if (this.#stmts.has.get(rule.id) !== undefined) return false;
      const at = position === undefined ? undefined : (this.#stmts.posAt.get(position) as number | undefined);
      if (at !== undefined) this.#stmts.shift.run(at);
      this.#stmts.insert.run(rule.id, at ?? (this.#stmts.last.get() as number), JSON.stringify(rule));
      this.#audit.append(audit);
      return true;
    });
  }

  update(rule: OwnerRule, audit: AuditEntry): boolean {
    return writeTransaction(this.#db, () => {
      if (this.#stmts.update.run(JSON.stringify(rule), rule.id).changes === 0) return false;
      this.#audit.append(audit);
      return true;
    });
  }

  remove(id: string, audit: AuditEntry): boolean {
    return writeTransaction(this.#db, () => {
      if (this.#stmts.remove.run(id).changes === 0) return false;
      this.#audit.append(audit);
      return true;
    });
  }

  decided(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const r of this.#stmts.decided.all() as Array<{ id: string; n: number }>) out[r.id] = Number(r.n);
    return out;
  }
}
