/**
 * Which files of a data dir a backup holds (contract 17): every regular file at its top level — the config,
 * audit.key/audit.pub, vapid.json, owner.token, mcp.token, fingerprint.key and whatever secret a later
 * version keeps there, so none is forgotten — except broker.db and its WAL files (copied through SQLite's
 * online backup instead, consistent while a daemon writes) and what only describes a running daemon.
 */
import { lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

export const DATABASE_FILE = 'broker.db';

/** The database's own side files: never copied as files (a copy of them with a running writer is torn). */
const DATABASE_SIDE = new Set([`${DATABASE_FILE}-wal`, `${DATABASE_FILE}-shm`, `${DATABASE_FILE}-journal`]);

/**
 * What a running daemon writes about itself (datadir.ts, store/status-file.ts, rules/status-file.ts,
 * mcp/relay.ts): restored, they would claim a daemon that does not run.
 */
const RUNTIME = new Set([
  'daemon.json',
  'upstreams.json',
  'notify.json',
  'rules.json',
  'database.json',
  'daemon.log',
]);

/** The data dir's files a backup copies as they are (names, sorted), broker.db excluded. */
export function backupFiles(root: string): string[] {
  return readdirSync(root)
    .filter((name) => !DATABASE_SIDE.has(name) && !RUNTIME.has(name) && name !== DATABASE_FILE)
    .filter((name) => !name.startsWith('.') && lstatSync(join(root, name)).isFile())
    .sort();
}
