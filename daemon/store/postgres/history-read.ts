/**
 * The shared database's history as `audit verify` checks it against the chain (contract 14 (v4),
 * audit/history-check.ts): the commands table and the audit rows' `command_id` column, read in the chain
 * walk's own snapshot (audit-read.ts). The same tuples as broker.db's reader (store/sqlite/readonly.ts).
 * Bodies are parsed here, not by `::json` in the query: one that is not JSON must read as nulls (which the
 * check reports), not stop the read.
 */
import type pg from 'pg';
import type { StoredHistoryRow } from '../rows/index.js';

export interface PgHistory {
  rows: StoredHistoryRow[];
  /** `[seq, command_id column, entry]` of the audit rows whose column may not name their entry's command. */
  links: Array<[number, string | null, string]>;
}

const FETCH = 5000;
type Obj = Record<string, unknown>;

function rowOf(seq: string, id: string, state: string, body: string): StoredHistoryRow {
  let c: Obj | undefined;
  try {
    const v = JSON.parse(body) as unknown;
    if (typeof v === 'object' && v !== null && !Array.isArray(v)) c = v as Obj;
  } catch {
    c = undefined;
  }
  const phase = (typeof c?.phase === 'object' && c.phase !== null ? c.phase : {}) as Obj;
  const json = (v: unknown) => (v === undefined ? null : JSON.stringify(v));
  return [
    Number(seq),
    id,
    state,
    c?.id,
    phase.state,
    phase.reason,
    phase.decided_by,
    c?.command,
    json(c?.args),
    json(c?.display),
  ];
}

/** The history in the open snapshot of `c`, to `upTo` in the audit. */
export async function readHistoryIn(c: pg.Client, upTo: number): Promise<PgHistory> {
  const rows: StoredHistoryRow[] = [];
  await c.query(
    'DECLARE history_read NO SCROLL CURSOR FOR SELECT seq, id, state, body FROM commands ORDER BY seq',
  );
  for (;;) {
    const page = await c.query<[string, string, string, string]>({
      text: `FETCH ${FETCH} FROM history_read`,
      rowMode: 'array',
    });
    for (const [seq, id, state, body] of page.rows) rows.push(rowOf(seq, id, state, body));
    if (page.rows.length < FETCH) break;
  }
  await c.query('CLOSE history_read');
  // As broker.db's (store/sqlite/readonly.ts LINKS_SQL): picked by text, a superset, parsed by the check.
  const links = await c.query<[string, string | null, string]>({
    text: `SELECT seq, command_id, entry FROM audit WHERE seq <= $1 AND CASE WHEN command_id IS NULL
             THEN strpos(entry, '","command_id":"') BETWEEN 1 AND strpos(entry, ',"data":{')
             ELSE strpos(entry, '","command_id":"' || command_id || '","data":{') = 0 END ORDER BY seq`,
    values: [upTo],
    rowMode: 'array',
  });
  return { rows, links: links.rows.map(([seq, id, entry]) => [Number(seq), id, entry]) };
}
