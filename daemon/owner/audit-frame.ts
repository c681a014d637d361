/**
 * The owner frames of contract 14: `history` with a search (text, state, client, date range) answered by
 * the store's indexes, and `audit` — a command's entries ("who did what, when"), or the JSONL export of the
 * entries of the commands a panel shows (verifiable on its own with `ogf-broker audit verify --file`).
 */
import { toJsonl } from '../audit/index.js';
import type { BrokerApi, HistorySearch } from '../core/index.js';
import type { AuditMessage } from './messages.js';
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
  if (f.command_id !== undefined) out.command_id = f.command_id;
  else out.command_ids = [...ids];
  // The shown commands' entries alone: each verifies by its hash, gaps between them are declared.
  if (f.format === 'jsonl') out.jsonl = toJsonl(entries, [], undefined, { commandIds: ids });
  return out;
}
