/**
 * The history search (contract 14) in broker.db's SQL: store/rules.ts says what each term means, this file
 * only how SQLite reads it — the text through `commands_search` (trigram FTS5: a phrase query for 3
 * characters or more; a shorter text is looked for in that table's rows, still SQLite's work, not ours),
 * the state, client, command name and creation time through their indexes. The one query both the search
 * and the test of its plan run (commands.ts).
 */
import type { HistorySearch } from '../../core/index.js';
import { type SearchTerm, searchTerms } from '../rules/index.js';

function clause(term: SearchTerm): [string, unknown] {
  switch (term.kind) {
    case 'text':
      return [...term.text].length >= 3
        ? [
            'seq IN (SELECT rowid FROM commands_search WHERE commands_search MATCH ?)',
            `"${term.text.replace(/"/g, '""')}"`,
          ]
        : ['seq IN (SELECT rowid FROM commands_search WHERE instr(lower(text), lower(?)) > 0)', term.text];
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

/** The search's SELECT, newest first, before the row `beforeSeq` when given; its last `?` is the limit. */
export function searchQuery(filter: HistorySearch, beforeSeq?: number): { sql: string; params: unknown[] } {
  const where: string[] = [];
  const params: unknown[] = [];
  for (const term of searchTerms(filter)) {
    const [sql, value] = clause(term);
    where.push(sql);
    params.push(value);
  }
  if (beforeSeq !== undefined) {
    where.push('seq < ?');
    params.push(beforeSeq);
  }
  const sql = `SELECT body FROM commands${where.length > 0 ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY seq DESC LIMIT ?`;
  return { sql, params };
}
