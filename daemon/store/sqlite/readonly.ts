/**
 * Reads of a data dir's broker.db by a process that is not the daemon (`status`, `doctor`): opened
 * read-only, never created, never migrated; a missing or older file answers undefined.
 */
import { existsSync } from 'node:fs';
import type { Command } from '../../core/index.js';
import { openReadOnly } from './schema.js';

/**
 * How many owners a data dir's broker.db holds, read without writing (doctor, contract 1.1): undefined when
 * there is no broker.db yet or it predates owners (its first start creates owner `owner`).
 */
export function countOwners(path: string): number | undefined {
  return readOnly(path, (db) => db.prepare('SELECT COUNT(*) FROM owners').pluck().get() as number);
}

/** Commands by state (`status`), or undefined when there is no readable broker.db. */
export function countsByState(path: string): Record<string, number> | undefined {
  if (!existsSync(path)) return undefined;
  return readOnly(path, (db) => {
    const rows = db.prepare('SELECT state, COUNT(*) AS n FROM commands GROUP BY state').all() as Array<{
      state: string;
      n: number;
    }>;
    return Object.fromEntries(rows.map((r) => [r.state, r.n]));
  });
}

/**
 * The newest `limit` commands, newest first, read without writing (`policy test`, contract 11): one record
 * parsed at a time. Undefined when there is no readable broker.db.
 */
export function newestCommands(path: string, limit: number): Command[] | undefined {
  if (!existsSync(path)) return undefined;
  return readOnly(path, (db) => {
    const out: Command[] = [];
    const rows = db.prepare('SELECT body FROM commands ORDER BY seq DESC LIMIT ?').iterate(limit);
    for (const row of rows as Iterable<{ body: string }>) out.push(JSON.parse(row.body) as Command);
    return out;
  });
}

function readOnly<T>(path: string, read: (db: ReturnType<typeof openReadOnly>) => T): T | undefined {
  let db: ReturnType<typeof openReadOnly>;
  try {
    db = openReadOnly(path);
  } catch {
    return undefined;
  }
  try {
    return read(db);
  } catch {
    return undefined;
  } finally {
    db.close();
  }
}
