/**
 * SQLite (better-sqlite3, WAL) in `<data-dir>/broker.db`: commands, the append-only audit log, grants, the
 * MCP clients' and the owners' token hashes (contract 9), the owners' passkeys (contract 13.3), OAuth
 * connections and Web Push subscriptions. Never holds a session UUID or a token (contract 1.2, rule 4). The
 * default implementation of the store ports (core/ports/store.ts); its synchronous methods are for
 * this folder's callers that may block (tests inspecting the file, the `token` command).
 *
 * The broker's changes of one turn are one transaction (core/runtime/group-commit.ts, transaction.ts): each row and its
 * audit entry commit together or not at all.
 */
import type {
  ActionStore,
  Actor,
  AuditEntry,
  AuditSigner,
  AuditStore,
  Awaitable,
  ChainEntry,
  Checkpoint,
  Command,
  CommandStore,
  CommittedReads,
  Grant,
  GrantStore,
  HistorySearch,
  OAuthStore,
  OwnerRuleStore,
  PasskeyStore,
  PushStore,
  RetentionRow,
  State,
  StoreChange,
  StoredAudit,
  StorePorts,
  TasksPage,
  TokenHashStore,
} from '../../core/index.js';
import { AUDIT_PAGE, passkeysForgotten } from '../rules/index.js';
import { SqliteActions } from './actions.js';
import { SqliteAudit } from './audit.js';
import { SqliteCommands } from './commands.js';
import { SqliteGrants } from './grants.js';
import { SqliteOAuth } from './oauth.js';
import { SqliteOwnerRules } from './owner-rules.js';
import { SqlitePasskeys } from './passkeys.js';
import {
  auditPort,
  commandPort,
  committedReads,
  grantPort,
  oauthPort,
  passkeyPort,
  tokenPort,
} from './ports.js';
import { SqlitePush } from './push.js';
import { type Db, openDatabase } from './schema.js';
import { indexInBackground, SEARCH_INDEX_MS } from './search-index.js';
import { SqliteTokenHashes } from './tokens.js';
import { Transactions } from './transaction.js';

/** How often the change feed asks SQLite whether another process committed (`PRAGMA data_version`). */
export const CHANGE_POLL_MS = 250;

export class Store implements StorePorts {
  readonly #db: Db;
  readonly #tx: Transactions;
  readonly #commands: SqliteCommands;
  readonly #grants: SqliteGrants;
  readonly #audit: SqliteAudit;
  readonly #owners: SqliteTokenHashes;
  readonly #clients: SqliteTokenHashes;
  readonly #oauth: SqliteOAuth;
  readonly #passkeys: SqlitePasskeys;
  readonly #dataVersion;
  readonly #pollMs: number;
  readonly #listeners = new Set<(change: StoreChange) => void>();
  readonly #checkpointListeners = new Set<(checkpoint: Checkpoint) => void>();
  /** The newest checkpoint the listeners heard of. */
  #announced = 0;
  /** `SqliteAudit.signed` when the listeners were last told. */
  #signedSeen = 0;
  #poll: NodeJS.Timeout | undefined;
  #seenVersion = 0;
  #closed = false;
  /** Stops the text index's background passes (search-index.ts). */
  readonly #stopIndexing: () => void;

  readonly commands: CommandStore;
  readonly grants: GrantStore;
  readonly audits: AuditStore;
  readonly ownerTokens: TokenHashStore;
  readonly clientTokens: TokenHashStore;
  readonly oauth: OAuthStore;
  readonly passkeys: PasskeyStore;
  readonly push: PushStore;
  readonly actions: ActionStore;
  readonly ownerRules: OwnerRuleStore;
  readonly committedReads: CommittedReads;

