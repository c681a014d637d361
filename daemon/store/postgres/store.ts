/**
 * The PostgreSQL store (contract 16): the store ports (core/ports/store.ts) on a `pg` pool, for several daemons
 * sharing one database. Async ports go to the database; the reads the broker makes synchronously
 * (`committedReads`) and the token checks (the same method names as the SQLite Store's, for tokens/) are
 * answered from the mirror (mirror.ts), kept current by this store's commits and by the change feed
 * (feed.ts): another writer's row change is read back and applied before this store's listeners hear of
 * it, so a listener that reads sees it. Each pool connection names this store (`ogf.writer`), so the
 * triggers' notifications of its own commits, already applied, are skipped.
 *
 * `open` connects, migrates, LISTENs and loads the mirror (one REPEATABLE READ snapshot) before it returns.
 * A database out of reach later makes every write (and `transaction`) reject with `Unavailable`
 * (errors.ts) and `available` false; the pool reconnects by itself, the feed too (then the mirror is
 * reloaded whole).
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type {
  ActionStore,
  Actor,
  AuditSigner,
  AuditStore,
  Awaitable,
  Checkpoint,
  CommandStore,
  GrantStore,
  OAuthStore,
  OwnerRuleStore,
  PasskeyStore,
  PushStore,
  StoreChange,
  StorePorts,
  TokenHashStore,
} from '../../core/index.js';
import { passkeysForgotten } from '../rules/index.js';
import { pgActions } from './actions.js';
import { pgAudit } from './audit.js';
import { chainOlder } from './chain.js';
import { pgCommands } from './commands.js';
import { isUnreachable } from './errors.js';
import { Feed, type Notice } from './feed.js';
import { pgGrants } from './grants.js';
import { int8AsNumber } from './int8.js';
import { loadMirror } from './load.js';
import { MIRROR_WINDOW, Mirror } from './mirror.js';
import { adoptUnowned, type LiveNode, liveNodes, type NodeRecord } from './nodes.js';
import { pgOAuth } from './oauth.js';
import { pgOwnerRules } from './owner-rules.js';
import { pgPasskeys } from './passkeys.js';
import { pgPush } from './push.js';
import { readBack } from './readback.js';
import { migrate } from './schema.js';
import { pgTokens } from './tokens.js';
import { PgTransactions } from './transaction.js';

export interface PostgresOptions {
  /** Pool size (default 10). */
  max?: number;
  /** Final commands and ended grants kept in memory (mirror.ts; default 1000). */
  window?: number;
  /** Told when the database is lost or back (the daemon logs it; `status` may show it). */
  onAvailability?: (available: boolean, error?: Error) => void;
  /**
   * Contract 16: the node this daemon is (nodes.ts): its name held while it runs (a second live daemon
   * with it is refused at its start), registered with heartbeats; commands stored before nodes existed
   * are adopted by it. Absent for a process that is no node (`ogf-broker token`).
   */
  node?: NodeRecord;
  /** Signs the audit checkpoints (contract 14: the daemon's key; the `token` command signs none). */
  signer?: AuditSigner;
}

const TABLES = new Set(['commands', 'grants', 'owners', 'mcp_clients', 'owner_rules']);

export class PostgresStore implements StorePorts {
  readonly #pool: pg.Pool;
  readonly #tx: PgTransactions;
  readonly #feed: Feed;
  readonly #writer = randomUUID();
  readonly #listeners = new Set<(change: StoreChange) => void>();
  readonly #onAvailability: PostgresOptions['onAvailability'];
  #mirror: Mirror;
  readonly #window: number;
  /** Keys announced by other writers, read back together at the end of the turn. */
  #announced = new Map<string, Set<string>>();
  #reading: Promise<void> = Promise.resolve();
  /** Set while a reload runs: the writes committed meanwhile, applied again to the new mirror. */
  #replay: Array<(m: Mirror) => void> | undefined;
  #scheduled = false;
  #available = true;
  #closed = false;

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
  readonly #oauth: ReturnType<typeof pgOAuth>;
  readonly #passkeys: ReturnType<typeof pgPasskeys>;
  readonly #checkpointListeners = new Set<(checkpoint: Checkpoint) => void>();

