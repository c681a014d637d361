/** The append-only audit log in PostgreSQL (triggers refuse UPDATE, DELETE and TRUNCATE: schema.ts). */
import type { AuditEntry, AuditStore, StoredAudit } from '../../core/index.js';
import type { PgTransactions } from './transaction.js';

/** The audit columns a row-changing statement inserts from its own CTE (`FROM <cte>`), cast for PostgreSQL. */
export const AUDIT_SELECT =
  'INSERT INTO audit (at, actor_kind, actor, action, command_id, version, detail) SELECT $A1::text, $A2::text, $A3::text, $A4::text, $A5::text, $A6::integer, $A7::text';

/** An audit entry's seven values, in AUDIT_SELECT's order. */
export function auditValues(e: AuditEntry): unknown[] {
  return [
    e.at,
    e.actor.kind,
    e.actor.name,
    e.action,
    e.command_id ?? null,
    e.version ?? null,
    e.detail === undefined ? null : JSON.stringify(e.detail),
  ];
}

/** `text` with $A1…$A7 numbered after the statement's own `n` parameters. */
export function withAudit(text: string, n: number): string {
  return text.replace(/\$A([1-7])/g, (_, i: string) => `$${n + Number(i)}`);
}

interface AuditRow {
  seq: number;
  at: string;
  actor_kind: StoredAudit['actor']['kind'];
  actor: string;
  action: string;
  command_id: string | null;
  version: number | null;
  detail: string | null;
}

/** The audit port. */
export function pgAudit(tx: PgTransactions): AuditStore {
  return {
    append: (entry) => tx.write(withAudit(AUDIT_SELECT, 0), auditValues(entry), () => undefined),
    forCommand: async (id) =>
      (await tx.read<AuditRow>('SELECT * FROM audit WHERE command_id = $1 ORDER BY seq', [id])).map(toAudit),
    since: async (seq, limit = 1000) =>
      (await tx.read<AuditRow>('SELECT * FROM audit WHERE seq > $1 ORDER BY seq LIMIT $2', [seq, limit])).map(
        toAudit,
      ),
  };
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
