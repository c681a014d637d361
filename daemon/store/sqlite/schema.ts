/**
 * broker.db's schema (contract 9) and how a file is opened: WAL, `synchronous = FULL` so a committed
 * `running` survives even the machine losing power before the child is spawned (rule 3), and the
 * migrations applied in order (PRAGMA user_version).
 */
import Database from 'better-sqlite3';

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
  // row is refreshed at every start from owner.token / OGF_BROKER_OWNER_TOKEN (daemon/tokens/tokens.ts).
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
  // Contract 13.2 (v3): Web Push subscriptions, per owner; an endpoint belongs to one owner at a time.
  // IF NOT EXISTS: harmless when run again on a file whose user_version was set back (store-tasks.test.ts).
  `CREATE TABLE IF NOT EXISTS push_subscriptions (
     endpoint TEXT PRIMARY KEY,
     owner TEXT NOT NULL,
     body TEXT NOT NULL,
     created_at TEXT NOT NULL
   );
   CREATE INDEX IF NOT EXISTS push_subscriptions_owner ON push_subscriptions(owner);`,
];

/**
 * SQLite's page cache per connection, in KiB: SQLite's own default. better-sqlite3 builds SQLite with
 * 16,000 KiB, which a growing broker.db fills over its first ~10,000 commands (~16 MiB of RSS that looked
 * like a leak in bench row 6, docs/performance.md); the daemon's reads and writes touch the newest rows
 * and the B-trees' upper pages, and the OS page cache serves the rest.
 */
export const PAGE_CACHE_KIB = 2000;

/** The connection type the other files of this folder share. */
export type Db = Database.Database;

/** Opens (creating when absent) broker.db for reading and writing, at the newest schema. */
export function openDatabase(path: string): Db {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('busy_timeout = 5000');
  db.pragma('foreign_keys = ON');
  db.pragma(`cache_size = -${PAGE_CACHE_KIB}`);
  migrate(db);
  return db;
}

/** Opens an existing broker.db without writing (status, doctor); throws when there is none. */
export function openReadOnly(path: string): Db {
  return new Database(path, { readonly: true, fileMustExist: true });
}

function migrate(db: Db): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  for (let v = current; v < MIGRATIONS.length; v++) {
    db.transaction(() => {
      db.exec(MIGRATIONS[v]!);
      db.pragma(`user_version = ${v + 1}`);
    })();
  }
}
