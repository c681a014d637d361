/**
 * The store behind ports (issue 20 item 2): what the core needs of durable storage, as interfaces whose
 * methods return Promises, so a networked store (section 16: PostgreSQL) can stand where SQLite stands
 * today. daemon/store/sqlite/ (the default) and daemon/store/postgres/ implement them; core/ names no database.
 *
 * Writes made inside `transaction(fn)` are that transaction's: the group commit (group-commit.ts) issues a batch's
 * writes in queue order, all within one turn, and awaits them; they commit together or not at all.
 */

import type {
  Actor,
  AuditAction,
  AuditEntry,
  ChainEntry,
  Checkpoint,
  Command,
  Grant,
  State,
} from '../model/index.js';
import type { ActionStore } from './actions.js';
import type { OwnerRuleStore } from './owner-rule-store.js';

export type { AuditAction, AuditEntry } from '../model/index.js';

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

/** The owner's history search (contract 14): every field narrows; `text` is a substring, any case. */
export interface HistorySearch {
  /** In the command, its arguments, client, decider or a note. */
  text?: string;
  state?: State;
  client?: string;
  /** Created at or after / at or before (ISO-8601 UTC). */
  since?: string;
  until?: string;
  /** Contract 16: the node that received it, exactly (commands stored before nodes have none). */
  node?: string;
  /**
   * The command name, exactly: contract 11 (v4) — the `Allow…` dialog's test against the past counts the
   * newest commands of the grant's command, so a flood of other requests cannot push them out.
   */
  command?: string;
}

/**
 * Contract 1.3's caps as a submit checks them (contract 16 v4: over every node's non-final commands).
 */
export interface PendingCaps {
  perClient: number;
  all: number;
}

/** Commands and their audit entries (one row per command, its whole record). */
export interface CommandStore {
  /**
   * Inserts a new command and its audit entry, atomically. `caps` (contract 16 v4): on a shared database,
   * refused (a StaleWrite of `caps`: nothing inserted) when the command's client, or all clients together,
   * already have that many non-final commands on any node. A store of its own ignores it: its one writer
   * counted exactly in memory (core/runtime/command-views.ts).
   */
  insert(command: Command, audit: AuditEntry, caps?: PendingCaps): Promise<void>;
  /** Replaces a command stored at `next.version - 1`, with its audit entry, atomically; else rejects. */
  update(next: Command, audit: AuditEntry): Promise<void>;
  /**
   * Replaces a command stored at `next.version` (the same version: an amend, contract 12), with its audit
   * entry, atomically; else rejects.
   */
  amend(next: Command, audit: AuditEntry): Promise<void>;
  /** Many updates in one transaction (recovery at start). */
  updateMany(changes: ReadonlyArray<{ next: Command; audit: AuditEntry }>): Promise<void>;
  get(id: string): Promise<Command | undefined>;
  /** Every command not yet final, oldest first. */
  active(): Promise<Command[]>;
  /** The newest `limit` final commands, newest first. */
  recentFinal(limit: number): Promise<Command[]>;
  /** Commands newest first, before a pending_id or an ISO time; a bounded parse (issue 19 finding 3). */
  history(limit: number, before?: string, maxChars?: number): Promise<Command[]>;
  /** The history search, newest first, before a pending_id; served by the store's indexes. */
  search(filter: HistorySearch, limit: number, before?: string): Promise<Command[]>;
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
  /** The newest chained entry of `action` (contract 14 (v4): the last `config_loaded`), if any. */
  lastOf(action: AuditAction): Promise<StoredAudit | undefined>;
  /** The chained entries of these commands (contract 14: the `audit` owner frame), oldest first. */
  chainFor(commandIds: readonly string[]): Promise<ChainEntry[]>;
  /**
   * Signs a checkpoint at the chain's tail now, when entries exist past the last one (contract 14: every
   * 10 minutes; the store signs one by itself with every 1,000th entry). Undefined when there is nothing
   * new or no signer.
   */
  checkpoint(at: string): Promise<Checkpoint | undefined>;
  /**
   * Calls `listener` with every checkpoint this process signs, after its commit, in order — the seam the
   * `checkpoint` notification (contract 13.1) subscribes to, so a copy leaves the machine. Returns
   * unsubscribe.
   */
  onCheckpoint(listener: (checkpoint: Checkpoint) => void): () => void;
}

