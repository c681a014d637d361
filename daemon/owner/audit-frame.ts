/**
 * The owner frames of contract 14: `history` with a search (text, state, client, date range) answered by
 * the store's indexes, and `audit` — a command's entries ("who did what, when"), or the JSONL export of the
 * entries of the commands a panel shows (verifiable on its own with `ogf-broker audit verify --file`).
 */

import type { AuditMessage } from '../../common/owner-messages.js';
import {
  digestOf,
  type EntryFact,
  expectations,
  factOfEntry,
  type MismatchField,
  rowDisagrees,
  toJsonl,
} from '../audit/index.js';
import type { BrokerApi, ChainEntry, Command, HistorySearch } from '../core/index.js';
import type { AuditFrame, HistoryFrame } from './protocol.js';

/** The search a `history` frame asks for, or undefined for the plain history of contract 5. */
export function searchOf(f: HistoryFrame): HistorySearch | undefined {
  const s: HistorySearch = {};
  if (f.text !== undefined && f.text.trim() !== '') s.text = f.text;
  if (f.state !== undefined) s.state = f.state;
  if (f.client !== undefined) s.client = f.client;
  if (f.since !== undefined) s.since = f.since;
  if (f.until !== undefined) s.until = f.until;
  if (f.node !== undefined) s.node = f.node;
  return Object.keys(s).length === 0 ? undefined : s;
}

/** The answer to an `audit` frame. */
export async function auditAnswer(broker: BrokerApi, f: AuditFrame): Promise<AuditMessage> {
  const ids = f.command_ids ?? [f.command_id!];
  const entries = await broker.auditFor(ids);
  const out: AuditMessage = { type: 'audit', req_id: f.req_id, entries };
  if (f.command_id !== undefined) {
    out.command_id = f.command_id;
    const disagrees = disagreement(broker.get(f.command_id), f.command_id, entries);
    if (disagrees.length > 0) out.record_disagrees = disagrees;
  } else out.command_ids = [...ids];
  // The shown commands' entries alone: each verifies by its hash, gaps between them are declared.
  if (f.format === 'jsonl') out.jsonl = toJsonl(entries, [], undefined, { commandIds: ids });
  return out;
}

/**
 * Contract 14 (v4): the card's command against the entries its trail shows — the fields that disagree
 * (audit/history-check.ts, as `audit verify` compares them), so the panel marks the card "the record
 * disagrees". Checked when the owner opens the trail, from the few entries read for it: checking every
 * card of a snapshot would read every command's entries (docs/audit.md). An entry naming another command
 * (its row's `command_id` column moved it here) is a `command_id` mismatch; one moved away from this card is
 * not seen here, only by `audit verify`.
 */
export function disagreement(
  command: Command | undefined,
  id: string,
  entries: readonly ChainEntry[],
): MismatchField[] {
  if (command === undefined) return [];
  const facts: EntryFact[] = [];
  for (const e of entries) {
    const fact = factOfEntry(e as unknown as Record<string, unknown>);
    if (fact?.command_id === id) facts.push(fact);
  }
  const p = command.phase;
  const fields = rowDisagrees(
    {
      seq: 0,
      id,
      body_id: command.id,
      state: p.state,
      phase_state: p.state,
      reason: 'reason' in p ? p.reason : undefined,
      decided_by: 'decided_by' in p ? p.decided_by : undefined,
      command: command.command,
      args_sha256: digestOf(command.args),
      display_sha256: digestOf(command.display),
    },
    expectations(facts).get(id),
  );
  if (entries.some((e) => e.command_id !== id) && fields[0] !== 'command_id') fields.unshift('command_id');
  return fields;
}
