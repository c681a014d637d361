/**
 * The store behind ports (issue 20 item 2): what the core needs of durable storage, as interfaces whose
 * methods return Promises, so a networked store (section 16: PostgreSQL) can stand where SQLite stands
 * today. daemon/store/sqlite/ (the default) and daemon/store/postgres/ implement them; core/ names no database.
 *
 * Writes made inside `transaction(fn)` are that transaction's: the group commit (commit.ts) issues a batch's
 * writes in queue order, all within one turn, and awaits them; they commit together or not at all.
 */
import type { Grant } from './grants.js';
import type { Actor, Command, State } from './lifecycle.js';

/** One audit log entry as written (append-only: contract 9). */
export interface AuditEntry {
  at: string;
  actor: Actor;
  action: string;
  command_id?: string;
  version?: number;
  detail?: Record<string, unknown>;
}

/** An audit entry as stored, with its place in the log. */
export interface StoredAudit extends AuditEntry {
  seq: number;
}

/** A command row as the retention pass first sees it: no record parsed. */
export interface RetentionRow {
  seq: number;
  id: string;
  state: State;
  created_at: string;
  /** The record's size in characters. */
  chars: number;
}

/** One page of a client's tasks, newest first; `more` says whether older tasks remain. */
export interface TasksPage {
  commands: Command[];
  more: boolean;
}

/** A value now or later: what a write inside a transaction, and the transaction itself, may return. */
export type Awaitable<T> = T | PromiseLike<T>;

/** Commands and their audit entries (one row per command, its whole record). */
export interface CommandStore {
  /** Inserts a new command and its audit entry, atomically. */
  insert(command: Command, audit: AuditEntry): Promise<void>;
  /** Replaces a command stored at `next.version - 1`, with its audit entry, atomically; else rejects. */
  update(next: Command, audit: AuditEntry): Promise<void>;
  /** Many updates in one transaction (recovery at start). */
  updateMany(changes: ReadonlyArray<{ next: Command; audit: AuditEntry }>): Promise<void>;
  get(id: string): Promise<Command | undefined>;
  /** Every command not yet final, oldest first. */
  active(): Promise<Command[]>;
  /** The newest `limit` final commands, newest first. */
  recentFinal(limit: number): Promise<Command[]>;
  /** Commands newest first, before a pending_id or an ISO time; a bounded parse (issue 19 finding 3). */
  history(limit: number, before?: string, maxChars?: number): Promise<Command[]>;
  /** One page of `client`'s tasks, older than the task `before`; undefined when `before` is not its task. */
  tasksOf(client: string, limit: number, maxChars: number, before?: string): Promise<TasksPage | undefined>;
  /** Rows after `afterSeq` in creation order, without their records (the retention pass). */
  retentionScan(afterSeq: number, limit: number): Promise<RetentionRow[]>;
  /** How many commands are in each state. */
  counts(): Promise<Partial<Record<State, number>>>;
}

/** Grants (contract 8), each with its audit entry. */
export interface GrantStore {
  /**
   * Inserts a grant or replaces the stored one with the same id, with its audit entry. A grant with uses
   * is replaced only while stored live, by a use (one fewer `uses_left`) or an end; else it rejects
   * (another writer took that use, or ended it, first: uses stay exact across daemons, section 16).
   */
  put(grant: Grant, audit: AuditEntry): Promise<void>;
  get(id: string): Promise<Grant | undefined>;
  /** Every grant stored as live (some may have passed their expiry), oldest first. */
  live(): Promise<Grant[]>;
  /** The newest `limit` grants in any state, newest first. */
  recent(limit: number): Promise<Grant[]>;
}

/** The append-only audit log. */
export interface AuditStore {
  /** Appends an entry that changes no command (a feature-off cue, a refused login). */
  append(entry: AuditEntry): Promise<void>;
  forCommand(commandId: string): Promise<StoredAudit[]>;
  since(seq: number, limit?: number): Promise<StoredAudit[]>;
}

/** Token hashes by name: owners (contract 9) or MCP clients; never a token in the clear (rule 4). */
export interface TokenHashStore {
  /** The name a token hash belongs to, if any. */
  byTokenHash(hash: string): Promise<string | undefined>;
  /** A name's current token hash, if it exists. */
  tokenHash(name: string): Promise<string | undefined>;
  /** Every name and its current hash, by name. */
  all(): Promise<Map<string, string>>;
  /** Creates or replaces a name's hash, with its audit entry, atomically; the old hash stops at once. */
  setTokenHash(
    name: string,
    hash: string,
    at: string,
    actor: Actor,
    detail?: Record<string, unknown>,
  ): Promise<void>;
}

/** What another writer committed (today: another process, such as `ogf-broker token`). */
export interface StoreChange {
  /** SQLite tells only that something changed; a finer feed (LISTEN/NOTIFY) may name the table. */
  table?: 'owners' | 'mcp_clients' | 'commands' | 'grants';
}

/** Committed changes of other writers (SQLite: `PRAGMA data_version`; section 16: LISTEN/NOTIFY). */
export interface ChangeFeed {
  /** Calls `listener` after another writer committed; returns unsubscribe. */
  subscribe(listener: (change: StoreChange) => void): () => void;
}

/**
 * Reads the broker makes within one synchronous step, where awaiting would let another request in between:
 * a submit's request_id lookup sits in the same step as its cap check and insert (contract 1.3); `get` of a
 * final command, the snapshot's finals and recovery at start answer at once. SQLite answers them from its
 * file; a networked store must serve them from memory it keeps with its change feed (section 16).
 */
export interface CommittedReads {
  command(id: string): Command | undefined;
  byRequest(client: string, requestId: string): Command | undefined;
  active(): Command[];
  recentFinal(limit: number): Command[];
  grant(id: string): Grant | undefined;
  liveGrants(): Grant[];
}

/** Every port of the store, as the broker and the daemon hold it. */
export interface StorePorts extends ChangeFeed {
  readonly commands: CommandStore;
  readonly grants: GrantStore;
  readonly audits: AuditStore;
  readonly ownerTokens: TokenHashStore;
  readonly clientTokens: TokenHashStore;
  readonly committedReads: CommittedReads;
  /**
   * Runs `fn` as one transaction: every port write it issues commits together, or the result throws /
   * rejects and none does. Transactions are serialised. Completes synchronously when `fn` did (SQLite with
   * synchronous writes: the group commit's `flush` at shutdown); callers treat the result as awaitable.
   */
  transaction(fn: () => Awaitable<void>): Awaitable<void>;
  close(): void;
}
