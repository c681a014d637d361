/**
 * `ogf-broker restore FILE --data-dir D` (contract 17): fills an empty data dir (made 0700; every file
 * 0600) from a backup archive. A data dir that holds anything is refused (exit 2): a restore never mixes
 * two histories or overwrites a key or token.
 */
import { chmodSync, existsSync, mkdirSync, readdirSync, rmdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { extractArchive, readManifest } from '../backup/index.js';
import { parseFlags, stringFlag, UsageError, usePrivateUmask } from '../base/index.js';
import { inspectDataDir, resolveDataDir } from '../datadir/index.js';

export async function runRestore(argv: string[]): Promise<number> {
  const p = parseFlags('restore', argv, { 'data-dir': { type: 'string' } }, 1);
  const source = p.positionals[0];
  if (source === undefined)
    throw new UsageError('restore: name the archive to read: ogf-broker restore FILE --data-dir D');
  const file = resolve(source);
  if (!existsSync(file)) throw new UsageError(`restore: ${file} does not exist`);
  readManifest(file);
  const root = resolveDataDir(stringFlag(p, 'data-dir'));
  usePrivateUmask();
  const created = !existsSync(root);
  if (created) mkdirSync(root, { recursive: true, mode: 0o700 });
  else if (readdirSync(root).length > 0)
    throw new UsageError(`restore: the data dir ${root} is not empty; restore into a new or empty directory`);
  chmodSync(root, 0o700);
  const problem = inspectDataDir(root);
  if (problem !== undefined) throw new UsageError(`restore: ${problem}`);
  let manifest: ReturnType<typeof extractArchive>;
  try {
    manifest = extractArchive(file, root);
  } catch (e) {
    if (created) rmdirSync(root);
    throw e;
  }
  process.stdout.write(
    `Restored ${manifest.members.map((m) => m.name).join(', ')} into ${root} (backup of ${manifest.created_at}, ogf-broker ${manifest.broker_version}).\n`,
  );
  if (manifest.database === 'postgres')
    process.stdout.write('The database was the shared PostgreSQL: restore it from your pg_dump.\n');
  process.stdout.write(
    `Check it: ogf-broker audit verify --data-dir ${root}; then start the daemon on it.\n`,
  );
  return 0;
}
