/**
 * Transactions on a pool (contract 16): each `run(fn)` takes one client, BEGIN, takes the audit chain's
 * tail (below), lets `fn` issue its port writes (each ONE statement — a row and its audit entry together,
 * a CTE), awaits them, moves the tail, COMMIT. The writes `fn` issues synchronously are the transaction's
 * (like store/sqlite/transaction.ts: the group commit issues a batch's writes in one turn); each is sent
 * on the transaction's client once the one before it has answered (`send`), in the order they were issued,
 * so they run in queue order. (node-postgres 8 queued a query made while its client was busy, with a
 * deprecation warning at the daemon's first batch; version 9 will not queue it.) A write made outside any
 * transaction that carries an audit entry runs as a transaction of its own.
 *
 * The audit chain (contract 14, core/model/audit-chain.ts) is computed in commit order inside the transaction:
 * its first statement locks the one row of `audit_tail` (the last seq and hash), which every writer of the
 * database — every daemon — takes the same way, so transactions that append commit one after another and
 * each chains onto the one committed before it: seq without gaps, one chain, never a fork. Each audited
 * write seals its entry in JavaScript (canonicalJson, as the SQLite store does) from the tail this
 * transaction holds, synchronously, in issue order; a rolled-back transaction leaves the tail as it was.
 * Every 1,000th entry is signed (a checkpoint) in the same transaction, when the store has a signer.
 *
 * Writes that must read before they know whether they audit (a removal that may find nothing) are `steps`:
 * a transaction of their own whose statements run one after another.
 *
 * Isolation: READ COMMITTED, and every race the contract names is decided by the row a statement writes,
 * which PostgreSQL locks and re-checks against its newest committed version: a command's update names the
 * version it replaces (`WHERE version = n - 1`), a grant's use names the uses it takes from (grants.ts), a
 * request_id is a unique index. A deadlock with another session (40P01), or a serialization failure
 * (40001), runs the whole transaction again on a new client: `fn` issues port writes only, so running it
 * again is safe. A write's effect on the memory the daemon reads synchronously (mirror.ts) is applied only
 * once its transaction committed, in order; a failed one leaves nothing behind.
 */
import type { Pool, PoolClient, QueryResult, QueryResultRow } from 'pg';
import {
  type AuditEntry,
  type AuditSigner,
  type Awaitable,
  type Checkpoint,
  chainEntry,
  checkpointPayload,
  sealEntry,
} from '../../core/index.js';
import { CHECKPOINT_EVERY } from '../rules/index.js';
import { auditValues } from './audit-sql.js';
import { isRetryable, isUnreachable, storeError } from './errors.js';

/** What a write leaves in memory once committed; the check of its rows may throw (the write is refused). */
export type Effect = () => void;

/** How often a transaction runs again after a deadlock or a serialization failure before it gives up. */
export const MAX_ATTEMPTS = 5;

interface Tx {
  client: PoolClient;
  effects: Effect[];
  /** The chain's tail as this transaction has moved it; `start` as it was taken. */
  tail: { seq: number; hash: string };
  start: number;
  /** Statements this layer issued itself (checkpoints), awaited before COMMIT. */
  own: Array<Promise<unknown>>;
  signed: Checkpoint[];
  /** Set while the tail waits on a statement's answer (`writeEither`): later audited writes follow it. */
  pending?: Promise<void>;
  /** Settles once the statement sent last has answered (`send`). */
  last: Promise<void>;
}

const settled = (): void => {};

/** One statement on `tx`'s client, sent once the one issued before it has answered (module comment). */
function send<R extends QueryResultRow>(tx: Tx, text: string, values?: unknown[]): Promise<QueryResult<R>> {
  const q = tx.last.then(() => tx.client.query<R>(text, values));
  tx.last = q.then(settled, settled);
  return q;
}

/** The statements of a `steps` transaction, run one after another. */
export interface Steps {
  query<R extends QueryResultRow>(text: string, values?: unknown[]): Promise<{ rows: R[]; rowCount: number }>;
  /** Appends an audit entry as the chain's next. */
  append(entry: AuditEntry): Promise<void>;
  /** The chain's tail this transaction holds. */
  readonly tail: { seq: number; hash: string };
  /** Moves the tail (chaining rows an older version wrote: chain.ts). */
  setTail(seq: number, hash: string): void;
  /** Signs a checkpoint at the tail in this transaction (when there is a signer). */
  sign(at: string): Checkpoint | undefined;
  effect(e: Effect): void;
}

export interface TxOptions {
  signer?: AuditSigner;
  /** Each checkpoint signed, after its commit, in order. */
  onSigned?: (cp: Checkpoint) => void;
}

