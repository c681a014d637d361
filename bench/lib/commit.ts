/**
 * One durable commit, bare: better-sqlite3 in WAL mode with `synchronous = FULL` (the store's pragmas,
 * daemon/core/store.ts), in the same kind of temp dir as the daemon's data dir (makeDataDir), one small
 * row per transaction. This is what a commit costs on this disk with nothing of ours around it: the unit
 * of row 7's floor.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { makeDataDir, removeDir } from './procs.js';

/** A command body's size in the daemon's database (a few hundred bytes of JSON). */
const BODY = JSON.stringify({ pad: 'x'.repeat(600) });

export class BareCommits {
  readonly #dir = makeDataDir();
  readonly #db: Database.Database;
  readonly #insert: Database.Statement;
  #n = 0;

  constructor() {
    this.#db = new Database(join(this.#dir, 'bare-commit.db'));
    this.#db.pragma('journal_mode = WAL');
    this.#db.pragma('synchronous = FULL');
    this.#db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT NOT NULL)');
    this.#insert = this.#db.prepare('INSERT INTO t (id, body) VALUES (?, ?)');
  }

  /** Times `n` transactions of one insert each; milliseconds per commit. */
  time(n: number): number[] {
    const out: number[] = [];
    const tx = this.#db.transaction(() => this.#insert.run(++this.#n, BODY));
    for (let i = 0; i < n; i++) {
      const t0 = performance.now();
      tx();
      out.push(performance.now() - t0);
    }
    return out;
  }

  close(): void {
    this.#db.close();
    removeDir(this.#dir);
  }
}
