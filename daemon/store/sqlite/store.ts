/**
 * SQLite (better-sqlite3, WAL) in `<data-dir>/broker.db`: commands, the append-only audit log, grants, the
 * MCP clients' and the owners' token hashes (contract 9). Never holds a session UUID or a token (contract
 * 1.2, rule 4). The default implementation of the store ports (core/ports.ts); its synchronous methods are for
 * this folder's callers that may block (tests inspecting the file, the `token` command).
 *
 * The broker's changes of one turn are one transaction (core/commit.ts, transaction.ts): each row and its
 * audit entry commit together or not at all.
 */
import type {
  Actor,
  AuditEntry,
  AuditStore,
  Awaitable,
  Command,
  CommandStore,
  CommittedReads,
  Grant,
  GrantStore,
  RetentionRow,
  State,
  StoreChange,
  StoredAudit,
  StorePorts,
  TasksPage,
  TokenHashStore,
} from '../../core/index.js';
import { SqliteAudit } from './audit.js';
import { SqliteCommands } from './commands.js';
import { SqliteGrants } from './grants.js';
import { auditPort, commandPort, committedReads, grantPort, tokenPort } from './ports.js';
import { type Db, openDatabase } from './schema.js';
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
  readonly #dataVersion;
  readonly #pollMs: number;
  readonly #listeners = new Set<(change: StoreChange) => void>();
  #poll: NodeJS.Timeout | undefined;
  #seenVersion = 0;
  #closed = false;

  readonly commands: CommandStore;
  readonly grants: GrantStore;
  readonly audits: AuditStore;
  readonly ownerTokens: TokenHashStore;
  readonly clientTokens: TokenHashStore;
  readonly committedReads: CommittedReads;

  /** Opens (creating and migrating) broker.db; `pollMs` paces the change feed. */
  constructor(path: string, opts: { pollMs?: number } = {}) {
    const db = openDatabase(path);
    this.#db = db;
    this.#pollMs = opts.pollMs ?? CHANGE_POLL_MS;
    this.#tx = new Transactions(db);
    const atomic = (fn: () => void) => this.#tx.atomic(fn);
    this.#audit = new SqliteAudit(db);
    this.#commands = new SqliteCommands(db, this.#audit, atomic);
    this.#grants = new SqliteGrants(db, this.#audit, atomic);
    this.#owners = new SqliteTokenHashes(db, 'owners', this.#audit);
    this.#clients = new SqliteTokenHashes(db, 'mcp_clients', this.#audit);
    this.#dataVersion = db.prepare('PRAGMA data_version').pluck();
    const run = <T>(call: () => T) => this.#tx.gate(call);
    this.commands = commandPort(this.#commands, run);
    this.grants = grantPort(this.#grants, run);
    this.audits = auditPort(this.#audit, run);
    this.ownerTokens = tokenPort(this.#owners, run);
    this.clientTokens = tokenPort(this.#clients, run);
    this.committedReads = committedReads(this.#commands, this.#grants);
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

  tasksOf(client: string, limit: number, maxChars: number, before?: string): TasksPage | undefined {
    return this.#commands.tasksOf(client, limit, maxChars, before);
  }

  retentionScan(afterSeq: number, limit: number): RetentionRow[] {
    return this.#commands.retentionScan(afterSeq, limit);
  }

  tasksPlan(): string[] {
    return this.#commands.tasksPlan();
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
  }

  auditFor(commandId: string): StoredAudit[] {
    return this.#audit.forCommand(commandId);
  }

  auditSince(seq: number, limit = 1000): StoredAudit[] {
    return this.#audit.since(seq, limit);
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

  /** The page cache this connection may fill, in KiB (tests). */
  pageCacheKiB(): number {
    return -(this.#db.pragma('cache_size', { simple: true }) as number);
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#poll);
    this.#listeners.clear();
    this.#db.close();
  }
}
