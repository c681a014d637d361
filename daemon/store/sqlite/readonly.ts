/**
 * Reads of a data dir's broker.db by a process that is not the daemon (`status`, `doctor`): opened
 * read-only, never created, never migrated; a missing or older file answers undefined.
 */

import { existsSync } from 'node:fs';
import type { Checkpoint, Command } from '../../core/index.js';
import type { StoredHistoryRow } from '../rows/index.js';
import type { AuditRange } from '../rules/index.js';
import { openReadOnly } from './schema.js';

/**
 * How many owners a data dir's broker.db holds, read without writing (doctor, contract 1.1): undefined when
 * there is no broker.db yet or it predates owners (its first start creates owner `owner`).
 */
export function countOwners(path: string): number | undefined {
  return readOnly(path, (db) => db.prepare('SELECT COUNT(*) FROM owners').pluck().get() as number);
}

/** Commands by state (`status`), or undefined when there is no readable broker.db. */
export function countsByState(path: string): Record<string, number> | undefined {
  if (!existsSync(path)) return undefined;
  return readOnly(path, (db) => {
    const rows = db.prepare('SELECT state, COUNT(*) AS n FROM commands GROUP BY state').all() as Array<{
      state: string;
      n: number;
    }>;
    return Object.fromEntries(rows.map((r) => [r.state, r.n]));
  });
}

/**
 * The newest `limit` commands, newest first, read without writing (`policy test`, contract 11): one record
 * parsed at a time. Undefined when there is no readable broker.db.
 */
export function newestCommands(path: string, limit: number): Command[] | undefined {
  if (!existsSync(path)) return undefined;
  return readOnly(path, (db) => {
    const out: Command[] = [];
    const rows = db.prepare('SELECT body FROM commands ORDER BY seq DESC LIMIT ?').iterate(limit);
    for (const row of rows as Iterable<{ body: string }>) out.push(JSON.parse(row.body) as Command);
    return out;
  });
}

function readOnly<T>(path: string, read: (db: ReturnType<typeof openReadOnly>) => T): T | undefined {
  let db: ReturnType<typeof openReadOnly>;
  try {
    db = openReadOnly(path);
  } catch {
    return undefined;
  }
  try {
    return read(db);
  } catch {
    return undefined;
  } finally {
    db.close();
  }
}

/** The audit chain as stored, read without writing (`audit verify`, `audit export`). */
export interface StoredChain {
  /** Every row in seq order: its entry text and hash (null on a row an older version wrote, not chained yet). */
  rows: Array<{ seq: number; entry: string | null; hash: string | null }>;
  checkpoints: Checkpoint[];
}

/**
 * Reads broker.db's audit chain read-only (a running daemon keeps writing: WAL gives this reader one
 * consistent snapshot). Undefined when the file is absent or older than the chain (start the daemon once).
 */
export function readAuditChain(path: string, range: AuditRange = {}): StoredChain | undefined {
  return withChain(path, (db) => {
    db.exec('BEGIN'); // one snapshot for the rows and the checkpoints
    const { where, params } = rangeSql(range);
    const rows = db
      .prepare(`SELECT seq, entry, hash FROM audit ${where} ORDER BY seq`)
      .all(...params) as StoredChain['rows'];
    const checkpoints = db
      .prepare('SELECT seq, hash, at, signature FROM audit_checkpoints ORDER BY seq')
      .all() as Checkpoint[];
    db.exec('COMMIT');
    return { rows, checkpoints };
  });
}

/**
 * broker.db opened read-only; undefined when the file is absent, cannot be opened, or is older than the
 * chain (no `hash` column: start the daemon once).
 */
function openChain(path: string): ReturnType<typeof openReadOnly> | undefined {
  if (!existsSync(path)) return undefined;
  let db: ReturnType<typeof openReadOnly>;
  try {
    db = openReadOnly(path);
  } catch {
    return undefined;
  }
  const columns = db.prepare("SELECT name FROM pragma_table_info('audit')").pluck().all() as string[];
  if (columns.includes('hash')) return db;
  db.close();
  return undefined;
}