  /** Connects, migrates, listens and loads; see the file's comment. */
  static async open(url: string, opts: PostgresOptions = {}): Promise<PostgresStore> {
    const store = new PostgresStore(url, opts);
    try {
      await store.#withClient(migrate);
      // The first start of the version with the chain chains what older versions wrote (docs/audit.md).
      await chainOlder(store.#tx);
      await store.#feed.start();
      if (opts.node !== undefined) await store.#withClient((c) => adoptUnowned(c, opts.node!.name));
      await store.#reload();
    } catch (e) {
      await store.#shutdown();
      throw e;
    }
    return store;
  }

  private constructor(url: string, opts: PostgresOptions) {
    const config: pg.ClientConfig = {
      connectionString: url,
      application_name: 'ogf-broker',
      // Names this store's sessions, so the feed can tell its own commits (schema.ts triggers).
      options: `-c ogf.writer=${this.#writer}`,
      connectionTimeoutMillis: 5000,
      keepAlive: true,
      types: int8AsNumber,
    };
    this.#pool = new pg.Pool({ ...config, max: opts.max ?? 10, idleTimeoutMillis: 30_000 });
    // An idle client whose connection ends (the server stopped) is dropped by the pool; said once here.
    this.#pool.on('error', (e) => this.#lost(e));
    // A client checked out between two queries when the server goes (a transaction awaiting its writes)
    // emits 'error' with no pool listener on it: unheard, Node would end the daemon. Its next query
    // rejects (the caller hears `Unavailable`), and the pool drops it when released.
    this.#pool.on('connect', (client) => client.on('error', (e) => this.#lost(e)));
    this.#tx = new PgTransactions(this.#pool, {
      ...(opts.signer === undefined ? {} : { signer: opts.signer }),
      onSigned: (cp) => {
        for (const l of [...this.#checkpointListeners]) {
          try {
            l(cp);
          } catch {
            // A listener's failure is its own (the notifier logs its own); the commit stands.
          }
        }
      },
    });
    this.#window = opts.window ?? MIRROR_WINDOW;
    this.#mirror = new Mirror(this.#window);
    this.#onAvailability = opts.onAvailability;
    this.#feed = new Feed({
      // Its own name, so an operator (or a test) can tell the LISTENing session in pg_stat_activity.
      config: { ...config, options: undefined, application_name: 'ogf-broker-feed' },
      notice: (n) => this.#notice(n),
      resync: () => void this.#resync(),
      down: (lost, e) => (lost ? this.#lost(e) : this.#back()),
      ...(opts.node === undefined ? {} : { node: opts.node }),
    });
    const apply = (effect: (m: Mirror) => void) => this.#apply(effect);
    this.commands = pgCommands(this.#tx, apply);
    this.grants = pgGrants(this.#tx, apply);
    this.audits = pgAudit(this.#tx, (listener) => {
      this.#checkpointListeners.add(listener);
      return () => this.#checkpointListeners.delete(listener);
    });
    this.#oauth = pgOAuth(this.#tx);
    this.oauth = this.#oauth;
    this.#passkeys = pgPasskeys(this.#tx);
    this.passkeys = this.#passkeys;
    this.push = pgPush(this.#tx);
    this.actions = pgActions(this.#tx);
    this.ownerRules = pgOwnerRules(this.#tx);
    this.ownerTokens = pgTokens(this.#tx, apply, 'owners');
    this.clientTokens = pgTokens(this.#tx, apply, 'mcp_clients');
  }

  /**
   * Applies a committed write to the mirror in use; while a reload is under way, again to the new one once
   * it is in place (its snapshot may predate this commit). Versions and revs make applying twice harmless.
   */
  #apply(effect: (m: Mirror) => void): void {
    effect(this.#mirror);
    this.#replay?.push(effect);
  }

  /** `fn` on one client of the pool, released after. */
  async #withClient<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await this.#pool.connect();
    try {
      return await fn(client);
    } finally {
      client.release();
    }
  }

  /** Contract 16: the live nodes of this database, by name (`status`). */
  liveNodes(): Promise<LiveNode[]> {
    return this.#withClient(liveNodes);
  }

  get committedReads(): Mirror {
    return this.#mirror;
  }

  /** False while the database is known to be out of reach. */
  get available(): boolean {
    return this.#available;
  }

  /** Transactions run again after a deadlock or serialization failure (tests). */
  get retries(): number {
    return this.#tx.retries;
  }

  transaction(fn: () => Awaitable<void>): Awaitable<void> {
    const r = this.#tx.run(fn);
    if (r instanceof Promise) {
      return r.then(
        () => this.#back(),
        (e: unknown) => {
          if (isUnreachable(e)) this.#lost(e as Error);
          throw e;
        },
      );
    }
    return r;
  }

  subscribe(listener: (change: StoreChange) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  // ---- the token checks, from memory (tokens/: the SQLite Store's method names) -------------------

  clientByTokenHash(hash: string): string | undefined {
    return this.#mirror.tokens.mcp_clients.byHash.get(hash);
  }

  clientTokenHash(name: string): string | undefined {
    return this.#mirror.tokens.mcp_clients.byName.get(name)?.hash;
  }

  ownerByTokenHash(hash: string): string | undefined {
    return this.#mirror.tokens.owners.byHash.get(hash);
  }

  ownerTokenHash(name: string): string | undefined {
    return this.#mirror.tokens.owners.byName.get(name)?.hash;
  }

  owners(): Map<string, string> {
    return this.#mirror.tokens.owners.all();
  }

  setClientTokenHash(name: string, hash: string, at: string, actor: Actor): Promise<void> {
    return this.clientTokens.setTokenHash(name, hash, at, actor);
  }

  setOwnerTokenHash(
    name: string,
    hash: string,
    at: string,
    actor: Actor,
    detail?: Record<string, unknown>,
  ): Promise<void> {
    return this.ownerTokens.setTokenHash(name, hash, at, actor, detail);
  }

  /** Client names of live OAuth connections (contract 15: a token may not take one). */
  oauthClientNames(): Promise<Set<string>> {
    return this.#oauth.liveNames();
  }

  /** Removes every passkey of `owner` (contract 13.3 recovery: `token owner --rotate`); resolves how many. */
  forgetPasskeys(owner: string, at: string, actor: Actor): Promise<number> {
    return this.#passkeys.removeAll(owner, passkeysForgotten(owner, at, actor));
  }

  // ---- the change feed ---------------------------------------------------------------------------

  #notice(n: Notice): void {
    if (n.w === this.#writer || !TABLES.has(n.t)) return;
    const keys = this.#announced.get(n.t) ?? new Set<string>();
    this.#announced.set(n.t, keys);
    keys.add(n.k);
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      const announced = this.#announced;
      this.#announced = new Map();
      this.#reading = this.#reading.then(() => this.#readBack(announced));
    });
  }

  /** Reads announced rows back into the mirror, then tells the listeners which tables changed. */
  async #readBack(announced: Map<string, Set<string>>): Promise<void> {
    if (this.#closed) return;
    let changes: StoreChange[];
    try {
      changes = await readBack(this.#tx, this.#mirror, announced);
    } catch (e) {
      // Out of reach while reading back: the feed's connection goes too, and its return reloads everything.
      if (isUnreachable(e)) this.#lost(e as Error);
      return;
    }
    for (const change of changes) this.#emit(change);
  }

  async #resync(): Promise<void> {
    this.#reading = this.#reading.then(async () => {
      try {
        await this.#reload();
      } catch (e) {
        if (isUnreachable(e)) this.#lost(e as Error);
        return;
      }
      this.#emit({});
    });
    await this.#reading;
  }

  /** Loads a fresh mirror from one consistent snapshot, then puts it in place. */
  async #reload(): Promise<void> {
    const m = new Mirror(this.#window);
    this.#replay = [];
    let client: pg.PoolClient;
    try {
      client = await this.#pool.connect();
    } catch (e) {
      this.#replay = undefined;
      throw e;
    }
    let broken: Error | undefined;
    try {
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      const q = async <R extends pg.QueryResultRow>(text: string, values: unknown[] = []) =>
        (await client.query<R>(text, values)).rows;
      await loadMirror(q, m, this.#window);
      await client.query('COMMIT');
    } catch (e) {
      broken = e as Error;
      this.#replay = undefined;
      throw e;
    } finally {
      client.release(broken);
    }
    for (const effect of this.#replay ?? []) effect(m);
    this.#replay = undefined;
    this.#mirror = m;
  }

  #emit(change: StoreChange): void {
    for (const l of [...this.#listeners]) l(change);
  }

  #lost(e?: Error): void {
    if (!this.#available || this.#closed) return;
    this.#available = false;
    this.#onAvailability?.(false, e);
  }

  #back(): void {
    if (this.#available || this.#closed) return;
    this.#available = true;
    this.#onAvailability?.(true);
  }

  async #shutdown(): Promise<void> {
    this.#closed = true;
    this.#listeners.clear();
    await this.#feed.close();
    await this.#pool.end().catch(() => {});
  }

  /** Stops the feed and closes the pool (in the background; `closed()` settles when done). */
  close(): void {
    if (this.#closed) return;
    this.#done = this.#shutdown();
  }

  #done: Promise<void> = Promise.resolve();

  /** Settles once `close` has closed every connection (tests, the daemon's last step). */
  closed(): Promise<void> {
    return this.#done;
  }
}
