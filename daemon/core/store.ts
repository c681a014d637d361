/**
 * SQLite (better-sqlite3, WAL) in `<data-dir>/broker.db`: commands, the append-only audit log, the MCP
 * clients' token hashes and the owners' token hashes (contract 9). Never holds a session UUID or a token
 * (contract 1.2, rule 4).
 *
 * Each command row keeps its whole record as JSON plus the columns we query by. The broker's changes of one
 * turn are one transaction (commit.ts): each row and its audit entry commit together or not at all.
 * `synchronous = FULL` so a committed `running` survives even the machine losing power before the child is
 * spawned (rule 3).
 */
import Database from 'better-sqlite3';
import type { Grant } from './grants.js';
import type { Actor, Command, State } from './lifecycle.js';

export interface AuditEntry {
  at: string;
  actor: Actor;
  action: string;
  command_id?: string;
  version?: number;
  detail?: Record<string, unknown>;
}

export interface StoredAudit extends AuditEntry {
  seq: number;
}

const FINAL_STATES = "('succeeded','denied','failed','unknown')";
/**
 * The non-final states, spelled exactly as the partial index `commands_active` is, so `active()` reads
 * that index instead of scanning the whole history: with 100,000 finished commands a restart went from a
 * full-table scan (~80 ms warm, far more cold) to ~3 ms (bench row 5, docs/performance.md).
 */
const ACTIVE_STATES = "('awaiting_review','approved','running')";

/**
 * Stored records (characters of JSON) one `history` answer may parse: ~50 ms of the event loop, against
 * ~3 s for 500 records of a megabyte each (issue 19 finding 3).
 */
export const HISTORY_MAX_CHARS = 64 * 1024 * 1024;

/** One client's tasks, newest first, before a seq (commands_client_tasks; Store.tasksOf). */
const TASKS_OF_SQL =
  'SELECT body FROM commands WHERE client = ? AND task IS NOT NULL AND seq < ? ORDER BY seq DESC LIMIT ?';

/** A command row as the retention pass first sees it: no record parsed. */
export interface RetentionRow {
  seq: number;
  id: string;
  state: State;
  created_at: string;
  /** length(body): the record's size in characters. */
  chars: number;
}

/** Schema versions, applied in order to an empty or older file (PRAGMA user_version). */
const MIGRATIONS: readonly string[] = [
  `CREATE TABLE commands (
     seq INTEGER PRIMARY KEY AUTOINCREMENT,
     id TEXT NOT NULL UNIQUE,
     client TEXT NOT NULL,
     request_id TEXT,
     state TEXT NOT NULL,
     version INTEGER NOT NULL,
     created_at TEXT NOT NULL,
     body TEXT NOT NULL
   );
   CREATE UNIQUE INDEX commands_request ON commands(client, request_id) WHERE request_id IS NOT NULL;
   CREATE INDEX commands_active ON commands(state) WHERE state IN ('awaiting_review','approved','running');
   CREATE TABLE audit (
     seq INTEGER PRIMARY KEY AUTOINCREMENT,
     at TEXT NOT NULL,
     actor_kind TEXT NOT NULL,
     actor TEXT NOT NULL,
     action TEXT NOT NULL,
     command_id TEXT,
     version INTEGER,
     detail TEXT
   );
   CREATE INDEX audit_command ON audit(command_id);
   CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
   CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
   CREATE TABLE mcp_clients (
     name TEXT PRIMARY KEY,
     token_hash TEXT NOT NULL UNIQUE,
     created_at TEXT NOT NULL
   );`,
  // Contract 8 (v2): grants, with their whole record as JSON; `seq` keeps creation order (oldest match wins).
  `CREATE TABLE grants (
     seq INTEGER PRIMARY KEY AUTOINCREMENT,
     id TEXT NOT NULL UNIQUE,
     state TEXT NOT NULL,
     body TEXT NOT NULL
   );
   CREATE INDEX grants_live ON grants(state) WHERE state = 'live';`,
  // Contract 9 (v2): named owners. Like mcp_clients, only a SHA-256 of each token is kept; owner `owner`'s
  // row is refreshed at every start from owner.token / OGF_BROKER_OWNER_TOKEN (daemon/tokens.ts).
  `CREATE TABLE owners (
     name TEXT PRIMARY KEY,
     token_hash TEXT NOT NULL UNIQUE,
     created_at TEXT NOT NULL
   );`,
  // Version 4 was the partial index of final commands, reverted (docs/performance.md "Snapshot and
  // growth"); a broker.db already at 4 keeps that harmless index. Nothing to do here.
  'SELECT 1;',
  // Issue 19 finding 3: tasks/list read every client's history and parsed each row to keep the caller's.
  // `task` (1 for a command made as a task, never changed after the insert) and an index of each client's
  // tasks in creation order answer it from that client's rows alone. The index is partial on a column no
  // update touches, so state changes do not maintain it (unlike the reverted one): it costs the insert only.
  `ALTER TABLE commands ADD COLUMN task INTEGER;
   UPDATE commands SET task = 1 WHERE json_extract(body, '$.task') IS NOT NULL;
   CREATE INDEX commands_client_tasks ON commands(client, seq) WHERE task IS NOT NULL;
   CREATE INDEX commands_created ON commands(created_at);`,
];

