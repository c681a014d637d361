/**
 * Contract 14 (v4): what the history shows agrees with the chain. Issue 35 finding 6: without the key, a
 * rule-denied `deploy prod` was rewritten in the commands table to read "staging, denied by owner", and an
 * approval was moved off its card, while `audit verify` still said ok — it checked the chain alone.
 *
 * Pure: the facts each entry gives about its command (history-facts.ts, taken in the walk's one pass), the
 * commands table's rows as the panel reads them, and the audit rows' `command_id` column (what a card's
 * trail is looked up by) in, mismatches out. Per command, its latest entry that carries a state is what the
 * row must show:
 *
 * | field | the row's | must equal |
 * |---|---|---|
 * | command_id | column `id` and the body's `id`; the audit rows' `command_id` column | each other; a submit entry names it; each audit row's column names the command its chained entry names |
 * | state | column `state` and `phase.state` | the latest entry's `data.state` |
 * | reason | `phase.reason` (absent when none) | that entry's `data.reason` |
 * | decided_by | `phase.decided_by` | that entry's `data.decided_by` |
 * | command | `command` | the submit's `data.command` |
 * | args | SHA-256 of the canonical `args` | the submit's `data.args_sha256`, or the latest prune's |
 * | display | SHA-256 of the canonical `display` | the submit's `data.display_sha256` |
 *
 * Entries written before a field was recorded (docs/audit.md "The history against the chain"): a field the
 * command's entries do not carry is not compared — `decided_by` and `display` before v4, `args` before v3's
 * digest or after a prune of an argument by an older daemon, `reason` on an entry of a reasoned state
 * without one. A field an entry does carry is always compared. A command the chain names but whose row is
 * gone is a mismatch (`command_id`); the retention rule never deletes a row, it prunes fields (its entry
 * carries the new digest).
 */
import { canonicalJson, sha256Hex } from '../core/model/audit-chain.js';
import type { EntryFact } from './history-facts.js';

/** The fields a mismatch names, in the order they are reported. */
export type MismatchField = 'command_id' | 'state' | 'reason' | 'decided_by' | 'command' | 'args' | 'display';

/** One command row as read for the check: what the panel and every lookup read of it. */
export interface HistoryRow {
  /** Its place in the table (the report's order). */
  seq: number;
  /** The `id` column: what a lookup, and the card's audit trail, go by. */
  id: string;
  /** The body's `id`: what the card shows. */
  body_id: unknown;
  /** The `state` column (the store's index, the history search). */
  state: unknown;
  phase_state: unknown;
  reason: unknown;
  decided_by: unknown;
  command: unknown;
  /** Lower-case hex SHA-256 of the canonical JSON of `args` / `display`; undefined when there are none. */
  args_sha256: string | undefined;
  display_sha256: string | undefined;
}

/** An audit row's `command_id` column (null: none) and its chained entry's text, at `seq`. */
export interface AuditLink {
  seq: number;
  command_id: string | null;
  entry: string;
}

export interface Mismatch {
  id: string;
  field: MismatchField;
}

/**
 * What a command's entries say its row must show, folded in seq order (foldFact); a part of the record folds
 * its own, joined in order (mergeExpected). A value undefined: not recorded (not compared); null: absent.
 */
export interface Expected {
  submitted: boolean;
  /** The first entry's seq (the order of commands without a row). */
  seq: number;
  /** Whether an entry set the state (and so reason and decided_by) / the arguments' digest. */
  hasState: boolean;
  hasArgs: boolean;
  state?: string;
  reason?: string | null;
  decided_by?: string | null;
  command?: string;
  args?: string | undefined;
  display?: string;
}

/** Events that record a change of the command itself (audit-chain.ts's table); a grant's entries name it too. */
const COMMAND_EVENTS: ReadonlySet<string> = new Set([
  'submit',
  'approve',
  'deny',
  'launch',
  'outcome',
  'reconcile',
  'prune',
  'preview_started',
  'preview_made',
  'preview_changed',
]);
/** States whose phase has a reason (core/model/lifecycle.ts). */
const REASONED: ReadonlySet<string> = new Set(['denied', 'failed', 'unknown']);

/** Whether `event` records a change of the command (not a grant's entry naming it). */
export const isCommandEvent = (event: string): boolean => COMMAND_EVENTS.has(event);

/** Folds one entry's facts into its command's expectation. */
export function foldFact(into: Map<string, Expected>, f: EntryFact): void {
  if (!COMMAND_EVENTS.has(f.event)) return;
  let e = into.get(f.command_id);
  if (e === undefined) {
    e = { submitted: false, seq: f.seq, hasState: false, hasArgs: false };
    into.set(f.command_id, e);
  }
  if (f.event === 'submit') {
    e.submitted = true;
    e.hasArgs = true;
    e.args = f.args_sha256;
    e.display = f.display_sha256;
    e.command = f.command;
  } else if (f.event === 'prune' && (f.args_sha256 !== undefined || f.pruned_args === true)) {
    e.hasArgs = true;
    e.args = f.args_sha256; // an older daemon's prune of an argument: the digest is gone (undefined)
  }
  if (f.state !== undefined) {
    e.hasState = true;
    e.state = f.state;
    e.reason = f.reason ?? (REASONED.has(f.state) ? undefined : null);
    e.decided_by = f.decided_by ?? (f.state === 'awaiting_review' ? null : undefined);
  }
}

