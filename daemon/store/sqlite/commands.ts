/**
 * Commands in broker.db: each row keeps its whole record as JSON plus the columns we query by. A row and
 * its audit entry commit together or not at all.
 */
import type { AuditEntry, Command, HistorySearch, RetentionRow, State, TasksPage } from '../../core/index.js';
import { ACTIVE_STATES, FINAL_STATES, HISTORY_MAX_CHARS, inList, searchTerms } from '../rules/index.js';
import type { SqliteAudit } from './audit.js';
import type { Db } from './schema.js';
import { searchQuery } from './search.js';
import { SearchIndex } from './search-index.js';

/**
 * One client's tasks, newest first, before a seq (SqliteCommands.tasksOf). Named: the partial index holds
 * tasks only, while the history search's `commands_client_seq` holds every command of the client, which the
 * planner may otherwise prefer and then walk past every non-task row (issue 19 finding 3).
 */
const TASKS_OF_SQL =
  'SELECT body FROM commands INDEXED BY commands_client_tasks WHERE client = ? AND task IS NOT NULL AND seq < ? ORDER BY seq DESC LIMIT ?';

/** A page of the history before a time (a cursor that is no pending_id), by `commands_created` (issue 19). */
const HISTORY_BEFORE_TIME_SQL =
  'SELECT body FROM commands WHERE created_at < ? ORDER BY created_at DESC, seq DESC LIMIT ?';

type Body = { body: string };

function parse(row: unknown): Command | undefined {
  return row === undefined ? undefined : (JSON.parse((row as Body).body) as Command);
}

/** Command rows, synchronously, on one connection. */
export class SqliteCommands {
  readonly #db: Db;
  readonly #audit: SqliteAudit;
  readonly #atomic: (fn: () => void) => void;
  readonly #stmts;
  /** The text index, brought up to date before each search (search-index.ts). */
  readonly searchIndex: SearchIndex;

  constructor(db: Db, audit: SqliteAudit, atomic: (fn: () => void) => void) {
    this.#db = db;
    this.#audit = audit;
    this.#atomic = atomic;
    this.searchIndex = new SearchIndex(db, atomic);
    this.#stmts = {
      insert: db.prepare(
        'INSERT INTO commands (id, client, request_id, state, version, created_at, body, task) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      ),
      update: db.prepare('UPDATE commands SET state = ?, version = ?, body = ? WHERE id = ? AND version = ?'),
      amend: db.prepare('UPDATE commands SET body = ? WHERE id = ? AND version = ?'),
      get: db.prepare('SELECT body FROM commands WHERE id = ?'),
      byRequest: db.prepare('SELECT body FROM commands WHERE client = ? AND request_id = ?'),
      active: db.prepare(`SELECT body FROM commands WHERE state IN ${inList(ACTIVE_STATES)} ORDER BY seq`),
      recentFinal: db.prepare(
        `SELECT body FROM commands WHERE state IN ${inList(FINAL_STATES)} ORDER BY seq DESC LIMIT ?`,
      ),
      history: db.prepare('SELECT body FROM commands ORDER BY seq DESC LIMIT ?'),
      historyBeforeSeq: db.prepare('SELECT body FROM commands WHERE seq < ? ORDER BY seq DESC LIMIT ?'),
      // By commands_created: a time before every row no longer walks the whole table back (issue 19).
      historyBeforeTime: db.prepare(HISTORY_BEFORE_TIME_SQL),
      seqOf: db.prepare('SELECT seq FROM commands WHERE id = ?'),
      taskSeq: db.prepare('SELECT seq FROM commands WHERE id = ? AND client = ? AND task IS NOT NULL'),
      tasksOf: db.prepare(TASKS_OF_SQL),
      retentionScan: db.prepare(
        'SELECT seq, id, state, created_at, length(body) AS chars FROM commands WHERE seq > ? ORDER BY seq LIMIT ?',
      ),
      counts: db.prepare('SELECT state, COUNT(*) AS n FROM commands GROUP BY state'),
    };
  }