export class PgTransactions {
  readonly #pool: Pool;
  readonly #opts: TxOptions;
  /** Set while a transaction's `fn` runs synchronously: its writes are that transaction's. */
  #current: Tx | undefined;
  #retries = 0;

  constructor(pool: Pool, opts: TxOptions = {}) {
    this.#pool = pool;
    this.#opts = opts;
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
   * The audit values of `entry` as the chain's next entry of the transaction running now (its ten values,
   * audit-sql.ts AUDIT_SELECT's order), and the tail moved past it. `variants` are other versions of it
   * sealed at the same place (a write whose statement picks one by what it finds: `writeEither`), whose
   * caller sets the tail to the one stored.
   */
  #chain(tx: Tx, entry: AuditEntry, variants: AuditEntry[] = []): unknown[][] {
    const seq = tx.tail.seq + 1;
    const prev = tx.tail.hash;
    const all = [entry, ...variants].map((e) => {
      const unsealed = chainEntry(e, seq, prev);
      const { text, hash } = sealEntry(unsealed);
      return { values: auditValues(unsealed, e, text, hash), hash };
    });
    tx.tail = { seq, hash: all[0]!.hash };
    return all.map((a) => a.values);
  }

  /**
   * Issues an audited statement in chain order: now when the tail is known, else once the write before it
   * has settled it. `holds`: the tail is known only from this statement's answer, so later ones wait for it.
   */
  #ordered(tx: Tx, issue: () => Promise<void>, holds: boolean): Promise<void> {
    const noop = () => {};
    const hold = (gate: Promise<void>) => {
      tx.pending = gate;
      void gate.then(() => {
        if (tx.pending === gate) tx.pending = undefined;
      });
    };
    if (tx.pending === undefined) {
      const q = issue();
      if (holds) hold(q.then(noop, noop));
      return q;
    }
    const issued = tx.pending.then(() => ({ q: issue() }));
    hold(holds ? issued.then(({ q }) => q.then(noop, noop)) : issued.then(noop));
    return issued.then(({ q }) => q);
  }

  /**
   * One statement: in the transaction whose `fn` runs now, else alone (in a transaction of its own when it
   * carries an audit entry: the chain's tail is taken). `audit` appends `$A1…$A10` values (withAudit).
   * `check` sees its rows: it throws to refuse the write (the transaction then fails), or returns the
   * effect to apply once committed.
   */
  write<R extends QueryResultRow>(
    text: string,
    values: unknown[],
    check: (rows: R[]) => Effect | undefined,
    audit?: AuditEntry,
  ): Promise<void> {
    const tx = this.#current;
    if (tx === undefined) {
      if (audit === undefined) return this.read<R>(text, values).then((rows) => check(rows)?.());
      return Promise.resolve(this.run(() => this.write(text, values, check, audit)));
    }
    const issue = (all: unknown[]) =>
      send<R>(tx, text, all).then((r) => {
        const effect = check(r.rows);
        if (effect !== undefined) tx.effects.push(effect);
      });
    if (audit === undefined) return issue(values);
    return this.#ordered(
      tx,
      () => {
        const all = [...values, ...this.#chain(tx, audit)[0]!];
        this.#maybeSign(tx, audit.at);
        return issue(all);
      },
      false,
    );
  }

  /**
   * Like `write`, with its audit entry sealed two ways at one place (`created`, `rotated`: a token's row
   * that did not or did exist): the statement inserts the one that fits what it found, given as
   * `$A1…$A10` and `$B1…$B10`, and returns that entry's hash as `chain_hash`.
   */
  writeEither<R extends QueryResultRow>(
    text: string,
    values: unknown[],
    check: (rows: R[]) => Effect | undefined,
    created: AuditEntry,
    rotated: AuditEntry,
  ): Promise<void> {
    const tx = this.#current;
    if (tx === undefined) {
      return Promise.resolve(this.run(() => this.writeEither(text, values, check, created, rotated)));
    }
    return this.#ordered(
      tx,
      () => {
        const [a, b] = this.#chain(tx, created, [rotated]);
        const seq = tx.tail.seq;
        return send<R & { chain_hash: string }>(tx, text, [...values, ...a!, ...b!]).then((r) => {
          const stored = r.rows[0]?.chain_hash;
          if (stored !== undefined) tx.tail = { seq, hash: stored };
          this.#maybeSign(tx, created.at);
          const effect = check(r.rows);
          if (effect !== undefined) tx.effects.push(effect);
        });
      },
      true,
    );
  }

  #maybeSign(tx: Tx, at: string): Checkpoint | undefined {
    const signer = this.#opts.signer;
    if (signer === undefined || tx.tail.seq % CHECKPOINT_EVERY !== 0) return undefined;
    return this.#sign(tx, at);
  }

  #sign(tx: Tx, at: string): Checkpoint | undefined {
    const signer = this.#opts.signer;
    if (signer === undefined) return undefined;
    const { seq, hash } = tx.tail;
    const cp = { seq, hash, at, signature: signer.sign(checkpointPayload({ seq, hash, at })) };
    tx.own.push(
      send(tx, 'INSERT INTO audit_checkpoints (seq, hash, at, signature) VALUES ($1, $2, $3, $4)', [
        cp.seq,
        cp.hash,
        cp.at,
        cp.signature,
      ]),
    );
    tx.signed.push(cp);
    return cp;
  }

  /** Runs `fn` as one transaction (see the file's comment); joins the one whose `fn` runs now. */
  run(fn: () => Awaitable<void>): Awaitable<void> {
    if (this.#current !== undefined) return fn();
    return this.#attempt((tx) => {
      let result: Awaitable<void>;
      this.#current = tx;
      try {
        result = fn();
      } finally {
        this.#current = undefined;
      }
      return Promise.resolve(result);
    }, 1);
  }

  /** A transaction of its own whose statements run one after another (see the file's comment). */
  steps<T>(fn: (s: Steps) => Promise<T>): Promise<T> {
    if (this.#current !== undefined) {
      return Promise.reject(
        new Error('store: this write reads before it writes and cannot join a transaction'),
      );
    }
    return this.#attempt((tx) => {
      const s: Steps = {
        query: async <R extends QueryResultRow>(text: string, values: unknown[] = []) => {
          const r = await send<R>(tx, text, values);
          return { rows: r.rows, rowCount: r.rowCount ?? 0 };
        },
        append: async (entry) => {
          const values = this.#chain(tx, entry)[0]!;
          this.#maybeSign(tx, entry.at);
          await send(tx, APPEND, values);
        },
        get tail() {
          return tx.tail;
        },
        setTail: (seq, hash) => {
          tx.tail = { seq, hash };
        },
        sign: (at) => this.#sign(tx, at),
        effect: (e) => tx.effects.push(e),
      };
      return fn(s);
    }, 1);
  }

  async #attempt<T>(body: (tx: Tx) => Promise<T>, attempt: number): Promise<T> {
    let client: PoolClient;
    try {
      client = await this.#pool.connect();
    } catch (e) {
      throw storeError(e);
    }
    const tx: Tx = {
      client,
      effects: [],
      tail: { seq: 0, hash: '' },
      start: 0,
      own: [],
      signed: [],
      last: Promise.resolve(),
    };
    let broken: Error | undefined;
    let out: T;
    try {
      await send(tx, 'BEGIN');
      const { rows } = await send<{ seq: number; hash: string }>(
        tx,
        'SELECT seq, hash FROM audit_tail WHERE id = 1 FOR UPDATE',
      );
      tx.tail = { seq: rows[0]!.seq, hash: rows[0]!.hash };
      tx.start = tx.tail.seq;
      const result = body(tx);
      // Heard below; a handler now so a write refused meanwhile is not "unhandled".
      result.catch(() => {});
      out = await result;
      while (tx.pending !== undefined) await tx.pending;
      await Promise.all(tx.own);
      if (tx.tail.seq !== tx.start) {
        await send(tx, 'UPDATE audit_tail SET seq = $1, hash = $2 WHERE id = 1', [tx.tail.seq, tx.tail.hash]);
      }
      await send(tx, 'COMMIT');
    } catch (e) {
      for (const p of tx.own) p.catch(() => {});
      if (isUnreachable(e)) broken = e as Error;
      else await send(tx, 'ROLLBACK').catch((r: Error) => (broken = r));
      if (isRetryable(e) && attempt < MAX_ATTEMPTS) {
        client.release(broken);
        this.#retries++;
        // A short random pause, so the two sides of a deadlock do not meet again at once.
        await new Promise((r) => setTimeout(r, 5 + Math.random() * 20 * attempt));
        return this.#attempt(body, attempt + 1);
      }
      client.release(broken);
      throw storeError(e);
    }
    client.release();
    for (const effect of tx.effects) effect();
    for (const cp of tx.signed) this.#opts.onSigned?.(cp);
    return out;
  }
}

/** An audit entry alone (`$1…$10`). */
const APPEND =
  'INSERT INTO audit (seq, at, actor_kind, actor, action, command_id, version, detail, entry, hash) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)';
