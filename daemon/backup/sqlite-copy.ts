/**
 * A consistent copy of broker.db while a daemon may be writing it (contract 17): SQLite's online backup
 * API, all pages in one step — one read transaction, so the copy is the database at one instant and a
 * writer's commit cannot make the backup restart (with the default 100 pages a step, a busy daemon could
 * restart it forever). The daemon's writes wait only for that step (WAL: readers do not block writers).
 */
import Database from 'better-sqlite3';

export async function copySqlite(source: string, target: string): Promise<void> {
  const db = new Database(source, { fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    await db.backup(target, { progress: () => 0x7fffffff });
  } finally {
    db.close();
  }
}