/**
 * SQLite's page cache per connection, in KiB: SQLite's own default. better-sqlite3 builds SQLite with
 * 16,000 KiB, which a growing broker.db fills over its first ~10,000 commands (~16 MiB of RSS that looked
 * like a leak in bench row 6, docs/performance.md); the daemon's reads and writes touch the newest rows
 * and the B-trees' upper pages, and the OS page cache serves the rest.
 */
export const PAGE_CACHE_KIB = 2000;

export class Store {
  readonly #db: Database.Database;
  readonly #stmts;
  readonly #owner;
  /** `fn()` as one transaction (a savepoint when nested); made once, not per call. */
  readonly #tx: (fn: () => unknown) => unknown;
  #closed = false;

  constructor(path: string) {
    this.#db = new Database(path);
    this.#db.pragma('journal_mode = WAL');
    this.#db.pragma('synchronous = FULL');
    this.#db.pragma('busy_timeout = 5000');
    this.#db.pragma('foreign_keys = ON');
    this.#db.pragma(`cache_size = -${PAGE_CACHE_KIB}`);
    this.#migrate();
    const db = this.#db;
    this.#tx = db.transaction((fn: () => unknown) => fn());
    this.#stmts = {
      insert: db.prepare(
        'INSERT INTO commands (id, client, request_id, state, version, created_at, body, task) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      ),
      update: db.prepare('UPDATE commands SET state = ?, version = ?, body = ? WHERE id = ? AND version = ?'),
      get: db.prepare('SELECT body FROM commands WHERE id = ?'),
      byRequest: db.prepare('SELECT body FROM commands WHERE client = ? AND request_id = ?'),
      active: db.prepare(`SELECT body FROM commands WHERE state IN ${ACTIVE_STATES} ORDER BY seq`),
      recentFinal: db.prepare(
        `SELECT body FROM commands WHERE state IN ${FINAL_STATES} ORDER BY seq DESC LIMIT ?`,
      ),
      history: db.prepare('SELECT body FROM commands ORDER BY seq DESC LIMIT ?'),
      historyBeforeSeq: db.prepare('SELECT body FROM commands WHERE seq < ? ORDER BY seq DESC LIMIT ?'),
      // By commands_created: a time before every row no longer walks the whole table back (issue 19).
      historyBeforeTime: db.prepare(
        'SELECT body FROM commands WHERE created_at < ? ORDER BY created_at DESC, seq DESC LIMIT ?',
      ),
      seqOf: db.prepare('SELECT seq FROM commands WHERE id = ?'),
      taskSeq: db.prepare('SELECT seq FROM commands WHERE id = ? AND client = ? AND task IS NOT NULL'),
      tasksOf: db.prepare(TASKS_OF_SQL),
      retentionScan: db.prepare(
        'SELECT seq, id, state, created_at, length(body) AS chars FROM commands WHERE seq > ? ORDER BY seq LIMIT ?',
      ),
      counts: db.prepare('SELECT state, COUNT(*) AS n FROM commands GROUP BY state'),
      audit: db.prepare(
        'INSERT INTO audit (at, actor_kind, actor, action, command_id, version, detail) VALUES (?, ?, ?, ?, ?, ?, ?)',
      ),
      auditFor: db.prepare('SELECT * FROM audit WHERE command_id = ? ORDER BY seq'),
      auditAll: db.prepare('SELECT * FROM audit WHERE seq > ? ORDER BY seq LIMIT ?'),
      clientByHash: db.prepare('SELECT name FROM mcp_clients WHERE token_hash = ?'),
      clientHash: db.prepare('SELECT token_hash FROM mcp_clients WHERE name = ?'),
      insertGrant: db.prepare('INSERT INTO grants (id, state, body) VALUES (?, ?, ?)'),
      updateGrant: db.prepare('UPDATE grants SET state = ?, body = ? WHERE id = ?'),
      getGrant: db.prepare('SELECT body FROM grants WHERE id = ?'),
      liveGrants: db.prepare("SELECT body FROM grants WHERE state = 'live' ORDER BY seq"),
      recentGrants: db.prepare('SELECT body FROM grants ORDER BY seq DESC LIMIT ?'),
      upsertClient: db.prepare(
        'INSERT INTO mcp_clients (name, token_hash, created_at) VALUES (?, ?, ?) ON CONFLICT(name) DO UPDATE SET token_hash = excluded.token_hash, created_at = excluded.created_at',
      ),
    };
    this.#owner = {
      byHash: db.prepare('SELECT name FROM owners WHERE token_hash = ?'),
      hash: db.prepare('SELECT token_hash FROM owners WHERE name = ?'),
      all: db.prepare('SELECT name, token_hash FROM owners ORDER BY name'),
      upsert: db.prepare(
        'INSERT INTO owners (name, token_hash, created_at) VALUES (?, ?, ?) ON CONFLICT(name) DO UPDATE SET token_hash = excluded.token_hash',
      ),
      dataVersion: db.prepare('PRAGMA data_version').pluck(),
    };
  }

  #migrate(): void {
    const current = this.#db.pragma('user_version', { simple: true }) as number;
    for (let v = current; v < MIGRATIONS.length; v++) {
      this.#db.transaction(() => {
        this.#db.exec(MIGRATIONS[v]!);
        this.#db.pragma(`user_version = ${v + 1}`);
      })();
    }
  }

  #appendAudit(entry: AuditEntry): void {
    this.#stmts.audit.run(
      entry.at,
      entry.actor.kind,
      entry.actor.name,
      entry.action,
      entry.command_id ?? null,
      entry.version ?? null,
      entry.detail === undefined ? null : JSON.stringify(entry.detail),
    );
  }

  /**
   * `fn` atomically: in its own transaction, or as part of the one already open. Inside a batch of the
   * group commit (commit.ts) a write needs no savepoint of its own: if it fails, the whole batch is rolled
   * back. (A savepoint and a new transaction function per write were a quarter of the CPU of writing a
   * change: 25 → 18.5 µs, docs/performance.md "Group commit and the single-submitter path".)
   */
  #atomic(fn: () => void): void {
    if (this.#db.inTransaction) fn();
    else this.#tx(fn);
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
      this.#appendAudit(audit);
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
      this.#appendAudit(audit);
    });
  }

  /** Applies many updates in one transaction (recovery at start). */
  updateMany(changes: ReadonlyArray<{ next: Command; audit: AuditEntry }>): void {
    this.#atomic(() => {
      for (const c of changes) this.update(c.next, c.audit);
    });
  }

  /**
   * Runs `fn` as one transaction: every store call inside commits together or not at all (a grant-approved
   * submit is the command's insert, its approval and the grant's use: contract 8). Nests as a savepoint.
   */
  transaction<T>(fn: () => T): T {
    return this.#tx(fn) as T;
  }

  /** Inserts a new grant, or replaces the stored one with the same id, with its audit entry. */
  putGrant(grant: Grant, audit: AuditEntry): void {
    this.#atomic(() => {
      const body = JSON.stringify(grant);
      if (this.#stmts.updateGrant.run(grant.state, body, grant.id).changes === 0) {
        this.#stmts.insertGrant.run(grant.id, grant.state, body);
      }
      this.#appendAudit(audit);
    });
  }

  getGrant(id: string): Grant | undefined {
    const row = this.#stmts.getGrant.get(id) as { body: string } | undefined;
    return row === undefined ? undefined : (JSON.parse(row.body) as Grant);
  }

  /** Every grant stored as live (some may have passed their expiry), oldest first. */
  liveGrants(): Grant[] {
    return (this.#stmts.liveGrants.all() as Array<{ body: string }>).map((r) => JSON.parse(r.body) as Grant);
  }

  /** The newest `limit` grants in any state, newest first. */
  recentGrants(limit: number): Grant[] {
    return (this.#stmts.recentGrants.all(limit) as Array<{ body: string }>).map(
      (r) => JSON.parse(r.body) as Grant,
    );
  }

  /** Appends an audit entry that changes no command (e.g. a feature-off cue, a token rotation). */
  audit(entry: AuditEntry): void {
    this.#appendAudit(entry);
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
    let rows: Iterable<{ body: string }>;
    if (before === undefined) rows = this.#stmts.history.iterate(limit) as Iterable<{ body: string }>;
    else {
      const seq = this.#stmts.seqOf.get(before) as { seq: number } | undefined;
      rows = (
        seq
          ? this.#stmts.historyBeforeSeq.iterate(seq.seq, limit)
          : this.#stmts.historyBeforeTime.iterate(before, limit)
      ) as Iterable<{ body: string }>;
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
  tasksOf(
    client: string,
    limit: number,
    maxChars: number,
    before?: string,
  ): { commands: Command[]; more: boolean } | undefined {
    let from = Number.MAX_SAFE_INTEGER;
    if (before !== undefined) {
      const row = this.#stmts.taskSeq.get(before, client) as { seq: number } | undefined;
      if (row === undefined) return undefined;
      from = row.seq;
    }
    const commands: Command[] = [];
    let chars = 0;
    // One more row than the page, so `more` is known without a second query.
    for (const row of this.#stmts.tasksOf.iterate(client, from, limit + 1) as Iterable<{ body: string }>) {
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

  /** The query plan of the tasks/list query (EXPLAIN QUERY PLAN), for the test that it uses its index. */
  tasksPlan(): string[] {
    return (
      this.#db.prepare(`EXPLAIN QUERY PLAN ${TASKS_OF_SQL}`).all('c', 1, 1) as Array<{ detail: string }>
    ).map((r) => r.detail);
  }

  counts(): Partial<Record<State, number>> {
    const out: Partial<Record<State, number>> = {};
    for (const row of this.#stmts.counts.all() as Array<{ state: State; n: number }>) out[row.state] = row.n;
    return out;
  }

  auditFor(commandId: string): StoredAudit[] {
    return (this.#stmts.auditFor.all(commandId) as AuditRow[]).map(toAudit);
  }

  auditSince(seq: number, limit = 1000): StoredAudit[] {
    return (this.#stmts.auditAll.all(seq, limit) as AuditRow[]).map(toAudit);
  }

  /** The client name owning a token hash, if any. */
  clientByTokenHash(hash: string): string | undefined {
    return (this.#stmts.clientByHash.get(hash) as { name: string } | undefined)?.name;
  }

  clientTokenHash(name: string): string | undefined {
    return (this.#stmts.clientHash.get(name) as { token_hash: string } | undefined)?.token_hash;
  }

  /** Sets (creates or replaces) a client's token hash; the old hash stops working at once. */
  setClientTokenHash(name: string, hash: string, at: string, actor: Actor): void {
    this.#db.transaction(() => {
      this.#stmts.upsertClient.run(name, hash, at);
      this.#appendAudit({ at, actor, action: 'mcp_token_set', detail: { client: name } });
    })();
  }

  // ---- owners (contract 9) -------------------------------------------------------------------------

  /** The owner a token hash belongs to, if any. */
  ownerByTokenHash(hash: string): string | undefined {
    return (this.#owner.byHash.get(hash) as { name: string } | undefined)?.name;
  }

  /** An owner's current token hash, or undefined when there is no such owner. */
  ownerTokenHash(name: string): string | undefined {
    return (this.#owner.hash.get(name) as { token_hash: string } | undefined)?.token_hash;
  }

  /** Every owner's name and current token hash, by name. */
  owners(): Map<string, string> {
    const rows = this.#owner.all.all() as Array<{ name: string; token_hash: string }>;
    return new Map(rows.map((r) => [r.name, r.token_hash]));
  }

  /**
   * Creates an owner or replaces its token hash, with its audit entry (`owner_created` or
   * `owner_token_rotated`, naming the owner, never the token) in the same transaction.
   */
  setOwnerTokenHash(
    name: string,
    hash: string,
    at: string,
    actor: Actor,
    detail: Record<string, unknown> = {},
  ): void {
    this.#db.transaction(() => {
      const existed = this.#owner.hash.get(name) !== undefined;
      this.#owner.upsert.run(name, hash, at);
      this.#appendAudit({
        at,
        actor,
        action: existed ? 'owner_token_rotated' : 'owner_created',
        detail: { owner: name, ...detail },
      });
    })();
  }

  /**
   * SQLite's `PRAGMA data_version`: changes whenever another connection (another process: `ogf-broker
   * token`) has committed to the file since this connection last looked; our own commits leave it alone.
   * A cheap read of shared memory, so the daemon can poll it to notice a rotation made elsewhere.
   */
  dataVersion(): number {
    return this.#owner.dataVersion.get() as number;
  }

  /** The page cache this connection may fill, in KiB (tests). */
  pageCacheKiB(): number {
    return -(this.#db.pragma('cache_size', { simple: true }) as number);
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#db.close();
  }
}

interface AuditRow {
  seq: number;
  at: string;
  actor_kind: Actor['kind'];
  actor: string;
  action: string;
  command_id: string | null;
  version: number | null;
  detail: string | null;
}

function toAudit(row: AuditRow): StoredAudit {
  const entry: StoredAudit = {
    seq: row.seq,
    at: row.at,
    actor: { kind: row.actor_kind, name: row.actor },
    action: row.action,
  };
  if (row.command_id !== null) entry.command_id = row.command_id;
  if (row.version !== null) entry.version = row.version;
  if (row.detail !== null) entry.detail = JSON.parse(row.detail) as Record<string, unknown>;
  return entry;
}

function parse(row: unknown): Command | undefined {
  return row === undefined ? undefined : (JSON.parse((row as { body: string }).body) as Command);
}

/**
 * How many owners a data dir's broker.db holds, read without writing (doctor, contract 1.1): undefined when
 * there is no broker.db yet or it predates owners (its first start creates owner `owner`).
 */
export function countOwners(path: string): number | undefined {
  let db: Database.Database;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true });
  } catch {
    return undefined;
  }
  try {
    return db.prepare('SELECT COUNT(*) FROM owners').pluck().get() as number;
  } catch {
    return undefined;
  } finally {
    db.close();
  }
}
