/**
 * broker.db's schema (contract 9) and how a file is opened: WAL, `synchronous = FULL` so a committed
 * `running` survives even the machine losing power before the child is spawned (rule 3), and the
 * migrations applied in order (PRAGMA user_version).
 */
import Database from 'better-sqlite3';
import { ACTIVE_STATES, FINAL_STATES, inList, PASSKEY_ACTIONS, RULE_DECIDED_WHERE } from '../rules/index.js';
import { writeTransaction } from './transaction.js';

/**
 * The searchable text of a command's record `body` (an SQL expression over its JSON): command, client,
 * arguments (their first 4 KiB of JSON), justification, decider, the owner's note and reconciliation notes.
 */
export function searchText(body: string): string {
  return `concat_ws(char(10), json_extract(${body}, '$.command'), json_extract(${body}, '$.client'),
       substr(json_extract(${body}, '$.args'), 1, 4096), json_extract(${body}, '$.justification'),
       json_extract(${body}, '$.phase.decided_by'), json_extract(${body}, '$.phase.owner_note'),
       (SELECT group_concat(json_extract(value, '$.note'), char(10)) FROM json_each(${body}, '$.phase.reconciliations')))`;
}

/** When a change of a row can change its searchable text: its decision, or a reconciliation's note. */
const SEARCH_TEXT_CHANGED = `(old.state = 'awaiting_review' AND new.state <> 'awaiting_review')
       OR (old.state = new.state AND new.state IN ('failed', 'unknown'))`;