/** Runs `read` on broker.db opened by openChain; undefined as it is. */
function withChain<T>(path: string, read: (db: ReturnType<typeof openReadOnly>) => T): T | undefined {
  const db = openChain(path);
  if (db === undefined) return undefined;
  try {
    return read(db);
  } finally {
    db.close();
  }
}

/** How much of broker.db the walk maps (address space only; SQLite reads past it as usual). */
const WALK_MMAP_BYTES = 1 << 30;

/**
 * The rows of a seq range joined by SQLite in one pass (one value each instead of an array and two strings
 * per row: row stepping was a third of `audit verify`'s time, bench row 15): the entries' UTF-8 bytes joined
 * by newlines, handed over as bytes (no string is made of them here: the walk hashes the bytes, and a
 * worker takes them without a copy), and the hashes end to end. The second count is of rows whose entry
 * and hash are both text (a NULL would vanish from the join, a BLOB would pass for text); an entry holding
 * a newline (canonical JSON never does, a hand-edited row may) shows as one piece too many. Either stops
 * the walk. No ORDER BY: a rowid range is read in rowid order, and rows in any other order would show in
 * the links the walk checks (ordering the subquery copied every row once more, bench row 15).
 */
const RANGE_SQL = `SELECT count(*), count(*) FILTER (WHERE typeof(entry) = 'text' AND typeof(hash) = 'text'),
     CAST(group_concat(entry, char(10)) AS BLOB), group_concat(hash, '')
   FROM audit WHERE seq > ? AND seq <= ?`;

type RangeRow = [number, number, Buffer | null, string | null];

/**
 * broker.db's audit chain read in seq ranges (`audit verify`'s walk, audit/walk-threads.ts): read-only, in
 * one snapshot per reader, the rows handed over without being held (100,000 entries would be 100,000
 * objects kept alive for the collector to move). Only the walk's main thread opens one: it hands the worker
 * the bytes it reads, and the worker loads no SQLite.
 */
export interface AuditChainReader {
  /**
   * The last seq of this snapshot (0: no row) when the first is 1, else undefined — the record is then read
   * whole (readAuditChain) to say what is wrong. A seq missing between them shows in rows().
   */
  last(): number | undefined;
  checkpoints(): Checkpoint[];
  /**
   * The rows `after < seq <= upTo` in seq order: their entries' bytes joined by newlines and their hashes
   * end to end; undefined when a row cannot be handed over so (a missing seq, a NULL, a non-text value, a hash not
   * 64 characters). An entry holding a newline shows as one piece too many to whoever splits it.
   */
  rows(after: number, upTo: number): { entries: Buffer; hashes: string } | undefined;
  /** The commands table in this snapshot (HISTORY_SQL), read before the walk: its ids filter the facts taken. */
  commands(): StoredHistoryRow[];
  /** The audit rows to `upTo` whose command_id column may not name their entry's command (LINKS_SQL). */
  links(upTo: number): StoredLink[];
  close(): void;
}

/** An audit row as `[seq, command_id column, entry text]`. */
export type StoredLink = [number, string | null, string];

/** The commands table, and the audit rows whose `command_id` column may not be their entry's. */
export interface StoredHistory {
  rows: StoredHistoryRow[];
  links: StoredLink[];
}

/**
 * One read of the commands table: the fields by SQLite's JSON operators (`->` keeps JSON, `->>` gives the
 * value) on each body parsed once (`jsonb`), never the whole body parsed in JavaScript (outputs of megabytes
 * stay in SQLite). A body that is not JSON reads as nulls, which the check reports, rather than stopping it.
 */
export const HISTORY_SQL = `SELECT seq, id, state, j ->> '$.id', j ->> '$.phase.state', j ->> '$.phase.reason',
     j ->> '$.phase.decided_by', j ->> '$.command', json(j -> '$.args'), json(j -> '$.display')
   FROM (SELECT seq, id, state, CASE WHEN json_valid(body) THEN jsonb(body) END AS j FROM commands) ORDER BY seq`;
/**
 * The audit rows whose `command_id` column (what a card's trail is looked up by) may not name the command
 * their entry names, found by text in C, without parsing 100,000 entries: the column's id must stand as the
 * entry's top-level `command_id` (canonical JSON: just before `,"data":{`), and a row without one must hold
 * none there. A superset (an id needing escapes is picked too); audit/history-check.ts parses the few picked.
 */
