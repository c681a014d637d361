/** The append-only audit log in broker.db (triggers refuse UPDATE and DELETE: schema.ts). */

import type { Actor, AuditEntry, StoredAudit } from '../../core/index.js';
import type { Db } from './schema.js';

interface AuditRow {
  seq: number;
  at: string;
  actor_kind: Actor['kind'];
  actor: string;
  action: string;
  command_id: string | null;
  version: number | null;
  detail: string | null;
}

/** Appends and reads audit entries, synchronously, on one connection. */
export class SqliteAudit {
  readonly #stmts;

  constructor(db: Db) {
    this.#stmts = {
      append: db.prepare(
        'INSERT INTO audit (at, actor_kind, actor, action, command_id, version, detail) VALUES (?, ?, ?, ?, ?, ?, ?)',
      ),
      forCommand: db.prepare('SELECT * FROM audit WHERE command_id = ? ORDER BY seq'),
      since: db.prepare('SELECT * FROM audit WHERE seq > ? ORDER BY seq LIMIT ?'),
    };
  }

  /** Appends `entry`; the caller provides the transaction when it goes with a row change. */
  append(entry: AuditEntry): void {
    this.#stmts.append.run(
      entry.at,
      entry.actor.kind,
      entry.actor.name,
      entry.action,
      entry.command_id ?? null,
      entry.version ?? null,
      entry.detail === undefined ? null : JSON.stringify(entry.detail),
    );
  }

  forCommand(commandId: string): StoredAudit[] {
    return (this.#stmts.forCommand.all(commandId) as AuditRow[]).map(toAudit);
  }

  since(seq: number, limit = 1000): StoredAudit[] {
    return (this.#stmts.since.all(seq, limit) as AuditRow[]).map(toAudit);
  }
}

function toAudit(row: AuditRow): StoredAudit {
  const entry: StoredAudit = {
    seq: row.seq,
    at: row.at,
    actor: { kind: row.actor_kind, name: row.actor },
    action: row.action,
  };
  if (row.command_id !== null) entry.command_id = row.command_id;
  if (row.version !== null) entry.version = row.version;
  if (row.detail !== null) entry.detail = JSON.parse(row.detail) as Record<string, unknown>;
  return entry;
}