/** Schema versions, applied in order to an empty or older file (PRAGMA user_version). */
export const MIGRATIONS: readonly string[] = [
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
   CREATE INDEX commands_active ON commands(state) WHERE state IN ${inList(ACTIVE_STATES)};
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
  // Version 4 was the partial index of final commands, reverted (docs/performance-history.md "Snapshot
  // and growth"); a broker.db already at 4 keeps that harmless index. Nothing to do here.
  'SELECT 1;',
  // Issue 19 finding 3: tasks/list read every client's history and parsed each row to keep the caller's.
  // `task` (1 for a command made as a task, never changed after the insert) and an index of each client's
  // tasks in creation order answer it from that client's rows alone. The index is partial on a column no
  // update touches, so state changes do not maintain it (unlike the reverted one): it costs the insert only.
  `ALTER TABLE commands ADD COLUMN task INTEGER;
   UPDATE commands SET task = 1 WHERE json_extract(body, '$.task') IS NOT NULL;
   CREATE INDEX commands_client_tasks ON commands(client, seq) WHERE task IS NOT NULL;
   CREATE INDEX commands_created ON commands(created_at);`,
  // Contract 14 (v3): the hash chain. `entry` is the canonical JSON of the contract's entry without its
  // hash (the bytes hashed), `hash` its SHA-256. Rows of older versions have neither until the first start
  // of this one chains them (audit.ts chainOlder), which is the one update the trigger lets through: a row
  // without a hash may gain its entry and hash, nothing else; a chained row never changes. Checkpoints are
  // append-only the same way.
  `ALTER TABLE audit ADD COLUMN entry TEXT;
   ALTER TABLE audit ADD COLUMN hash TEXT;
   DROP TRIGGER audit_no_update;
   CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit
     WHEN OLD.hash IS NOT NULL OR NEW.seq IS NOT OLD.seq OR NEW.at IS NOT OLD.at
       OR NEW.actor_kind IS NOT OLD.actor_kind OR NEW.actor IS NOT OLD.actor OR NEW.action IS NOT OLD.action
       OR NEW.command_id IS NOT OLD.command_id OR NEW.version IS NOT OLD.version OR NEW.detail IS NOT OLD.detail
     BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
   CREATE INDEX audit_at ON audit(at);
   CREATE TABLE audit_checkpoints (
     seq INTEGER PRIMARY KEY,
     hash TEXT NOT NULL,
     at TEXT NOT NULL,
     signature TEXT NOT NULL
   );
   CREATE TRIGGER audit_checkpoints_no_update BEFORE UPDATE ON audit_checkpoints BEGIN SELECT RAISE(ABORT, 'checkpoints are append-only'); END;
   CREATE TRIGGER audit_checkpoints_no_delete BEFORE DELETE ON audit_checkpoints BEGIN SELECT RAISE(ABORT, 'checkpoints are append-only'); END;`,
  // Contract 14 (v3): the panel's history search, served by indexes. `commands_search` holds each command's
  // searchable text — command, client, arguments (their first 4 KiB of JSON), justification, decider and
  // notes — under SQLite's trigram tokenizer, so any substring of 3 characters or more is found through
  // the index (case-insensitive). Triggers keep it: at insert, and when the decider or a note can have
  // changed (the decision, a reconciliation), not at every change of state.
  `CREATE VIRTUAL TABLE commands_search USING fts5(text, tokenize = 'trigram');
   INSERT INTO commands_search (rowid, text) SELECT seq, ${searchText('body')} FROM commands;
   CREATE TRIGGER commands_search_insert AFTER INSERT ON commands BEGIN
     INSERT INTO commands_search (rowid, text) VALUES (new.seq, ${searchText('new.body')});
   END;
   CREATE TRIGGER commands_search_update AFTER UPDATE OF body ON commands
     WHEN ${SEARCH_TEXT_CHANGED}
   BEGIN
     UPDATE commands_search SET text = ${searchText('new.body')} WHERE rowid = new.seq;
   END;
   CREATE INDEX commands_state_seq ON commands(state, seq);
   CREATE INDEX commands_client_seq ON commands(client, seq);`,
  // Contract 15 (v3): OAuth for remote AI clients. DCR clients (public: no secret exists), connections (one
  // per consent the owner gave, acting as `client_name`), and their tokens — only as SHA-256 hashes; codes
  // live in memory for their 60 s and never reach this file.
  `CREATE TABLE oauth_clients (
     client_id TEXT PRIMARY KEY,
     client_name TEXT NOT NULL,
     redirect_uris TEXT NOT NULL,
     created_at TEXT NOT NULL
   );
   CREATE INDEX oauth_clients_created ON oauth_clients(created_at);
   CREATE TABLE oauth_connections (
     id TEXT PRIMARY KEY,
     client_name TEXT NOT NULL,
     client_id TEXT NOT NULL,
     client_host TEXT NOT NULL,
     redirect_host TEXT NOT NULL,
     connected_at TEXT NOT NULL,
     last_used_at TEXT NOT NULL,
     revoked_at TEXT
   );
   CREATE TABLE oauth_tokens (
     hash TEXT PRIMARY KEY,
     connection_id TEXT NOT NULL REFERENCES oauth_connections(id),
     kind TEXT NOT NULL,
     state TEXT NOT NULL,
     expires_at TEXT NOT NULL
   );
   CREATE INDEX oauth_tokens_connection ON oauth_tokens(connection_id);`,
  // Contract 13.3 (v3): owners' passkeys, public data only (credential id, COSE public key, relying party,
  // counter). `seq` keeps the order they were added in. IF NOT EXISTS: a test (store-tasks) rewinds
  // user_version to fake an older file, and the lead may reorder migrations on merge.
  `CREATE TABLE IF NOT EXISTS passkeys (
     seq INTEGER PRIMARY KEY AUTOINCREMENT,
     credential_id TEXT NOT NULL UNIQUE,
     owner TEXT NOT NULL,
     public_key TEXT NOT NULL,
     rp_id TEXT NOT NULL,
     counter INTEGER NOT NULL,
     transports TEXT,
     created_at TEXT NOT NULL,
     last_used_at TEXT
   );
   CREATE INDEX IF NOT EXISTS passkeys_owner ON passkeys(owner, seq);`,
  // Contract 13.2 (v3): Web Push subscriptions, per owner; an endpoint belongs to one owner at a time.
  // IF NOT EXISTS: harmless when run again on a file whose user_version was set back (store-tasks.test.ts).
  `CREATE TABLE IF NOT EXISTS push_subscriptions (
     endpoint TEXT PRIMARY KEY,
     owner TEXT NOT NULL,
     body TEXT NOT NULL,
     created_at TEXT NOT NULL
   );
   CREATE INDEX IF NOT EXISTS push_subscriptions_owner ON push_subscriptions(owner);`,
  // Contract 15 (v4): a DCR registration counts toward the daily cap only once the owner allowed it
  // (`completed_at`); the others are removed after 10 minutes (daemon/oauth/registrations.ts). Those with a
  // connection already were allowed. Connections by name: what a name was used for (its inheritance).
  `ALTER TABLE oauth_clients ADD COLUMN completed_at TEXT;
   UPDATE oauth_clients SET completed_at = created_at
     WHERE client_id IN (SELECT client_id FROM oauth_connections);
   CREATE INDEX oauth_clients_completed ON oauth_clients(completed_at);
   CREATE INDEX oauth_connections_name ON oauth_connections(client_name);`,
  // Contract 11 (v4): the Allow… dialog's test against the past reads the newest commands of one command
  // name (commands.ts search). A virtual column read from the body (a command never changes its name), and
  // an index on it in seq order.
  `ALTER TABLE commands ADD COLUMN command TEXT GENERATED ALWAYS AS (json_extract(body, '$.command')) VIRTUAL;
   CREATE INDEX IF NOT EXISTS commands_command_seq ON commands(command, seq);`,
  // Contract 13.3 (v4): a passkey signs only when the chain added it with its public key (core/
  // passkey-ledger.ts). Entries of older versions did not carry the key: the first start of this version
  // takes each passkey the table holds into the chain with an add entry of the daemon's
  // (`taken_at_upgrade`), written here without a hash and chained by chainOlder at this same open
  // (docs/audit.md). The NOT EXISTS keeps a second run (a rewound user_version) from adding them twice. The
  // partial indexes serve the daemon's read of those entries at each passkey approval (passkeys.ts) and of
  // the last `config_loaded` at each start (contract 14 (v4): app/config-loaded.ts).
  `CREATE INDEX IF NOT EXISTS audit_passkeys ON audit(seq)
     WHERE action IN ${inList(PASSKEY_ACTIONS)};
   CREATE INDEX IF NOT EXISTS audit_config_loaded ON audit(seq) WHERE action = 'config_loaded';
   INSERT INTO audit (at, actor_kind, actor, action, detail)
     SELECT strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), 'daemon', 'daemon', 'passkey_added',
       json_object('owner', p.owner, 'credential_id', p.credential_id, 'public_key', p.public_key,
         'rp_id', p.rp_id, 'taken_at_upgrade', json('true'))
     FROM passkeys p
     WHERE NOT EXISTS (SELECT 1 FROM audit a WHERE a.action = 'passkey_added'
       AND json_extract(a.detail, '$.credential_id') = p.credential_id
       AND json_extract(a.detail, '$.public_key') = p.public_key)
     ORDER BY p.seq;`,
  // Contract 12 (v4): a command that ends keeps no preview text (core/model/preview-end.ts); those that ended
  // before this version lose theirs here. Their preview_made audit entries keep the text's SHA-256.
  `UPDATE commands SET body = json_remove(body, '$.preview.diff', '$.preview.text')
     WHERE state IN ${inList(FINAL_STATES)}
       AND (json_extract(body, '$.preview.diff') IS NOT NULL OR json_extract(body, '$.preview.text') IS NOT NULL);`,
  // Contract 19 (v4): a notification's one-time actions, by the SHA-256 of their token (never the token),
  // bound to a command's version, an action, an owner and a channel; spent rows are deleted, expired ones
  // pruned (daemon/actions/desk.ts).
  `CREATE TABLE IF NOT EXISTS actions (
     token_hash TEXT PRIMARY KEY,
     command_id TEXT NOT NULL,
     version INTEGER NOT NULL,
     action TEXT NOT NULL,
     owner TEXT NOT NULL,
     channel TEXT NOT NULL,
     expires_at TEXT NOT NULL
   );
   CREATE INDEX IF NOT EXISTS actions_expires ON actions(expires_at);`,
  // Contract 18 (v4): the owners' rules, their whole record as JSON and `pos` their place in the owners'
  // order; and the audit rows with which a rule decided a request (actor `rule:<id>`), indexed so that the
  // Rules area's counts read only them (store/rules RULE_DECIDED_WHERE). IF NOT EXISTS: safe to run again.
  `CREATE TABLE IF NOT EXISTS owner_rules (
     id TEXT PRIMARY KEY,
     pos INTEGER NOT NULL,
     body TEXT NOT NULL
   );
   CREATE INDEX IF NOT EXISTS owner_rules_pos ON owner_rules(pos);
   CREATE INDEX IF NOT EXISTS audit_rule_decided ON audit(actor) WHERE ${RULE_DECIDED_WHERE};`,
  // Every open asks for the entries not yet chained (audit.ts chainOlder): without this index that read scans
  // the whole record (100,000 entries: most of a restart, bench row 5), with it an empty index. It holds
  // only what an upgrade left unchained, until the same open chains it.
  `CREATE INDEX IF NOT EXISTS audit_unchained ON audit(seq) WHERE hash IS NULL;`,
  // Bench row 4 (issue 41): the text index is written after the commit that makes or decides a command, not
  // in it. Indexing in the submit's transaction was ~0.1 ms and several pages of each durable submission;
  // now the transaction queues the row's seq (one small page), and search-index.ts indexes what is queued
  // in bounded passes in the background and before every search, so a search still finds every command
  // committed before it. What the old triggers indexed stays.
  `CREATE TABLE IF NOT EXISTS commands_search_todo (seq INTEGER PRIMARY KEY);
   DROP TRIGGER IF EXISTS commands_search_insert;
   CREATE TRIGGER commands_search_insert AFTER INSERT ON commands BEGIN
     INSERT OR IGNORE INTO commands_search_todo (seq) VALUES (new.seq);
   END;
   DROP TRIGGER IF EXISTS commands_search_update;
   CREATE TRIGGER commands_search_update AFTER UPDATE OF body ON commands
     WHEN ${SEARCH_TEXT_CHANGED}
   BEGIN
     INSERT OR IGNORE INTO commands_search_todo (seq) VALUES (new.seq);
   END;`,
  // Bench row 4 (issue 41): `commands_active` (state, over the non-final states) answered nothing that
  // `commands_state_seq` (state, seq) does not — the same plan for the active commands' read at each start
  // and for the PENDING counts — and was one page more in every commit that makes or decides a command.
  `DROP INDEX IF EXISTS commands_active;`,
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

/**
 * Each missing migration in a write transaction that reads the version again under the lock: the daemon and
 * a CLI opening a file of an older version at once run each migration once, the second finding it done.
 */
function migrate(db: Db): void {
  const version = () => db.pragma('user_version', { simple: true }) as number;
  while (version() < MIGRATIONS.length) {
    writeTransaction(db, () => {
      const v = version();
      if (v >= MIGRATIONS.length) return;
      db.exec(MIGRATIONS[v]!);
      db.pragma(`user_version = ${v + 1}`);
    });
  }
}
