/**
 * `ogf-broker backup FILE [--data-dir D]` (contract 17): one 0600 archive of the data dir, the daemon
 * running or not — a consistent copy of broker.db (SQLite's online backup) and every file of the data dir
 * (backup/members.ts). On PostgreSQL this node's files only, and a line saying to pg_dump the database.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { backupFiles, copySqlite, DATABASE_FILE, writeArchive } from '../backup/index.js';
import {
  iso,
  parseFlags,
  stringFlag,
  systemClock,
  UsageError,
  usePrivateUmask,
  VERSION,
} from '../base/index.js';
import { loadConfig } from '../config/index.js';
import { inspectDataDir } from '../datadir/index.js';

export async function runBackup(argv: string[]): Promise<number> {
  const p = parseFlags('backup', argv, { 'data-dir': { type: 'string' } }, 1);
  const target = p.positionals[0];
  if (target === undefined) throw new UsageError('backup: name the archive to write: ogf-broker backup FILE');
  const file = resolve(target);
  const config = loadConfig({ dataDir: stringFlag(p, 'data-dir') });
  const root = config.dataDir;
  const problem = inspectDataDir(root);
  if (problem !== undefined) throw new UsageError(`backup: ${problem}`);
  if (existsSync(file)) throw new UsageError(`backup: ${file} exists already; name a new file`);
  if (!existsSync(dirname(file)))
    throw new UsageError(`backup: the directory ${dirname(file)} does not exist`);
  // The copy of broker.db and the archive are as private as the data dir they come from.
  usePrivateUmask();
  const onPostgres = config.database_url !== null;
  const sources = backupFiles(root).map((name) => ({ name, path: join(root, name) }));
  // The database copy waits beside the archive (same file system, the owner's choice of disk), private.
  const scratch = mkdtempSync(join(dirname(file), '.ogf-backup-'));
  try {
    if (!onPostgres && existsSync(join(root, DATABASE_FILE))) {
      const copy = join(scratch, DATABASE_FILE);
      await copySqlite(join(root, DATABASE_FILE), copy);
      sources.unshift({ name: DATABASE_FILE, path: copy });
    }
    const manifest = writeArchive(
      file,
      {
        created_at: iso(systemClock.now()),
        broker_version: VERSION,
        database: onPostgres ? 'postgres' : 'sqlite',
      },
      sources,
    );
    const bytes = manifest.members.reduce((s, m) => s + m.size, 0);
    process.stdout.write(
      `Wrote ${file} (0600): ${manifest.members.map((m) => m.name).join(', ')} (${bytes} bytes) from ${root}.\n`,
    );
    if (onPostgres)
      process.stdout.write(
        'The database is the shared PostgreSQL: this archive holds this node’s files only. Back the database up with pg_dump.\n',
      );
    return 0;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
