/**
 * Two processes write broker.db: the daemon, and a CLI beside it (`token owner`, `grant`, `audit`…). A
 * transaction that reads before it writes (the audit chain reads its tail; a token its old hash) and began
 * DEFERRED holds no lock until its first write; if the other process commits in between, SQLite cannot
 * upgrade its stale snapshot and fails it at once with SQLITE_BUSY_SNAPSHOT — "database is locked",
 * busy_timeout or not (seen as a flake of test/audit-chain.test.ts: `token owner` beside a running daemon
 * under load). A write transaction must therefore take the write lock when it begins (BEGIN IMMEDIATE):
 * the other process waits for it (busy_timeout) instead of breaking it.
 *
 * The other process here is a real one (node and better-sqlite3, as the CLI opens the file), started while
 * the transaction is open, between its read and its write. This thread waits for it (spawnSync), so the
 * other process's wait is bounded short: it gives up with "database is locked" where, beside the daemon,
 * it would have waited the few milliseconds a transaction takes.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type Db, openDatabase } from './schema.js';
import { Transactions, writeTransaction } from './transaction.js';

const SQLITE = createRequire(import.meta.url).resolve('better-sqlite3');

/** Another process committing a row into `path` (waiting at most `busyMs` for the lock): its exit and error. */
function otherProcessWrites(
  path: string,
  name: string,
  busyMs: number,
): { status: number | null; stderr: string } {
  const script = `
    const Database = require(${JSON.stringify(SQLITE)});
    const db = new Database(${JSON.stringify(path)}, { timeout: ${busyMs} });
    db.prepare("INSERT INTO mcp_clients (name, token_hash, created_at) VALUES (?, ?, 'now')").run(${JSON.stringify(name)}, 'h-' + ${JSON.stringify(name)});
  `;
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
  return { status: r.status, stderr: r.stderr };
}

const clients = (db: Db) =>
  (db.prepare('SELECT name FROM mcp_clients ORDER BY name').pluck().all() as string[]).join(',');

let dirs: string[] = [];
afterEach(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  dirs = [];
});

function freshDb(): { db: Db; path: string } {
  const dir = mkdtempSync(join(tmpdir(), 'ogf-tx-'));
  dirs.push(dir);
  const path = join(dir, 'broker.db');
  return { db: openDatabase(path), path };
}

describe('a write transaction is not broken by another process that writes broker.db while it is open', () => {
  it('the group commit’s transactions (Transactions.run): read, another process tries to commit, write — this one commits', () => {
    const { db, path } = freshDb();
    const tx = new Transactions(db);
    let other: { status: number | null; stderr: string } | undefined;
    tx.run(() => {
      db.prepare('SELECT count(*) FROM mcp_clients').get();
      other = otherProcessWrites(path, 'other', 300);
      db.prepare(
        "INSERT INTO mcp_clients (name, token_hash, created_at) VALUES ('ours', 'h-ours', 'now')",
      ).run();
    });
    expect(clients(db)).toBe('ours');
    // It held the lock from its BEGIN: the other process waited (here, until its bound) and wrote nothing.
    expect(other?.status).toBe(1);
    expect(other?.stderr).toContain('database is locked');
    // Once it has committed, the other process writes as usual.
    expect(otherProcessWrites(path, 'other', 300).status).toBe(0);
    expect(clients(db)).toBe('other,ours');
    db.close();
  });

  it('the CLI’s and the store’s own transactions (writeTransaction): the same', () => {
    const { db, path } = freshDb();
    let other: { status: number | null } | undefined;
    writeTransaction(db, () => {
      db.prepare('SELECT count(*) FROM mcp_clients').get();
      other = otherProcessWrites(path, 'other', 300);
      db.prepare(
        "INSERT INTO mcp_clients (name, token_hash, created_at) VALUES ('ours', 'h-ours', 'now')",
      ).run();
    });
    expect(other?.status).toBe(1);
    expect(clients(db)).toBe('ours');
    db.close();
  });
});
