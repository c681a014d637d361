/**
 * The append-only audit log in broker.db (triggers refuse UPDATE and DELETE of a chained row: schema.ts),
 * hash-chained (contract 14, core/model/audit-chain.ts). Each row keeps the daemon's own columns (at, actor,
 * action, command_id, version, detail: what `ogf-broker` and its tests read) and the chain: `entry`, the
 * canonical JSON of the contract's entry without its hash, exactly the bytes hashed, and `hash`.
 *
 * The chain is computed in commit order inside the append: the group commit (core/runtime/group-commit.ts) issues a
 * batch's writes in queue order in one transaction, and each append reads the tail it extends from that
 * same transaction. The tail is read, not kept in memory: another process (`ogf-broker token`) may have
 * appended since, and a rolled-back batch leaves nothing behind to forget (an indexed read of the last row
 * costs about a microsecond). Two writers can never fork the chain: SQLite lets one write at a time, and a
 * transaction whose read snapshot went stale cannot write (SQLITE_BUSY_SNAPSHOT).
 */

import {
  type AuditEntry,
  type AuditSigner,
  type ChainEntry,
  type Checkpoint,
  chainEntry,
  checkpointPayload,
  GENESIS_HASH,
  type StoredAudit,
  sealEntry,
} from '../../core/index.js';
import { type AuditRow, toAudit, toChain } from '../rows/index.js';
import { AUDIT_PAGE, CHECKPOINT_EVERY } from '../rules/index.js';
import type { Db } from './schema.js';
import { writeTransaction } from './transaction.js';

/** Appends and reads audit entries, synchronously, on one connection. */
export class SqliteAudit {
  readonly #db: Db;
  readonly #signer: AuditSigner | undefined;
  readonly #stmts;
  /**
   * How many checkpoints this connection has signed (committed or not): the store reads the table for new
   * ones after a commit only when this moved (a read per commit was ~1 % of a submission's CPU, bench row 4).
   */
  signed = 0;

  constructor(db: Db, signer?: AuditSigner) {
    this.#db = db;
    this.#signer = signer;
    this.#stmts = {
      addCheckpoint: db.prepare(
        'INSERT INTO audit_checkpoints (seq, hash, at, signature) VALUES (?, ?, ?, ?)',
      ),
      lastCheckpoint: db.prepare('SELECT MAX(seq) FROM audit_checkpoints').pluck(),
      checkpointsAfter: db.prepare(
        'SELECT seq, hash, at, signature FROM audit_checkpoints WHERE seq > ? ORDER BY seq',
      ),
      append: db.prepare(
        'INSERT INTO audit (seq, at, actor_kind, actor, action, command_id, version, detail, entry, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      ),
      tail: db.prepare('SELECT seq, hash FROM audit ORDER BY seq DESC LIMIT 1'),
      forCommand: db.prepare('SELECT * FROM audit WHERE command_id = ? ORDER BY seq'),
      since: db.prepare('SELECT * FROM audit WHERE seq > ? ORDER BY seq LIMIT ?'),
      lastOf: db.prepare(
        'SELECT * FROM audit WHERE action = ? AND hash IS NOT NULL ORDER BY seq DESC LIMIT 1',
      ),
      chainFor: db.prepare('SELECT entry, hash FROM audit WHERE command_id = ? ORDER BY seq'),
    };
  }

  /** The last entry's seq and hash (0 and 64 zeros before the first). */
  tail(): { seq: number; hash: string } {
    const row = this.#stmts.tail.get() as { seq: number; hash: string | null } | undefined;
    return row === undefined
      ? { seq: 0, hash: GENESIS_HASH }
      : { seq: row.seq, hash: row.hash ?? GENESIS_HASH };
  }