export const LINKS_SQL = `SELECT seq, command_id, entry FROM audit WHERE seq <= ? AND CASE WHEN command_id IS NULL
     THEN instr(entry, '","command_id":"') BETWEEN 1 AND instr(entry, ',"data":{')
     ELSE instr(entry, '","command_id":"' || command_id || '","data":{') = 0 END ORDER BY seq`;

function historyOf(db: ReturnType<typeof openReadOnly>, upTo: number): StoredHistory {
  return {
    rows: db.prepare(HISTORY_SQL).raw().all() as StoredHistoryRow[],
    links: db.prepare(LINKS_SQL).raw().all(upTo) as StoredLink[],
  };
}

/** broker.db's commands and audit links read-only in one snapshot (`audit verify` when its walk stopped). */
export function readHistory(path: string): StoredHistory | undefined {
  return withChain(path, (db) => {
    db.exec('BEGIN');
    const out = historyOf(db, Number.MAX_SAFE_INTEGER);
    db.exec('COMMIT');
    return out;
  });
}

/** A reader of broker.db's audit chain (above), or undefined as readAuditChain. */
export function openAuditChain(path: string): AuditChainReader | undefined {
  const db = openChain(path);
  if (db === undefined) return undefined;
  // Pages read straight from the file's mapping, not copied through read(2): a third of the walk's time
  // was the kernel copying 50 MB of pages (bench row 15). Read-only: the mapping is never written.
  db.pragma(`mmap_size = ${WALK_MMAP_BYTES}`);
  db.exec('BEGIN');
  const range = db.prepare(RANGE_SQL).raw();
  return {
    last() {
      // min and max are read off the rowid tree's ends (count(*) would read every page: ~10 ms at 100,000
      // rows); that no seq between them is missing, each range's count shows (rows, below).
      // BigInts: a rowid past 2^53 must not be rounded onto its neighbour's.
      const [min, max] = db
        .prepare('SELECT (SELECT min(seq) FROM audit), (SELECT max(seq) FROM audit)')
        .raw()
        .safeIntegers()
        .get() as [bigint | null, bigint | null];
      if (min === null || max === null) return 0;
      return min === 1n && max <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(max) : undefined;
    },
    checkpoints() {
      return db
        .prepare('SELECT seq, hash, at, signature FROM audit_checkpoints ORDER BY seq')
        .all() as Checkpoint[];
    },
    rows(after, upTo) {
      const n = upTo - after;
      if (n <= 0) return n === 0 ? { entries: Buffer.alloc(0), hashes: '' } : undefined;
      const [count, texts, entries, hashes] = range.get(after, upTo) as RangeRow;
      if (count !== n || texts !== n || entries === null || hashes === null || hashes.length !== 64 * n) {
        return undefined;
      }
      return { entries, hashes };
    },
    commands() {
      return db.prepare(HISTORY_SQL).raw().all() as StoredHistoryRow[];
    },
    links(upTo) {
      return db.prepare(LINKS_SQL).raw().all(upTo) as StoredLink[];
    },
    close() {
      if (db.inTransaction) db.exec('COMMIT');
      db.close();
    },
  };
}

function rangeSql(r: AuditRange): { where: string; params: unknown[] } {
  const parts: string[] = [];
  const params: unknown[] = [];
  // What a range means: store/rules/rules.ts AuditRange.
  if (r.since !== undefined) {
    parts.push('seq >= (SELECT COALESCE(MIN(seq), 1e18) FROM audit WHERE at >= ?)');
    params.push(r.since);
  }
  if (r.until !== undefined) {
    parts.push('seq <= (SELECT COALESCE(MAX(seq), 0) FROM audit WHERE at <= ?)');
    params.push(r.until);
  }
  if (r.commandIds !== undefined) {
    parts.push(`command_id IN (${r.commandIds.map(() => '?').join(', ')})`);
    params.push(...r.commandIds);
  }
  return { where: parts.length === 0 ? '' : `WHERE ${parts.join(' AND ')}`, params };
}
