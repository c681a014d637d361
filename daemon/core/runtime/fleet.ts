/**
 * Contract 16: this broker among the nodes sharing one database. Each command belongs to the node that
 * received it (`node`); this broker launches, expires and recovers only its own (`own`). Every other
 * node's change reaches it through the store's change feed (LISTEN/NOTIFY, read back by the store) and
 * goes into its views as if committed here (`heard`): owners on this node see every node's commands, an
 * approval made elsewhere of a command of this node is launched here, a final state reaches this node's
 * waiters. A periodic catch-up reads the active commands and live grants again, so a notification that
 * never arrived delays a change, never loses it.
 *
 * The races between nodes (two owners deciding one command, two nodes taking one grant's last use, one
 * request_id on two nodes, (v4) two nodes queueing a client's last PENDING slot) are decided by the
 * database: the loser's batch is refused as a `StaleWrite` (stale-write.ts) and nothing of it is stored. `again`
 * then reads the row as it is now (for a cap: the active commands) and runs each refused call once more,
 * so the loser gets the answer one machine would have given a moment later.
 *
 * On a store of its own (SQLite) every command is this broker's, and nothing here runs.
 */
import type { Logger } from '../../base/index.js';
import { type Command, isFinal, isStaleWrite, type StaleWrite } from '../model/index.js';
import type { StoreChange, StorePorts } from '../ports/index.js';
import type { Views } from './command-views.js';
import type { Expiry } from './expiry.js';
import type { GrantBook } from './grant-book.js';
import type { Launches } from './launches.js';

/** How often the catch-up reads the active commands and live grants (a missed notification waits this). */
export const CATCH_UP_MS = 2000;
/** How often a call refused as stale runs again before its caller gets the refusal. */
const STALE_ATTEMPTS = 8;

export interface FleetDeps {
  store: StorePorts;
  log: Logger;
  /** This node's name (commands it receives carry it). */
  node: string | undefined;
  /** True on a shared database: only this node's commands are its own. */
  shared: boolean;
  views: Views;
  grants: GrantBook;
  expiry: Expiry;
  launches: Launches;
  secrets: Map<string, unknown>;
  /** One committed change to the broker's waiters and listeners. */
  emit(c: Command): void;
  closing(): boolean;
  catchUpMs?: number;
}

export class Fleet {
  readonly #deps: FleetDeps;
  #off: (() => void) | undefined;
  #timer: NodeJS.Timeout | undefined;
  #catching: Promise<void> | undefined;

  constructor(deps: FleetDeps) {
    this.#deps = deps;
  }

  /** Whether this broker launches, expires and recovers `c`: always on a store of its own. */
  own(c: Command): boolean {
    return !this.#deps.shared || c.node === this.#deps.node;
  }

  /** Listens to the store's feed and starts the catch-up (a shared store only). */
  start(): void {
    if (!this.#deps.shared) return;
    this.#off = this.#deps.store.subscribe((change) => this.#changed(change));
    this.#timer = setInterval(() => void this.catchUp(), this.#deps.catchUpMs ?? CATCH_UP_MS);
    this.#timer.unref();
  }

  close(): void {
    this.#off?.();
    this.#off = undefined;
    clearInterval(this.#timer);
  }

  /**
   * Runs `call`; when the database refused its batch as stale, reads the row as it is now and runs it
   * again (a few times, each a little later), so the call is decided on what the database holds.
   */
  async again<T>(call: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await call();
      } catch (e) {
        if (!isStaleWrite(e) || attempt >= STALE_ATTEMPTS || this.#deps.closing()) throw e;
        await this.#refresh(e, attempt);
      }
    }
  }

  /**
   * `names` of `target`, each called through `again`: how the broker hands out its actions, written once in
   * their classes, so none skips the retry on a shared database.
   */
  retrying<T, K extends keyof T>(target: T, names: readonly K[]): Pick<T, K> {
    const out = {} as Pick<T, K>;
    for (const name of names) {
      const method = target[name] as (...args: unknown[]) => Promise<unknown>;
      out[name] = ((...args: unknown[]) => this.again(() => method.apply(target, args))) as T[K];
    }
    return out;
  }

  /** Another node's committed command: into the views; then launched, timers, waiters and listeners. */
  heard(c: Command): void {
    const { views, expiry, launches, secrets } = this.#deps;
    if (!views.heard(c)) return;
    const state = c.phase.state;
    if (state !== 'awaiting_review') expiry.cancel(c.id);
    if (isFinal(c)) secrets.delete(c.id);
    // An approval made on another node of a command of this one: launched here, and only here.
    if (state === 'approved' && this.own(c) && !this.#deps.closing()) launches.schedule(c);
    this.#deps.emit(c);
  }

  /**
   * Reads every active command and live grant again, and each one this broker holds that is no longer
   * among them: whatever a lost notification did not bring is taken now. Never runs twice at once.
   */
  catchUp(): Promise<void> {
    this.#catching ??= this.#catchUp().finally(() => {
      this.#catching = undefined;
    });
    return this.#catching;
  }

  async #catchUp(): Promise<void> {
    const { store, views, grants } = this.#deps;
    try {
      const active = await store.commands.active();
      const ids = new Set(active.map((c) => c.id));
      for (const c of active) this.heard(c);
      const gone = views.shownAll().filter((c) => !ids.has(c.id));
      for (const c of await Promise.all(gone.map((c) => store.commands.get(c.id))))
        if (c !== undefined) this.heard(c);
      const live = await store.grants.live();
      const liveIds = new Set(live.map((g) => g.id));
      for (const g of live) grants.heard(g);
      const ended = grants.live().filter((g) => !liveIds.has(g.id));
      for (const g of await Promise.all(ended.map((g) => store.grants.get(g.id))))
        if (g !== undefined) grants.heard(g);
    } catch (e) {
      // The database out of reach: the next round (or the feed's reload once it is back) catches up.
      this.#deps.log.log('warn', 'catch_up_failed', { error: (e as Error)?.message ?? String(e) });
    }
  }

  #changed(change: StoreChange): void {
    for (const c of change.commands ?? []) this.heard(c);
    for (const g of change.grants ?? []) this.#deps.grants.heard(g);
    // The feed reloaded after a lost connection (no table named): anything may have changed.
    if (change.table === undefined) void this.catchUp();
  }

  /** The refused row as the database holds it now; a request_id taken elsewhere arrives by the feed. */
  async #refresh(e: StaleWrite, attempt: number): Promise<void> {
    const { store, grants } = this.#deps;
    this.#deps.log.log('info', 'stale_write_retried', { table: e.table, attempt });
    try {
      // Contract 16 (v4): another node filled a PENDING cap first. The active commands read again put its
      // commands in the views, so the caps counted in memory refuse what the database would (TooManyPending).
      if (e.table === 'caps') await this.catchUp();
      else if (e.key !== undefined && e.table === 'commands') {
        const c = await store.commands.get(e.key);
        if (c !== undefined) this.heard(c);
      } else if (e.key !== undefined) {
        const g = await store.grants.get(e.key);
        if (g !== undefined) grants.heard(g);
      }
    } catch {
      // Out of reach: the next attempt says so to its caller.
    }
    // A little later each time, and not in step with the other node.
    await new Promise((r) => setTimeout(r, attempt * 10 + Math.random() * 20));
  }
}