  /**
   * Appends `entry` as the chain's next; the caller provides the transaction when it goes with a row change.
   * Returns the chained entry.
   */
  append(entry: AuditEntry): ChainEntry {
    const tail = this.tail();
    const unsealed = chainEntry(entry, tail.seq + 1, tail.hash);
    const { text, hash } = sealEntry(unsealed);
    this.#stmts.append.run(
      unsealed.seq,
      entry.at,
      entry.actor.kind,
      entry.actor.name,
      entry.action,
      unsealed.command_id ?? null,
      entry.version ?? null,
      entry.detail === undefined ? null : JSON.stringify(entry.detail),
      text,
      hash,
    );
    if (unsealed.seq % CHECKPOINT_EVERY === 0) this.#sign(unsealed.seq, hash, entry.at);
    return { ...unsealed, hash };
  }

  /** A checkpoint at the tail, when entries exist past the last one and a signer is set (the 10-minute one). */
  checkpoint(at: string): Checkpoint | undefined {
    if (this.#signer === undefined) return undefined;
    let made: Checkpoint | undefined;
    const run = () => {
      const tail = this.tail();
      const last = (this.#stmts.lastCheckpoint.get() as number | null) ?? 0;
      if (tail.seq > last) made = this.#sign(tail.seq, tail.hash, at);
    };
    if (this.#db.inTransaction) run();
    else writeTransaction(this.#db, run);
    return made;
  }

  /** The checkpoints committed after `seq`, oldest first. */
  checkpointsAfter(seq: number): Checkpoint[] {
    return this.#stmts.checkpointsAfter.all(seq) as Checkpoint[];
  }

  /** The newest checkpoint's seq (0 before the first). */
  lastCheckpointSeq(): number {
    return (this.#stmts.lastCheckpoint.get() as number | null) ?? 0;
  }

  #sign(seq: number, hash: string, at: string): Checkpoint | undefined {
    if (this.#signer === undefined) return undefined;
    const signature = this.#signer.sign(checkpointPayload({ seq, hash, at }));
    this.#stmts.addCheckpoint.run(seq, hash, at, signature);
    this.signed++;
    return { seq, hash, at, signature };
  }

  /**
   * Chains the rows an older version wrote (no hash yet), in seq order after the chained ones, in one
   * transaction: the first start of this version (docs/audit.md). Returns how many it chained.
   */
  chainOlder(): number {
    const unchained = this.#db.prepare('SELECT * FROM audit WHERE hash IS NULL ORDER BY seq');
    const set = this.#db.prepare('UPDATE audit SET entry = ?, hash = ? WHERE seq = ?');
    const before = this.#db.prepare(
      'SELECT hash FROM audit WHERE seq < ? AND hash IS NOT NULL ORDER BY seq DESC LIMIT 1',
    );
    // Read in the transaction that writes: no entry may be appended between them (the lock is held).
    return writeTransaction(this.#db, () => {
      const rows = unchained.all() as AuditRow[];
      if (rows.length === 0) return 0;
      let prev = (before.get(rows[0]!.seq) as { hash: string } | undefined)?.hash ?? GENESIS_HASH;
      for (const row of rows) {
        const { text, hash } = sealEntry(chainEntry(toAudit(row), row.seq, prev));
        set.run(text, hash, row.seq);
        prev = hash;
      }
      // The older record is sealed at once, not 10 minutes later.
      this.checkpoint(rows.at(-1)!.at);
      return rows.length;
    });
  }

  forCommand(commandId: string): StoredAudit[] {
    return (this.#stmts.forCommand.all(commandId) as AuditRow[]).map(toAudit);
  }

  since(seq: number, limit = AUDIT_PAGE): StoredAudit[] {
    return (this.#stmts.since.all(seq, limit) as AuditRow[]).map(toAudit);
  }

  /** The newest chained entry of `action`, if any. */
  lastOf(action: string): StoredAudit | undefined {
    const row = this.#stmts.lastOf.get(action) as AuditRow | undefined;
    return row === undefined ? undefined : toAudit(row);
  }

  /** The chained entries of these commands, oldest first (the `audit` owner frame, the panel's export). */
  chainFor(commandIds: readonly string[]): ChainEntry[] {
    const out: ChainEntry[] = [];
    for (const id of new Set(commandIds)) {
      for (const row of this.#stmts.chainFor.all(id) as Array<{ entry: string; hash: string }>) {
        out.push(toChain(row));
      }
    }
    return out.sort((a, b) => a.seq - b.seq);
  }
}
