/**
 * One SQLite transaction at a time, BEGIN … COMMIT by hand (better-sqlite3's `transaction()` cannot span
 * an await). The group commit (core/runtime/group-commit.ts) issues every write of a batch in one turn: when they all
 * ran synchronously the transaction commits before `run` returns (one fsync, `synchronous = FULL`); when
 * `fn` returns a Promise (the port writes) it commits once that settles, and until then other port calls
 * wait (`gate`), so nobody reads a change before its commit or writes into this transaction. A failure
 * rolls everything back and is rethrown.
 */
import type { Database as Db, Transaction } from 'better-sqlite3';
import type { Awaitable } from '../../core/index.js';

function isThenable(v: unknown): v is PromiseLike<void> {
  return typeof (v as PromiseLike<void> | undefined)?.then === 'function';
}

/** Explicit transactions on one connection, serialised. */
export class Transactions {
  readonly #db: Db;
  readonly #begin;
  readonly #commit;
  readonly #rollback;
  /** `fn()` as one transaction (a savepoint when nested); made once, not per call. */
  readonly #tx: Transaction<(fn: () => unknown) => unknown>;
  /** Set while a transaction waits for its writes' Promises; settles (never rejects) at its end. */
  #open: Promise<void> | undefined;
  /** True while `fn` runs synchronously: its port calls are the transaction's own. */
  #inFn = false;

  /** Told after every COMMIT this object issues (the store announces checkpoints then). */
  readonly #committed: () => void;

  constructor(db: Db, committed: () => void = () => {}) {
    this.#db = db;
    this.#committed = committed;
    // IMMEDIATE: the write lock from the start, so another process's commit waits for this transaction
    // instead of failing it between its reads and its writes (transaction.test.ts).
    this.#begin = db.prepare('BEGIN IMMEDIATE');
    this.#commit = db.prepare('COMMIT');
    this.#rollback = db.prepare('ROLLBACK');
    this.#tx = db.transaction((fn: () => unknown) => fn());
  }

  /**
   * `fn` atomically: in its own transaction, or as part of the one already open. Inside a batch of the
   * group commit a write needs no savepoint of its own: if it fails, the whole batch is rolled back. (A
   * savepoint and a new transaction function per write were a quarter of the CPU of writing a change:
   * 25 → 18.5 µs, docs/performance-history.md "Group commit and the single-submitter path".)
   */
  atomic(fn: () => void): void {
    if (this.#db.inTransaction) fn();
    else {
      this.#tx.immediate(fn);
      this.#committed();
    }
  }

  /** A port call: now, or once the transaction now awaiting its writes has ended. */
  gate<T>(call: () => T): Promise<T> {
    if (this.#open !== undefined && !this.#inFn) return this.#open.then(() => this.gate(call));
    try {
      return Promise.resolve(call());
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /** Runs `fn` as one transaction (see the file's comment); joins one already open. */
  run(fn: () => Awaitable<void>): Awaitable<void> {
    if (this.#open !== undefined && !this.#inFn) return this.#open.then(() => this.run(fn));
    if (this.#db.inTransaction) return fn();
    this.#begin.run();
    let result: Awaitable<void>;
    this.#inFn = true;
    try {
      result = fn();
    } catch (e) {
      this.#undo();
      throw e;
    } finally {
      this.#inFn = false;
    }
    if (!isThenable(result)) {
      this.#end();
      return;
    }
    const done = Promise.resolve(result).then(
      () => this.#end(),
      (e: unknown) => {
        this.#undo();
        throw e;
      },
    );
    // Registered before any caller's handler, so the gate is open again when they run.
    this.#open = done.then(
      () => {
        this.#open = undefined;
      },
      () => {
        this.#open = undefined;
      },
    );
    return done;
  }

  #end(): void {
    try {
      this.#commit.run();
    } catch (e) {
      this.#undo();
      throw e;
    }
    this.#committed();
  }

  #undo(): void {
    if (this.#db.inTransaction) this.#rollback.run();
  }
}

/** `fn` as one transaction that holds the write lock from its BEGIN (transaction.test.ts), or a savepoint in one already open. */
export function writeTransaction<T>(db: Db, fn: () => T): T {
  return db.transaction(fn).immediate();
}
