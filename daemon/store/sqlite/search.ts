/**
 * The history search (contract 14) in broker.db's SQL: store/rules.ts says what each term means, this file
 * only how SQLite reads it — the text through `commands_search` (trigram FTS5: a phrase query for 3
 * characters or more; a shorter text is looked for in that table's rows, still SQLite's work, not ours),
 * the state, client, command name and creation time through their indexes. The one query both the search
 * and the test of its plan run (commands.ts).
 *
 * The text index is written after the commits (search-index.ts): a row queued in `commands_search_todo` is
 * not yet indexed, or indexed with text a decision has changed since. The search brings the index up to
 * date first; when it cannot write (a full disk), its text term also covers the queued rows, read from
 * their records by their seq (a short list: the background keeps it so), with SQLite's `lower()`.
 */
import type { HistorySearch } from '../../core/index.js';
import { type SearchTerm, searchTerms } from '../rules/index.js';
import { searchText } from './schema.js';

/**
 * A text term: the rows the index holds; with `queued`, only those it holds as they are, and each queued
 * row's own text besides (slower: an OR the planner sorts; only when the index could not be brought up to
 * date).
 */
function textClause(text: string, queued: boolean): [string, ...unknown[]] {
  const [match, value] =
    [...text].length >= 3
      ? ['commands_search MATCH ?', `"${text.replace(/"/g, '""')}"`]
      : ['instr(lower(text), lower(?)) > 0', text];
  const indexed = `seq IN (SELECT rowid FROM commands_search WHERE ${match})`;
  if (!queued) return [indexed, value];
  return [
    `((${indexed} AND seq NOT IN (SELECT seq FROM commands_search_todo))
      OR (seq IN (SELECT seq FROM commands_search_todo) AND instr(lower(${searchText('body')}), lower(?)) > 0))`,
    value,
    text,
  ];
}

function clause(term: SearchTerm, queued: boolean): [string, ...unknown[]] {
  switch (term.kind) {
    case 'text':
      return textClause(term.text, queued);
    case 'since':
      return ['created_at >= ?', term.value];
    case 'until':
      return ['created_at <= ?', term.value];
    case 'equals':
      // Contract 16: broker.db is one daemon's, so its commands are (nearly) all of one node: the filter
      // reads the body, inside the page the other filters and seq order already bound.
      if (term.field === 'node') return ["json_extract(body, '$.node') = ?", term.value];
      // Contract 11 (v4): `command` through commands_command_seq (schema.ts).
      return [`${term.field} = ?`, term.value];
  }
}

/**
 * The search's SELECT, newest first, before the row `beforeSeq` when given; its last `?` is the limit.
 * `queued`: rows may wait in `commands_search_todo` (the index could not be brought up to date).
 */
export function searchQuery(
  filter: HistorySearch,
  beforeSeq?: number,
  queued = false,
): { sql: string; params: unknown[] } {
  const where: string[] = [];
  const params: unknown[] = [];
  for (const term of searchTerms(filter)) {
    const [sql, ...values] = clause(term, queued);
    where.push(sql);
    params.push(...values);
  }
  if (beforeSeq !== undefined) {
    where.push('seq < ?');
    params.push(beforeSeq);
  }
  const sql = `SELECT body FROM commands${where.length > 0 ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY seq DESC LIMIT ?`;
  return { sql, params };
}