  /** Inserts a new command and its audit entry in one transaction. */
  insert(command: Command, audit: AuditEntry): void {
    this.#atomic(() => {
      this.#stmts.insert.run(
        command.id,
        command.client,
        command.request_id ?? null,
        command.phase.state,
        command.version,
        command.created_at,
        JSON.stringify(command),
        command.task === undefined ? null : 1,
      );
      this.#audit.append(audit);
    });
  }

  /** Replaces a command whose stored version is `next.version - 1`, with its audit entry, atomically. */
  update(next: Command, audit: AuditEntry): void {
    this.#atomic(() => {
      const r = this.#stmts.update.run(
        next.phase.state,
        next.version,
        JSON.stringify(next),
        next.id,
        next.version - 1,
      );
      if (r.changes !== 1) throw new Error(`store: command ${next.id} is not at version ${next.version - 1}`);
      this.#audit.append(audit);
    });
  }

  /** Replaces a command stored at `next.version` itself (an amend: contract 12), with its audit entry. */
  amend(next: Command, audit: AuditEntry): void {
    this.#atomic(() => {
      const r = this.#stmts.amend.run(JSON.stringify(next), next.id, next.version);
      if (r.changes !== 1) throw new Error(`store: command ${next.id} is not at version ${next.version}`);
      this.#audit.append(audit);
    });
  }

  /** Applies many updates in one transaction (recovery at start). */
  updateMany(changes: ReadonlyArray<{ next: Command; audit: AuditEntry }>): void {
    this.#atomic(() => {
      for (const c of changes) this.update(c.next, c.audit);
    });
  }

  get(id: string): Command | undefined {
    return parse(this.#stmts.get.get(id));
  }

  byRequest(client: string, requestId: string): Command | undefined {
    return parse(this.#stmts.byRequest.get(client, requestId));
  }

  /** Every command not yet final, oldest first. */
  active(): Command[] {
    return this.#stmts.active.all().map((r) => parse(r)!);
  }

  /** The newest `limit` final commands, newest first. */
  recentFinal(limit: number): Command[] {
    return this.#stmts.recentFinal.all(limit).map((r) => parse(r)!);
  }

  /**
   * Commands newest first, before a pending_id or an ISO time when given: at most `limit`, and no more once
   * the records read reach `maxChars` (at least one): a record holds up to ~6 MiB the AI chose (arguments,
   * output), so 500 of them must not be parsed in one turn (issue 19 finding 3). A shorter page is fine:
   * the caller asks again from its last command, and only an empty page ends the history.
   */
  history(limit: number, before?: string, maxChars = HISTORY_MAX_CHARS): Command[] {
    let rows: Iterable<Body>;
    if (before === undefined) rows = this.#stmts.history.iterate(limit) as Iterable<Body>;
    else {
      const seq = this.#stmts.seqOf.get(before) as { seq: number } | undefined;
      rows = (
        seq
          ? this.#stmts.historyBeforeSeq.iterate(seq.seq, limit)
          : this.#stmts.historyBeforeTime.iterate(before, limit)
      ) as Iterable<Body>;
    }
    const out: Command[] = [];
    let chars = 0;
    for (const row of rows) {
      if (out.length > 0 && chars + row.body.length > maxChars) break;
      chars += row.body.length;
      out.push(JSON.parse(row.body) as Command);
    }
    return out;
  }

  /**
   * `client`'s tasks newest first, older than the task `before` when given (its taskId: the cursor), read
   * through `commands_client_tasks` so no other client's row is touched (issue 19 finding 3). Stops after
   * `limit` tasks or once the stored records read reach `maxChars` (at least one is read), so one page costs
   * a bounded parse however large each record is. `more` says whether older tasks remain. An unknown
   * `before`, or one that is not this client's task, is undefined: the caller refuses the cursor.
   */
  tasksOf(client: string, limit: number, maxChars: number, before?: string): TasksPage | undefined {
    let from = Number.MAX_SAFE_INTEGER;
    if (before !== undefined) {
      const row = this.#stmts.taskSeq.get(before, client) as { seq: number } | undefined;
      if (row === undefined) return undefined;
      from = row.seq;
    }
    const commands: Command[] = [];
    let chars = 0;
    // One more row than the page, so `more` is known without a second query.
    for (const row of this.#stmts.tasksOf.iterate(client, from, limit + 1) as Iterable<Body>) {
      if (commands.length === limit || (commands.length > 0 && chars + row.body.length > maxChars)) {
        return { commands, more: true };
      }
      chars += row.body.length;
      commands.push(JSON.parse(row.body) as Command);
    }
    return { commands, more: false };
  }

  /**
   * Rows after `afterSeq` in creation order, without their records: what the retention pass (retention.ts)
   * needs to skip a row unread (its state, its creation time, its record's size in characters).
   */
  retentionScan(afterSeq: number, limit: number): RetentionRow[] {
    return this.#stmts.retentionScan.all(afterSeq, limit) as RetentionRow[];
  }

  /** The query plan of the history's page before a time (EXPLAIN QUERY PLAN), for the test of its index. */
  historyPlan(): string[] {
    return (
      this.#db.prepare(`EXPLAIN QUERY PLAN ${HISTORY_BEFORE_TIME_SQL}`).all('x', 1) as Array<{
        detail: string;
      }>
    ).map((r) => r.detail);
  }

  /** The query plan of the tasks/list query (EXPLAIN QUERY PLAN), for the test that it uses its index. */
  tasksPlan(): string[] {
    return (
      this.#db.prepare(`EXPLAIN QUERY PLAN ${TASKS_OF_SQL}`).all('c', 1, 1) as Array<{ detail: string }>
    ).map((r) => r.detail);
  }

  /**
   * The history search (contract 14): newest first, before a pending_id when given, filtered in SQL through
   * indexes (search.ts). Bounded like `history`.
   */
  search(filter: HistorySearch, limit: number, before?: string, maxChars = HISTORY_MAX_CHARS): Command[] {
    let beforeSeq: number | undefined;
    if (before !== undefined) {
      const seq = this.#stmts.seqOf.get(before) as { seq: number } | undefined;
      if (seq === undefined) return [];
      beforeSeq = seq.seq;
    }
    // A text term: every command committed before this search in the text index first; when the index cannot
    // be written (a full disk), the query reads the queued rows' own text instead (search.ts). A search
    // without one reads no index and writes nothing (a policy_test replay's pages: bench row 11).
    let queued = false;
    if (searchTerms(filter).some((t) => t.kind === 'text')) {
      try {
        this.searchIndex.catchUp();
      } catch {
        queued = true;
      }
    }
    const { sql, params } = searchQuery(filter, beforeSeq, queued);
    const out: Command[] = [];
    let chars = 0;
    for (const row of this.#db.prepare(sql).iterate(...params, limit) as Iterable<Body>) {
      if (out.length > 0 && chars + row.body.length > maxChars) break;
      chars += row.body.length;
      out.push(JSON.parse(row.body) as Command);
    }
    return out;
  }

  /** The query plan of the search that runs (EXPLAIN QUERY PLAN), for the test that indexes serve it. */
  searchPlan(filter: HistorySearch): string[] {
    const { sql, params } = searchQuery(filter);
    return (
      this.#db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params, 10) as Array<{ detail: string }>
    ).map((r) => r.detail);
  }

  counts(): Partial<Record<State, number>> {
    const out: Partial<Record<State, number>> = {};
    for (const row of this.#stmts.counts.all() as Array<{ state: State; n: number }>) out[row.state] = row.n;
    return out;
  }
}
