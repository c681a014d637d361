/**
 * The history search's text index (`commands_search`, trigram FTS5), written after the commits that change
 * what it holds instead of inside them (bench row 4, issue 41: indexing a command's text in its submit's
 * transaction cost ~0.1 ms of CPU and several pages of every durable submission; in passes of a few hundred
 * rows it costs ~12 µs a row). A command's insert, or a change of its searchable text, queues its seq in
 * `commands_search_todo` (schema.ts triggers); this file indexes what is queued:
 *
 * - before every search (`catchUp`), so a search finds every command committed before it;
 * - in the background, a bounded pass at a time through the store's gate (never inside another transaction,
 *   never blocking the loop for long), so the queue stays short and a search rarely has anything to do.
 *
 * The index is derived data: a crash between a commit and its pass only leaves seqs queued, which the next
 * pass or search indexes.
 */

import { type Db, searchText } from './schema.js';

/** Rows indexed in one background transaction (~3.5 ms of CPU here at 256). */
export const SEARCH_PASS_ROWS = 256;
/** How often the background looks for queued rows, in ms. */
export const SEARCH_INDEX_MS = 500;

export class SearchIndex {
  readonly #atomic: (fn: () => void) => void;
  readonly #stmts;

  constructor(db: Db, atomic: (fn: () => void) => void) {
    this.#atomic = atomic;
    this.#stmts = {
      queued: db.prepare('SELECT EXISTS (SELECT 1 FROM commands_search_todo)').pluck(),
      last: db.prepare('SELECT seq FROM commands_search_todo ORDER BY seq LIMIT 1 OFFSET ?').pluck(),
      drop: db.prepare(
        'DELETE FROM commands_search WHERE rowid IN (SELECT seq FROM commands_search_todo WHERE seq <= ?)',
      ),
      put: db.prepare(
        `INSERT INTO commands_search (rowid, text) SELECT c.seq, ${searchText('c.body')}
         FROM commands_search_todo t JOIN commands c ON c.seq = t.seq WHERE t.seq <= ?`,
      ),
      done: db.prepare('DELETE FROM commands_search_todo WHERE seq <= ?'),
    };
  }

  /**
   * Indexes the oldest `limit` queued rows (all of them when not given) in one transaction, or in the one
   * already open; returns whether rows are still queued after it.
   */
  catchUp(limit = Number.POSITIVE_INFINITY): boolean {
    if (this.#stmts.queued.get() !== 1) return false;
    const upTo = Number.isFinite(limit)
      ? ((this.#stmts.last.get(limit - 1) as number | undefined) ?? Number.MAX_SAFE_INTEGER)
      : Number.MAX_SAFE_INTEGER;
    this.#atomic(() => {
      // A row indexed before (a decision changed its text) is replaced, not indexed twice.
      this.#stmts.drop.run(upTo);
      this.#stmts.put.run(upTo);
      this.#stmts.done.run(upTo);
    });
    return upTo !== Number.MAX_SAFE_INTEGER && this.#stmts.queued.get() === 1;
  }
}

/**
 * The background passes: every `everyMs` (none when 0), one pass through `gate` (the store's serialisation
 * of transactions), then at once again (after the loop's I/O) while rows remain.
 */
export function indexInBackground(
  index: SearchIndex,
  gate: (call: () => boolean) => Promise<boolean>,
  everyMs: number,
): () => void {
  if (everyMs <= 0) return () => {};
  let stopped = false;
  let running = false;
  const pass = (): void => {
    if (stopped || running) return;
    running = true;
    gate(() => !stopped && index.catchUp(SEARCH_PASS_ROWS)).then(
      (more) => {
        running = false;
        if (more) setImmediate(pass);
      },
      () => {
        // The file cannot be written now (a full disk): the rows stay queued for the next pass or search.
        running = false;
      },
    );
  };
  const timer = setInterval(pass, everyMs);
  timer.unref();
  return () => {
    stopped = true;
    clearInterval(timer);
  };
}
