/**
 * Group commit (architecture.md, example 3: "durability is batched, never skipped" — SQLite's WAL group
 * commit, PostgreSQL's commit_delay). Changes queued during one event-loop turn are written in ONE
 * transaction when the turn ends, so N changes cost one fsync (`synchronous = FULL`) instead of N; then the
 * batch's `after`s run in queue order (events, waiters, timers, launches) and only then are its callers
 * released. Nobody hears of a change before its commit.
 *
 * ```
 *  add(change) ──▶ pending batch ──(end of turn: setImmediate)──▶ BEGIN; write…; COMMIT ─ok─▶ after… ─▶ resolve all
 *                                                                             └─throws─▶ rollback() ─▶ reject all
 * ```
 *
 * The store is a port (store.ts): a change's `write` may return a Promise (a port write). Every write of a
 * batch is issued in queue order within one turn and then awaited together, inside the batch's one
 * transaction; writes that return nothing keep the whole commit synchronous (SQLite, `flush` at shutdown).
 *
 * The queuer changes its memory at once (later requests of the same turn must see it: caps, the twin rule, a
 * grant's uses); if the commit throws, `rollback` puts that memory back as the last commit left it, and
 * every caller of the batch gets the commit's error.
 */

import type { Awaitable } from '../ports/index.js';

/** One change: its store writes, and what happens once they are durable. */
export interface Change {
  /** The store writes; issued inside the batch's one transaction, in queue order, in one turn. */
  write(): Awaitable<void>;
  /** After the batch committed, in queue order: notify (events, waiters), timers, launches. */
  after?(): void;
}

export interface GroupCommitDeps {
  /**
   * Runs `fn` as one transaction: everything in it commits, or it throws (rejects) and nothing does;
   * awaits `fn`'s result when it returns one (store.ts StorePorts.transaction).
   */
  transaction(fn: () => Awaitable<void>): Awaitable<void>;
  /** A batch's transaction committed; runs before its `after`s (forget what only the batch needed). */
  committed?(): void;
  /** A batch's transaction threw and nothing of it is stored: put memory back as the last commit left it. */
  rollback(error: unknown): void;
  /**
   * When a new batch is committed. Default `setImmediate`: after the I/O callbacks of the current turn, so
   * requests that arrived together share a commit (bench row 4 measured it against a microtask).
   */
  schedule?(run: () => void): void;
  /** An `after` (or `rollback`) threw: reported here, and the rest of the batch still runs and settles. */
  onError?(error: unknown): void;
}

interface Batch {
  changes: Change[];
  waiters: Array<{ resolve(): void; reject(e: unknown): void }>;
  /** What the batch waits for before it commits (hold()), each for at most its bound. */
  holds: Array<PromiseLike<unknown>>;
  holdMs: number;
}

export class GroupCommit {
  readonly #deps: GroupCommitDeps;
  readonly #schedule: (run: () => void) => void;
  #batch: Batch | undefined;
  #flushing = false;
  /** A flush was asked for while a batch was committing: the pending batch goes next (ports answering later). */
  #again = false;
  #commits = 0;

  constructor(deps: GroupCommitDeps) {
    this.#deps = deps;
    this.#schedule = deps.schedule ?? ((run) => setImmediate(run));
  }

  /** Queues a change; settles once its batch committed (and its `after`s ran) or failed (its error). */
  add(change: Change): Promise<void> {
    const batch = this.#pending();
    batch.changes.push(change);
    return new Promise((resolve, reject) => batch.waiters.push({ resolve, reject }));
  }

  /**
   * Settles with the batch now pending (rejects if it fails), at once when none is: for an answer that
   * queued nothing but may reflect a change of this turn (a twin, a refusal), so it is not heard first.
   */
  barrier(): Promise<void> {
    const batch = this.#batch;
    if (batch === undefined) return Promise.resolve();
    return new Promise((resolve, reject) => batch.waiters.push({ resolve, reject }));
  }

  /**
   * Lets the pending batch wait for `work` (at most `maxMs`) before it commits, so a change queued as soon
   * as `work` ends joins it: contract 20's launch-time preview, after which `running` shares the approval's
   * one transaction instead of a second fsync. Nothing when no batch is pending or it is already committing
   * (the change then goes in the next batch, as without a hold). Never delays a `flush()`.
   */
  hold(work: PromiseLike<unknown>, maxMs: number): void {
    const batch = this.#batch;
    if (batch === undefined) return;
    batch.holds.push(work);
    batch.holdMs = Math.max(batch.holdMs, maxMs);
  }