/** Signs checkpoints (contract 14: Ed25519, daemon/audit/keys.ts): base64 signature of the payload. */
export interface AuditSigner {
  sign(payload: string): string;
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

/**
 * What tokens/ needs of the store beside the ports: the hash checks, answered at once (SQLite reads its
 * file; PostgreSQL answers from the memory it keeps current, contract 16), writes that may answer later,
 * and the change feed. A port like the others (issue 37 item 3), which both stores implement.
 */
export interface TokenBook {
  clientByTokenHash(hash: string): string | undefined;
  clientTokenHash(name: string): string | undefined;
  ownerByTokenHash(hash: string): string | undefined;
  ownerTokenHash(name: string): string | undefined;
  owners(): Map<string, string>;
  setClientTokenHash(name: string, hash: string, at: string, actor: Actor): Awaitable<void>;
  setOwnerTokenHash(
    name: string,
    hash: string,
    at: string,
    actor: Actor,
    detail?: Record<string, unknown>,
  ): Awaitable<void>;
  /** Contract 15: the client names of live OAuth connections (a token may not take one). */
  oauthClientNames(): Awaitable<Set<string>>;
  /** Contract 13.3 recovery: removes every passkey of `owner`, audited; resolves how many. */
  forgetPasskeys(owner: string, at: string, actor: Actor): Awaitable<number>;
  subscribe(listener: (change: StoreChange) => void): () => void;
}

/** A client registered by Dynamic Client Registration (contract 15; RFC 7591, public clients only). */
export interface OAuthRegisteredClient {
  client_id: string;
  client_name: string;
  redirect_uris: string[];
  created_at: string;
  /**
   * Contract 15 (v4): when the owner first allowed an authorization of it. Until then it is a stranger's
   * as much as anyone's: it does not count toward the daily cap, and is removed after 10 minutes.
   */
  completed_at?: string;
}

/** An uncompleted DCR registration, as the pruning of them needs it (contract 15 v4). */
export interface OAuthPendingRegistration {
  client_id: string;
  created_at: string;
}

/** How a client name has been used so far (contract 15 v4: what a new connection of that name inherits). */
export interface OAuthNameUse {
  /** Commands of that client name in the history. */
  commands: number;
  /** OAuth connections of that name, past and present. */
  connections: number;
}

/** One OAuth connection (contract 15): a client the owner allowed, acting as `client_name` on /mcp. */
export interface OAuthConnection {
  id: string;
  client_name: string;
  client_id: string;
  /** The host of the client_id (a CIMD URL's host, or the DCR client's redirect host). */
  client_host: string;
  redirect_host: string;
  connected_at: string;
  last_used_at: string;
  /** Set once disconnected (by the owner, by refresh-token reuse); a revoked connection accepts nothing. */
  revoked_at?: string;
}

/** A token of a connection, kept only as its SHA-256 (contract 15: "Only hashes are stored"). */
export interface OAuthTokenRecord {
  hash: string;
  connection_id: string;
  kind: 'access' | 'refresh';
  /** `rotated`: a refresh token already exchanged; presenting it again revokes the connection. */
  state: 'live' | 'rotated' | 'revoked';
  expires_at: string;
}

/** OAuth clients, connections and token hashes (contract 15); every connect and disconnect is audited. */
export interface OAuthStore {
  register(client: OAuthRegisteredClient): Promise<void>;
  registered(clientId: string): Promise<OAuthRegisteredClient | undefined>;
  /** How many registrations were completed at or after `at` (the daily cap; contract 15 v4). */
  registrationsSince(at: string): Promise<number>;
  /** Marks a registration completed (the owner allowed it) unless it was; false when there is none. */
  completeRegistration(clientId: string, at: string): Promise<boolean>;
  /** Registrations not completed yet, oldest first. */
  pendingRegistrations(): Promise<OAuthPendingRegistration[]>;
  /** Removes these registrations, those of them still not completed only. */
  dropRegistrations(clientIds: readonly string[]): Promise<void>;
  /** How `name` has been used: its commands in the history, its OAuth connections past and present. */
  nameUse(name: string): Promise<OAuthNameUse>;
  /** Stores a new connection with its first tokens and its audit entry, atomically. */
  connect(connection: OAuthConnection, tokens: OAuthTokenRecord[], audit: AuditEntry): Promise<void>;
  /** A token by hash with its connection. */
  token(hash: string): Promise<{ token: OAuthTokenRecord; connection: OAuthConnection } | undefined>;
  /**
   * Marks a live refresh token `rotated` and stores its successors, atomically; false (nothing written)
   * when it was no longer live — two refreshes racing with one token: the second is a reuse.
   */
  rotate(oldHash: string, next: OAuthTokenRecord[], at: string): Promise<boolean>;
  /** Ends one token (RFC 7009). */
  revokeToken(hash: string): Promise<void>;
  /** Ends a connection and every token of it, with its audit entry; false when it had already ended. */
  disconnect(connectionId: string, at: string, audit: AuditEntry): Promise<boolean>;
  /** Live connections, oldest first. */
  connections(): Promise<OAuthConnection[]>;
  /** Records a use (last used at). */
  touch(connectionId: string, at: string): Promise<void>;
}

/**
 * An owner's passkey (contract 13.3): a WebAuthn credential registered in the panel. Only public data: the
 * credential id and its COSE public key (both base64url), the relying party it was made for, and the
 * signature counter the authenticator last reported.
 */
export interface StoredPasskey {
  credential_id: string;
  owner: string;
  /** base64url of the COSE public key, as @simplewebauthn/server returns it. */
  public_key: string;
  /** The relying party id it was registered for: `localhost` or public_url's host. */
  rp_id: string;
  counter: number;
  transports?: string[];
  created_at: string;
  last_used_at?: string;
}

/** Owners' passkeys (contract 13.3); each addition and removal with its audit entry, atomically. */
export interface PasskeyStore {
  add(passkey: StoredPasskey, audit: AuditEntry): Promise<void>;
  get(credentialId: string): Promise<StoredPasskey | undefined>;
  /** Every passkey of `owner`, oldest first. */
  list(owner: string): Promise<StoredPasskey[]>;
  /** Removes `owner`'s passkey (never another owner's); false when it had none by that id. */
  remove(owner: string, credentialId: string, audit: AuditEntry): Promise<boolean>;
  /** Records a use: the authenticator's new counter and when. */
  used(credentialId: string, counter: number, at: string): Promise<void>;
  /**
   * Contract 13.3 (v4): the chained audit entries that add or remove passkeys (PASSKEY_KEY_EVENTS), oldest
   * first, as the chain holds them — what core/model/passkey-ledger.ts reads to tell a key the record vouches for
   * from one written straight into the table.
   */
  recorded(): Promise<Array<{ event: string; data: Record<string, unknown> }>>;
}

/** An owner's device that gets Web Push notifications (contract 13.2). */
export interface PushSubscriptionRecord {
  /** The push service URL (https, or http on loopback). */
  endpoint: string;
  /** The browser's P-256 public key and auth secret (base64url), for RFC 8291 encryption. */
  keys: { p256dh: string; auth: string };
  owner: string;
  created_at: string;
  /** The browser that subscribed, as it named itself (shown to the owner, at most 200 characters). */
  user_agent?: string;
}

/** Web Push subscriptions (contract 13.2), each change with its audit entry. */
export interface PushStore {
  /** Adds a subscription, or hands an endpoint already stored to this owner with these keys. */
  put(sub: PushSubscriptionRecord, audit: AuditEntry): Promise<void>;
  /** Removes an endpoint; resolves whether it was there. */
  remove(endpoint: string, audit: AuditEntry): Promise<boolean>;
  /** Every subscription, oldest first. */
  all(): Promise<PushSubscriptionRecord[]>;
}

/** What another writer committed (today: another process, such as `ogf-broker token`). */
export interface StoreChange {
  /** SQLite tells only that something changed; a finer feed (LISTEN/NOTIFY) may name the table. */
  table?: 'owners' | 'mcp_clients' | 'commands' | 'grants' | 'owner_rules';
  /** Contract 16: the commands another writer changed, as read back after its commit (the broker hears them). */
  commands?: Command[];
  /** Contract 16: the grants another writer changed, as read back. */
  grants?: Grant[];
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
  readonly oauth: OAuthStore;
  readonly passkeys: PasskeyStore;
  /** Contract 13.2 (v3): Web Push subscriptions. */
  readonly push: PushStore;
  /** Contract 19 (v4): a notification's one-time actions. */
  readonly actions: ActionStore;
  /** Contract 18 (v4): the owners' rules. */
  readonly ownerRules: OwnerRuleStore;
  readonly committedReads: CommittedReads;
  /**
   * Runs `fn` as one transaction: every port write it issues commits together, or the result throws /
   * rejects and none does. Transactions are serialised. Completes synchronously when `fn` did (SQLite with
   * synchronous writes: the group commit's `flush` at shutdown); callers treat the result as awaitable.
   */
  transaction(fn: () => Awaitable<void>): Awaitable<void>;
  close(): void;
}