  /**
   * Opens (creating and migrating) broker.db; `pollMs` paces the change feed; `signer` signs the audit
   * checkpoints (contract 14: the daemon's; other processes, such as `ogf-broker token`, sign none).
   * `node`: the daemon's node name; grants stored before grants named their node take it (contract 16 v4).
   * `searchIndexMs`: how often the text index looks for queued rows (0: only before a search).
   */
  constructor(
    path: string,
    opts: { pollMs?: number; signer?: AuditSigner; node?: string; searchIndexMs?: number } = {},
  ) {
    const db = openDatabase(path);
    this.#db = db;
    this.#pollMs = opts.pollMs ?? CHANGE_POLL_MS;
    this.#tx = new Transactions(db, () => this.#announceCheckpoints());
    const atomic = (fn: () => void) => this.#tx.atomic(fn);
    this.#audit = new SqliteAudit(db, opts.signer);
    // The first start of the version with the chain chains what older versions wrote (docs/audit.md).
    this.#audit.chainOlder();
    this.#commands = new SqliteCommands(db, this.#audit, atomic);
    this.#grants = new SqliteGrants(db, this.#audit, atomic);
    if (opts.node !== undefined) this.#grants.adopt(opts.node);
    this.#owners = new SqliteTokenHashes(db, 'owners', this.#audit);
    this.#clients = new SqliteTokenHashes(db, 'mcp_clients', this.#audit);
    this.#dataVersion = db.prepare('PRAGMA data_version').pluck();
    // A port write outside a transaction commits on its own: announce what it signed, if anything.
    const run = <T>(call: () => T) =>
      this.#tx.gate(() => {
        const r = call();
        this.#announceCheckpoints();
        return r;
      });
    this.commands = commandPort(this.#commands, run);
    this.#stopIndexing = indexInBackground(
      this.#commands.searchIndex,
      (call) => this.#tx.gate(call),
      opts.searchIndexMs ?? SEARCH_INDEX_MS,
    );
    this.grants = grantPort(this.#grants, run);
    this.audits = auditPort(this.#audit, run, (listener) => {
      if (this.#checkpointListeners.size === 0) this.#announced = this.#audit.lastCheckpointSeq();
      this.#checkpointListeners.add(listener);
      return () => this.#checkpointListeners.delete(listener);
    });
    this.ownerTokens = tokenPort(this.#owners, run);
    this.clientTokens = tokenPort(this.#clients, run);
    this.#oauth = new SqliteOAuth(db, this.#audit, atomic);
    this.oauth = oauthPort(this.#oauth, run);
    this.#passkeys = new SqlitePasskeys(db, this.#audit, atomic);
    this.passkeys = passkeyPort(this.#passkeys, run);
    this.committedReads = committedReads(this.#commands, this.#grants);
    const push = new SqlitePush(db, this.#audit);
    this.push = {
      put: (sub, audit) => run(() => push.put(sub, audit)),
      remove: (endpoint, audit) => run(() => push.remove(endpoint, audit)),
      all: () => run(() => push.all()),
    };
    const actions = new SqliteActions(db);
    this.actions = {
      put: (rows) => run(() => actions.put(rows)),
      find: (hash) => run(() => actions.find(hash)),
      spend: (hash) => run(() => actions.spend(hash)),
      prune: (now) => run(() => actions.prune(now)),
    };
    const rules = new SqliteOwnerRules(db, this.#audit);
    this.ownerRules = {
      all: () => run(() => rules.all()),
      add: (rule, position, audit) => run(() => rules.add(rule, position, audit)),
      update: (rule, audit) => run(() => rules.update(rule, audit)),
      remove: (id, audit) => run(() => rules.remove(id, audit)),
      decided: () => run(() => rules.decided()),
    };
  }

  /**
   * Runs `fn` as one transaction: every store call inside commits together or not at all (a grant-approved
   * submit is the command's insert, its approval and the grant's use: contract 8). Joins one already open.
   */
  transaction(fn: () => Awaitable<void>): Awaitable<void> {
    return this.#tx.run(fn);
  }

  /**
   * The change feed: `listener` hears when another connection (another process: `ogf-broker token`) has
   * committed to the file; our own commits leave `PRAGMA data_version` alone. A cheap read of shared
   * memory, polled every `pollMs` while someone listens.
   */
  subscribe(listener: (change: StoreChange) => void): () => void {
    if (this.#listeners.size === 0) {
      this.#seenVersion = this.dataVersion();
      this.#poll = setInterval(() => this.#check(), this.#pollMs);
      this.#poll.unref();
    }
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
      if (this.#listeners.size === 0) clearInterval(this.#poll);
    };
  }

  /** After a commit: the checkpoints it made, to their listeners, in order (read back: only committed ones). */
  #announceCheckpoints(): void {
    if (this.#checkpointListeners.size === 0 || this.#db.inTransaction || this.#closed) return;
    if (this.#audit.signed === this.#signedSeen) return;
    this.#signedSeen = this.#audit.signed;
    for (const cp of this.#audit.checkpointsAfter(this.#announced)) {
      this.#announced = cp.seq;
      for (const l of [...this.#checkpointListeners]) {
        try {
          l(cp);
        } catch {
          // A listener's failure is its own (the notifier logs its own); the commit stands.
        }
      }
    }
  }

  #check(): void {
    if (this.#closed) return;
    let v: number;
    try {
      v = this.dataVersion();
    } catch {
      // The file cannot be read now (a full or failing disk): listeners re-read, and tell their own error.
      v = Number.NaN;
    }
    if (v === this.#seenVersion) return;
    this.#seenVersion = v;
    for (const l of [...this.#listeners]) l({});
  }

  /** SQLite's `PRAGMA data_version` on this connection (see `subscribe`). */
  private dataVersion(): number {
    return this.#dataVersion.get() as number;
  }

  // ---- synchronous calls (this file's callers that may block; tests) -------------------------------

  insert(command: Command, audit: AuditEntry): void {
    this.#commands.insert(command, audit);
  }

  update(next: Command, audit: AuditEntry): void {
    this.#commands.update(next, audit);
  }

  updateMany(changes: ReadonlyArray<{ next: Command; audit: AuditEntry }>): void {
    this.#commands.updateMany(changes);
  }

  get(id: string): Command | undefined {
    return this.#commands.get(id);
  }

  byRequest(client: string, requestId: string): Command | undefined {
    return this.#commands.byRequest(client, requestId);
  }

  active(): Command[] {
    return this.#commands.active();
  }

  recentFinal(limit: number): Command[] {
    return this.#commands.recentFinal(limit);
  }

  history(limit: number, before?: string, maxChars?: number): Command[] {
    return this.#commands.history(limit, before, maxChars);
  }

  search(filter: HistorySearch, limit: number, before?: string): Command[] {
    return this.#commands.search(filter, limit, before);
  }

  searchPlan(filter: HistorySearch): string[] {
    return this.#commands.searchPlan(filter);
  }

  tasksOf(client: string, limit: number, maxChars: number, before?: string): TasksPage | undefined {
    return this.#commands.tasksOf(client, limit, maxChars, before);
  }

  retentionScan(afterSeq: number, limit: number): RetentionRow[] {
    return this.#commands.retentionScan(afterSeq, limit);
  }

  tasksPlan(): string[] {
    return this.#commands.tasksPlan();
  }

  historyPlan(): string[] {
    return this.#commands.historyPlan();
  }

  counts(): Partial<Record<State, number>> {
    return this.#commands.counts();
  }

  putGrant(grant: Grant, audit: AuditEntry): void {
    this.#grants.put(grant, audit);
  }

  getGrant(id: string): Grant | undefined {
    return this.#grants.get(id);
  }

  liveGrants(): Grant[] {
    return this.#grants.live();
  }

  recentGrants(limit: number): Grant[] {
    return this.#grants.recent(limit);
  }

  audit(entry: AuditEntry): void {
    this.#audit.append(entry);
    this.#announceCheckpoints();
  }

  auditFor(commandId: string): StoredAudit[] {
    return this.#audit.forCommand(commandId);
  }

  auditSince(seq: number, limit = AUDIT_PAGE): StoredAudit[] {
    return this.#audit.since(seq, limit);
  }

  /** A checkpoint at the tail now, when there are new entries and a signer (contract 14). */
  checkpoint(at: string): Checkpoint | undefined {
    const cp = this.#audit.checkpoint(at);
    this.#announceCheckpoints();
    return cp;
  }

  /** The chained entries of these commands, oldest first (contract 14). */
  chainFor(commandIds: readonly string[]): ChainEntry[] {
    return this.#audit.chainFor(commandIds);
  }

  clientByTokenHash(hash: string): string | undefined {
    return this.#clients.byTokenHash(hash);
  }

  clientTokenHash(name: string): string | undefined {
    return this.#clients.tokenHash(name);
  }

  setClientTokenHash(name: string, hash: string, at: string, actor: Actor): void {
    this.#clients.set(name, hash, at, actor);
  }

  /** Client names of live OAuth connections (contract 15). */
  oauthClientNames(): Set<string> {
    return this.#oauth.liveNames();
  }

  ownerByTokenHash(hash: string): string | undefined {
    return this.#owners.byTokenHash(hash);
  }

  ownerTokenHash(name: string): string | undefined {
    return this.#owners.tokenHash(name);
  }

  owners(): Map<string, string> {
    return this.#owners.all();
  }

  setOwnerTokenHash(
    name: string,
    hash: string,
    at: string,
    actor: Actor,
    detail?: Record<string, unknown>,
  ): void {
    this.#owners.set(name, hash, at, actor, detail);
  }

  /** Removes every passkey of `owner` (contract 13.3 recovery: `token owner --rotate`); returns how many. */
  forgetPasskeys(owner: string, at: string, actor: Actor): number {
    return this.#passkeys.removeAll(owner, passkeysForgotten(owner, at, actor));
  }

  /** The page cache this connection may fill, in KiB (tests). */
  pageCacheKiB(): number {
    return -(this.#db.pragma('cache_size', { simple: true }) as number);
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#stopIndexing();
    clearInterval(this.#poll);
    this.#listeners.clear();
    this.#db.close();
  }
}