/** A later part's expectations folded over an earlier one's (both in seq order). */
export function mergeExpected(into: Map<string, Expected>, later: ReadonlyMap<string, Expected>): void {
  for (const [id, l] of later) {
    const e = into.get(id);
    if (e === undefined) {
      into.set(id, l);
      continue;
    }
    if (l.submitted) {
      e.submitted = true;
      e.command = l.command;
      e.display = l.display;
    }
    if (l.hasArgs) {
      e.hasArgs = true;
      e.args = l.args;
    }
    if (l.hasState) {
      e.hasState = true;
      e.state = l.state;
      e.reason = l.reason;
      e.decided_by = l.decided_by;
    }
  }
}

/** The expectations of every command the facts name. */
export function expectations(facts: readonly EntryFact[]): Map<string, Expected> {
  const out = new Map<string, Expected>();
  for (const f of facts) foldFact(out, f);
  return out;
}

const absent = (v: unknown) => v ?? null;

/**
 * The digest of stored JSON `text` when it is `expected` (the text hashes to it as it is: then it is the
 * canonical form, which SQLite's minified JSON usually is), else of its canonical form; undefined when none.
 * Saves a parse and a canonicalisation per command row (bench row 15).
 */
export function digestOfJson(text: string | null, expected: string | undefined): string | undefined {
  if (text === null) return undefined;
  const raw = sha256Hex(text);
  if (raw === expected) return raw;
  try {
    return digestOf(JSON.parse(text) as unknown);
  } catch {
    return undefined;
  }
}

/** The digest an entry records of `args` or `display`: SHA-256 of the canonical JSON; undefined when none. */
export function digestOf(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  try {
    return sha256Hex(canonicalJson(value));
  } catch {
    return undefined; // what JSON cannot hold: never equal to a recorded digest
  }
}

/** The fields of `row` that disagree with `e` (its command's entries), in report order. */
export function rowDisagrees(row: HistoryRow, e: Expected | undefined): MismatchField[] {
  // A row no submit entry names was not made by the daemon (inserted by hand, or its id moved).
  if (e === undefined || !e.submitted || row.body_id !== row.id) return ['command_id'];
  const out: MismatchField[] = [];
  if (e.state !== undefined && (row.state !== e.state || row.phase_state !== e.state)) out.push('state');
  if (e.reason !== undefined && absent(row.reason) !== e.reason) out.push('reason');
  if (e.decided_by !== undefined && absent(row.decided_by) !== e.decided_by) out.push('decided_by');
  if (e.command !== undefined && row.command !== e.command) out.push('command');
  if (e.hasArgs && e.args !== undefined && row.args_sha256 !== e.args) out.push('args');
  if (e.display !== undefined && row.display_sha256 !== e.display) out.push('display');
  return out;
}

/**
 * Every mismatch between the chain's expectations (of the commands the table holds), the submits of
 * commands it does not (`missing`), the commands table's rows and the commands an audit row's `command_id`
 * column moved an entry off or onto (`moved`): by command in table order (then commands without a row),
 * fields in MismatchField order.
 */
export function historyMismatches(
  expected: ReadonlyMap<string, Expected>,
  missing: readonly string[],
  rows: Iterable<HistoryRow>,
  moved: ReadonlySet<string>,
): Mismatch[] {
  const found: Array<{ order: number; id: string; fields: MismatchField[] }> = [];
  const seen = new Set<string>();
  for (const row of rows) {
    seen.add(row.id);
    const fields = rowDisagrees(row, expected.get(row.id));
    if (moved.has(row.id) && fields[0] !== 'command_id') fields.unshift('command_id');
    if (fields.length > 0) found.push({ order: row.seq, id: row.id, fields });
  }
  // A command the chain names (its submit, or a moved entry) with no row: the history hides it.
  const submitted = [...expected].filter(([, e]) => e.submitted).map(([id]) => id);
  for (const id of [...missing, ...submitted, ...moved]) {
    if (!seen.has(id)) found.push({ order: Number.MAX_SAFE_INTEGER, id, fields: ['command_id'] });
    seen.add(id);
  }
  found.sort((a, b) => a.order - b.order);
  return found.flatMap((f) => f.fields.map((field) => ({ id: f.id, field })));
}

/**
 * The commands on either side of an audit row whose `command_id` column is not the command its chained entry
 * names (a card's trail would show the entry on another card, or lose it): from the rows the store's
 * reader picked out as possibly so (`[seq, column, entry text]`, a superset: store/*\/readonly.ts).
 */
export function movedLinks(suspects: readonly AuditLink[]): Set<string> {
  const out = new Set<string>();
  for (const { command_id: column, entry } of suspects) {
    let v: Record<string, unknown>;
    try {
      v = JSON.parse(entry) as Record<string, unknown>;
    } catch {
      continue; // not an entry the walk found whole: it never gets here
    }
    const named = typeof v.command_id === 'string' ? v.command_id : null;
    if (named === column) continue;
    // An older grant row was chained with the command it names lifted out of its data (audit-chain.ts)
    // while its column stayed empty: only a command's own entry missing from its trail is moved.
    if (column === null && !isCommandEvent(String(v.event))) continue;
    if (column !== null) out.add(column);
    if (named !== null) out.add(named);
  }
  return out;
}
