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
 * The queuer changes its memory at once (later requests of the same turn must see it: caps, the twin rule, a
 * grant's uses); if the commit throws, `rollback` puts that memory back as the last commit left it, and
 * every caller of the batch gets the commit's error.
 */

/** One change: its store writes, and what happens once they are durable. */
export interface Change {
  /** The store writes; runs inside the batch's one transaction, in queue order. */
  write(): void;
  /** After the batch committed, in queue order: notify (events, waiters), timers, launches. */
  after?(): void;
}

export interface GroupCommitDeps {
  /** Runs `fn` as one transaction: everything in it commits, or it throws and nothing does. */
  transaction(fn: () => void): void;
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
}

export class GroupCommit {
  readonly #deps: GroupCommitDeps;
  readonly #schedule: (run: () => void) => void;
  #batch: Batch | undefined;
  #flushing = false;
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

  /** Changes queued and not yet committed. */
  get pending(): number {
    return this.#batch?.changes.length ?? 0;
  }

  /** Transactions committed so far (batches, not changes). */
  get commits(): number {
    return this.#commits;
  }

  /** Commits the pending batch now (shutdown). Inside another batch's `after`s it leaves it scheduled. */
  flush(): void {
    if (this.#flushing) return;
    const batch = this.#batch;
    if (batch === undefined) return;
    this.#batch = undefined;
    this.#flushing = true;
    try {
      this.#run(batch);
    } finally {
      this.#flushing = false;
    }
  }

  #pending(): Batch {
    if (this.#batch !== undefined) return this.#batch;
    const batch: Batch = { changes: [], waiters: [] };
    this.#batch = batch;
    this.#schedule(() => {
      if (this.#batch === batch) this.flush();
    });
    return batch;
  }

  #run(batch: Batch): void {
    try {
      this.#deps.transaction(() => {
        for (const c of batch.changes) c.write();
      });
    } catch (e) {
      try {
        this.#deps.rollback(e);
      } catch (r) {
        this.#deps.onError?.(r);
      }
      for (const w of batch.waiters) w.reject(e);
      return;
    }
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
