/**
 * Transactions on a pool (contract 16): each `run(fn)` takes one client, BEGIN, lets `fn` issue its port
 * writes (each ONE statement — a row and its audit entry together, a CTE — so a write outside any
 * transaction is atomic alone), awaits them, COMMIT. The writes `fn` issues synchronously are the
 * transaction's (like store/sqlite/transaction.ts: the group commit issues a batch's writes in one turn);
 * node-postgres sends one client's queries in the order they were made, so they run in queue order.
 *
 * Isolation: READ COMMITTED, and every race the contract names is decided by the row a statement writes,
 * which PostgreSQL locks and re-checks against its newest committed version: a command's update names the
 * version it replaces (`WHERE version = n - 1`), a grant's use names the uses it takes from (grants.ts), a
 * request_id is a unique index. A deadlock between two daemons' transactions (40P01), or a serialization
 * failure (40001), runs the whole transaction again on a new client: `fn` issues port writes only, so
 * running it again is safe. A write's effect on the memory the daemon reads synchronously (mirror.ts) is
 * applied only once its transaction committed, in order; a failed one leaves nothing behind.
 */
import type { Pool, PoolClient, QueryResultRow } from 'pg';
import type { Awaitable } from '../../core/index.js';
import { isRetryable, isUnreachable, storeError } from './errors.js';

/** What a write leaves in memory once committed; the check of its rows may throw (the write is refused). */
export type Effect = () => void;

/** How often a transaction runs again after a deadlock or a serialization failure before it gives up. */
export const MAX_ATTEMPTS = 5;

interface Tx {
  client: PoolClient;
  effects: Effect[];
}

export class PgTransactions {
  readonly #pool: Pool;
  /** Set while a transaction's `fn` runs synchronously: its writes are that transaction's. */
  #current: Tx | undefined;
  #retries = 0;

  constructor(pool: Pool) {
    this.#pool = pool;
  }

  /** Transactions run again so far (deadlocks, serialization failures): for tests and the log. */
  get retries(): number {
    return this.#retries;
  }

  /** A read of committed state, on any client of the pool. */
  async read<R extends QueryResultRow>(text: string, values: unknown[] = []): Promise<R[]> {
    try {
      return (await this.#pool.query<R>(text, values)).rows;
    } catch (e) {
      throw storeError(e);
    }
  }

  /**
   * One statement: in the transaction whose `fn` runs now, else alone. `check` sees its rows: it throws to
   * refuse the write (the transaction then fails), or returns the effect to apply once committed.
   */
  write<R extends QueryResultRow>(
    text: string,
    values: unknown[],
    check: (rows: R[]) => Effect | undefined,
  ): Promise<void> {
    const tx = this.#current;
    if (tx !== undefined) {
      return tx.client.query<R>(text, values).then((r) => {
        const effect = check(r.rows);
        if (effect !== undefined) tx.effects.push(effect);
      });
    }
    return this.read<R>(text, values).then((rows) => check(rows)?.());
  }

  /** Runs `fn` as one transaction (see the file's comment); joins the one whose `fn` runs now. */
  run(fn: () => Awaitable<void>): Awaitable<void> {
    if (this.#current !== undefined) return fn();
    return this.#attempt(fn, 1);
  }

  async #attempt(fn: () => Awaitable<void>, attempt: number): Promise<void> {
    let client: PoolClient;
    try {
      client = await this.#pool.connect();
    } catch (e) {
      throw storeError(e);
    }
    const tx: Tx = { client, effects: [] };
    let broken: Error | undefined;
    try {
      const begin = client.query('BEGIN');
      // Awaited below; a failing BEGIN fails the queued writes too, so this rejection is heard there.
      begin.catch(() => {});
      let result: Awaitable<void>;
      this.#current = tx;
      try {
        result = fn();
      } finally {
        this.#current = undefined;
      }
      // Heard below, after BEGIN's answer; a handler now so a write refused meanwhile is not "unhandled".
      Promise.resolve(result).catch(() => {});
      await begin;
      await result;
      await client.query('COMMIT');
    } catch (e) {
      if (isUnreachable(e)) broken = e as Error;
      else await client.query('ROLLBACK').catch((r: Error) => (broken = r));
      if (isRetryable(e) && attempt < MAX_ATTEMPTS) {
        client.release(broken);
        this.#retries++;
        // A short random pause, so the two sides of a deadlock do not meet again at once.
        await new Promise((r) => setTimeout(r, 5 + Math.random() * 20 * attempt));
        return this.#attempt(fn, attempt + 1);
      }
      client.release(broken);
      throw storeError(e);
    }
    client.release();
    for (const effect of tx.effects) effect();
  }
}
