/**
 * `<data-dir>/database.json` (contract 16: "a node that loses the database keeps answering (`status` says
 * so)"): whether the running daemon reaches its shared PostgreSQL now, as it last knew it, for
 * `ogf-broker status` — which otherwise sees only its own connection. Written whole (temp file + rename,
 * 0600) when the daemon opens the database and at each change of its availability (open.ts), removed on
 * clean exit with daemon.json, like upstreams.json and rules.json. Never holds the URL.
 */
import { readFileSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { writeStatusFile } from '../datadir/index.js';

export interface DatabaseStatus {
  /** The daemon that wrote it: status trusts the file only for the daemon daemon.json names. */
  pid: number;
  /** Whether the daemon reaches the database now. */
  available: boolean;
  /** Since when (ISO-8601): the open, or the last change. */
  since: string;
  /** Why it is out of reach (the driver's words, never the URL), when it is. */
  error?: string;
}

export function databaseStatusPath(dataDir: string): string {
  return join(dataDir, 'database.json');
}

/** Records the daemon `pid`'s view of its database (its `since` is now unless given). */
export function writeDatabaseStatus(
  dataDir: string,
  pid: number,
  available: boolean,
  error?: string,
  since: string = new Date().toISOString(),
): void {
  const path = databaseStatusPath(dataDir);
  const status: DatabaseStatus = { pid, available, since, ...(error === undefined ? {} : { error }) };
  writeStatusFile(path, pid, status);
}

/** What the daemon `pid` last wrote, or undefined (no file, another daemon's, unreadable). */
export function readDatabaseStatus(dataDir: string, pid: number): DatabaseStatus | undefined {
  try {
    const data = JSON.parse(readFileSync(databaseStatusPath(dataDir), 'utf8')) as Partial<DatabaseStatus>;
    if (data.pid !== pid || typeof data.available !== 'boolean' || typeof data.since !== 'string')
      return undefined;
    return {
      pid,
      available: data.available,
      since: data.since,
      ...(typeof data.error === 'string' ? { error: data.error } : {}),
    };
  } catch {
    return undefined;
  }
}

export function removeDatabaseStatus(dataDir: string): void {
  try {
    unlinkSync(databaseStatusPath(dataDir));
  } catch {
    // Already gone.
  }
}
