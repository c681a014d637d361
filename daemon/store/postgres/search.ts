/**
 * The history search in PostgreSQL (contract 14), the same meaning as broker.db's (store/sqlite/commands.ts
 * search): every field narrows, newest first, before a pending_id, bounded like `history`. The text is a
 * substring in any case of `commands.search_text` — command, client, arguments (their first 4 KiB of JSON),
 * justification, decider and notes, kept by a trigger (schema.ts) — found with ILIKE through the pg_trgm
 * GIN index `commands_search_trgm` (3 characters or more; PostgreSQL itself checks shorter ones); state
 * and client through `commands_state_seq` / `commands_client_seq`, times through `commands_created`.
 */
import type { HistorySearch } from '../../core/index.js';
import type { PgTransactions } from './transaction.js';

/** The WHERE clause and its values for a search (shared with the test of its query plan). */
export function searchWhere(filter: HistorySearch): { where: string[]; values: unknown[] } {
  const where: string[] = [];
  const values: unknown[] = [];
  const add = (clause: string, value: unknown) => {
    values.push(value);
    where.push(clause.replace('?', `$${values.length}`));
  };
  const text = filter.text?.trim();
  // LIKE's own characters stand for themselves: the owner types text, not a pattern.
  if (text !== undefined && text !== '') add('search_text ILIKE ?', `%${text.replace(/[\\%_]/g, '\\$&')}%`);
  if (filter.state !== undefined) add('state = ?', filter.state);
  if (filter.client !== undefined) add('client = ?', filter.client);
  if (filter.since !== undefined) add('created_at >= ?', filter.since);
  if (filter.until !== undefined) add('created_at <= ?', filter.until);
  // Contract 16: the column the daemon writes with each command (schema.ts), not its JSON body.
  if (filter.node !== undefined) add('node = ?', filter.node);
  // Contract 11 (v4): the generated column and its index commands_command_seq (schema.ts).
  if (filter.command !== undefined) add('command = ?', filter.command);
  return { where, values };
}

export async function searchCommands(
  tx: PgTransactions,
  filter: HistorySearch,
  limit: number,
  before: string | undefined,
  maxChars: number,
  bounded: (inner: string, order: string) => string,
): Promise<Array<{ body: string }>> {
  const { where, values } = searchWhere(filter);
  if (before !== undefined) {
    const row = (await tx.read<{ seq: number }>('SELECT seq FROM commands WHERE id = $1', [before]))[0];
    if (row === undefined) return [];
    values.push(row.seq);
    where.push(`seq < $${values.length}`);
  }
  values.push(limit);
  const inner = `SELECT seq, body FROM commands${where.length > 0 ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY seq DESC LIMIT $${values.length}`;
  values.push(maxChars);
  return tx.read(bounded(inner, 'seq DESC').replace('$MAX', `$${values.length}`), values);
}
