/**
 * The audit row as a statement writes it (contract 9, 14): the daemon's own columns and the chain's — the
 * seq, `entry` (the canonical JSON of the contract's entry without its hash, exactly the bytes hashed) and
 * `hash` — sealed by transaction.ts from the tail its transaction holds.
 */
import type { AuditEntry, UnsealedEntry } from '../../core/index.js';

/** The audit columns a row-changing statement inserts from its own CTE (`FROM <cte>`), cast for PostgreSQL. */
export const AUDIT_SELECT =
  'INSERT INTO audit (seq, at, actor_kind, actor, action, command_id, version, detail, entry, hash) SELECT $A1::bigint, $A2::text, $A3::text, $A4::text, $A5::text, $A6::text, $A7::integer, $A8::text, $A9::text, $A10::text';

/** An audit entry's ten values, in AUDIT_SELECT's order: `e` is it chained, `text` and `hash` it sealed. */
export function auditValues(e: UnsealedEntry, entry: AuditEntry, text: string, hash: string): unknown[] {
  return [
    e.seq,
    entry.at,
    entry.actor.kind,
    entry.actor.name,
    entry.action,
    // The chained entry's: a grant's use names the command it approved (core/model/audit-chain.ts).
    e.command_id ?? null,
    entry.version ?? null,
    entry.detail === undefined ? null : JSON.stringify(entry.detail),
    text,
    hash,
  ];
}

/** `text` with $A1…$A10 (and $B1…$B10 after them) numbered after the statement's own `n` parameters. */
export function withAudit(text: string, n: number): string {
  return text
    .replace(/\$A(\d+)/g, (_, i: string) => `$${n + Number(i)}`)
    .replace(/\$B(\d+)/g, (_, i: string) => `$${n + 10 + Number(i)}`);
}
