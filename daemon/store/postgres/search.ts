/**
 * The history search (contract 14) in PostgreSQL's SQL: store/rules.ts says what each term means (the same
 * as broker.db's), this file only how PostgreSQL reads it. The text is a substring in any case of
 * `commands.search_text` — command, client, arguments (their first 4 KiB of JSON), justification, decider
 * and notes, kept by a trigger (schema.ts) — found with ILIKE through the pg_trgm GIN index
 * `commands_search_trgm` (3 characters or more; PostgreSQL itself checks shorter ones); state and client
 * through `commands_state_seq` / `commands_client_seq`, times through `commands_created`. Also the page
 * bound every history read shares (`bounded`). `searchQuery` is the one query the search runs and the test
 * of its plan explains.
 */
import type { HistorySearch } from '../../core/index.js';
import { type SearchTerm, searchTerms } from '../rules/index.js';
import type { PgTransactions } from './transaction.js';

/**
 * Rows of a page newest first, each with the characters read so far (`run`) and its place (`n`): a page
 * stops before the row that passes `maxChars`, at least one row (the parse bound of issue 19 finding 3,
 * decided in the database so an oversized page is never sent).
 */
export function bounded(inner: string, order: string): string {
  return `SELECT body, n, total FROM (
     SELECT body, sum(length(body)) OVER w AS run, row_number() OVER w AS n, count(*) OVER () AS total
     FROM (${inner}) s WINDOW w AS (ORDER BY ${order})) t
   WHERE n = 1 OR run <= $MAX ORDER BY n`;
}

function clause(term: SearchTerm): [string, unknown] {
  switch (term.kind) {
    case 'text':
      // LIKE's own characters stand for themselves: the owner types text, not a pattern.
      return ['search_text ILIKE ?', `%${term.text.replace(/[\\%_]/g, '\\$&')}%`];
    case 'since':
      return ['created_at >= ?', term.value];
    case 'until':
      return ['created_at <= ?', term.value];
    case 'equals':
      // `node`: the column the daemon writes with each command (schema.ts), not its JSON body; `command`:
      // the generated column and its index commands_command_seq (contract 11 v4).
      return [`${term.field} = ?`, term.value];
  }
}

/**
 * The search as it runs: newest first, before the row `beforeSeq` when given, at most `limit` rows and
 * `maxChars` characters of records (at least one row).
 */
export function searchQuery(
  filter: HistorySearch,
  beforeSeq: number | undefined,
  limit: number,
  maxChars: number,
): { sql: string; values: unknown[] } {
  const where: string[] = [];
  const values: unknown[] = [];
  const add = (sql: string, value: unknown) => {
    values.push(value);
    where.push(sql.replace('?', `$${values.length}`));
  };
  for (const term of searchTerms(filter)) add(...clause(term));
  if (beforeSeq !== undefined) add('seq < ?', beforeSeq);
  values.push(limit);
  const inner = `SELECT seq, body FROM commands${where.length > 0 ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY seq DESC LIMIT $${values.length}`;
  values.push(maxChars);
  return { sql: bounded(inner, 'seq DESC').replace('$MAX', `$${values.length}`), values };
}

export async function searchCommands(
  tx: PgTransactions,
  filter: HistorySearch,
  limit: number,
  before: string | undefined,
  maxChars: number,
): Promise<Array<{ body: string }>> {
  let beforeSeq: number | undefined;
  if (before !== undefined) {
    const row = (await tx.read<{ seq: number }>('SELECT seq FROM commands WHERE id = $1', [before]))[0];
    if (row === undefined) return [];
    beforeSeq = row.seq;
  }
  const { sql, values } = searchQuery(filter, beforeSeq, limit, maxChars);
  return tx.read(sql, values);
}