  /** Changes queued and not yet committed. */
  get pending(): number {
    return this.#batch?.changes.length ?? 0;
  }

  /** Transactions committed so far (batches, not changes). */
  get commits(): number {
    return this.#commits;
  }

  /**
   * Commits the pending batch now (shutdown); settles (never rejects) once it is done. Inside another
   * batch's commit or `after`s it leaves it scheduled (and runs it next when that one ends).
   */
  flush(): Promise<void> {
    const batch = this.#batch;
    if (batch === undefined) return Promise.resolve();
    const settled = new Promise<void>((resolve) => batch.waiters.push({ resolve, reject: () => resolve() }));
    if (this.#flushing) {
      this.#again = true;
      return settled;
    }
    this.#batch = undefined;
    this.#flushing = true;
    let running: Awaitable<void>;
    try {
      running = this.#run(batch);
    } catch (e) {
      this.#ended();
      throw e;
    }
    if (isThenable(running)) void Promise.resolve(running).finally(() => this.#ended());
    else this.#ended();
    return settled;
  }

  #ended(): void {
    this.#flushing = false;
    if (!this.#again) return;
    this.#again = false;
    const next = this.#batch;
    if (next === undefined) return;
    this.#schedule(() => {
      if (this.#batch === next) void this.flush();
    });
  }

  #pending(): Batch {
    if (this.#batch !== undefined) return this.#batch;
    const batch: Batch = { changes: [], waiters: [], holds: [], holdMs: 0 };
    this.#batch = batch;
    this.#schedule(() => {
      if (this.#batch !== batch) return;
      if (batch.holds.length === 0) {
        void this.flush();
        return;
      }
      // Held: once the work settled (or its bound passed), at the end of that turn, so the changes its
      // callers queue right after it are in.
      let timer: ReturnType<typeof setTimeout> | undefined;
      const bound = new Promise<void>((r) => {
        timer = setTimeout(r, batch.holdMs);
      });
      void Promise.race([Promise.allSettled(batch.holds), bound]).then(() => {
        clearTimeout(timer);
        this.#schedule(() => {
          if (this.#batch === batch) void this.flush();
        });
      });
    });
    return batch;
  }

  /** The batch's transaction, then its `after`s and callers; a Promise when the store answers later. */
  #run(batch: Batch): Awaitable<void> {
    let tx: Awaitable<void>;
    try {
      tx = this.#deps.transaction(() => writeAll(batch.changes));
    } catch (e) {
      this.#failed(batch, e);
      return;
    }
    if (!isThenable(tx)) {
      this.#succeeded(batch);
      return;
    }
    return Promise.resolve(tx).then(
      () => this.#succeeded(batch),
      (e: unknown) => this.#failed(batch, e),
    );
  }

  #failed(batch: Batch, e: unknown): void {
    try {
      this.#deps.rollback(e);
    } catch (r) {
      this.#deps.onError?.(r);
    }
    for (const w of batch.waiters) w.reject(e);
  }

  #succeeded(batch: Batch): void {
    this.#commits++;
    this.#deps.committed?.();
    for (const c of batch.changes) {
      try {
        c.after?.();
      } catch (e) {
        this.#deps.onError?.(e);
      }
    }
    for (const w of batch.waiters) w.resolve();
  }
}

function isThenable(v: unknown): v is PromiseLike<void> {
  return typeof (v as PromiseLike<void> | undefined)?.then === 'function';
}

/**
 * Issues every write in queue order, all in this turn; awaits those that answer later, together (their
 * first failure fails the batch). Nothing to await when every write ran synchronously.
 */
export function writeAll(changes: ReadonlyArray<{ write(): Awaitable<void> }>): Awaitable<void> {
  const later: PromiseLike<void>[] = [];
  try {
    for (const c of changes) {
      const r = c.write();
      if (isThenable(r)) later.push(r);
    }
  } catch (e) {
    // A write threw: the batch fails with it; the ones issued before settle unheard.
    for (const p of later) Promise.resolve(p).catch(() => {});
    throw e;
  }
  if (later.length === 0) return;
  return Promise.all(later).then(() => undefined);
}

/** Results of writes issued one after another (in this turn), as one: a Promise when any answers later. */
export function allOf(...results: Array<Awaitable<void> | undefined>): Awaitable<void> {
  return writeAll(results.map((r) => ({ write: () => r })));
}
