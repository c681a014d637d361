/**
 * Counts the transactions SQLite really committed to a database in WAL mode, from the `-wal` file itself
 * (https://sqlite.org/fileformat2.html#wal_file_format): every commit ends with one "commit frame", whose
 * header carries the database size in pages (0 in every other frame). Frames left over from before the
 * last WAL reset carry old salts and are not counted. Valid while no checkpoint resets the WAL: a test
 * writes far fewer than the 1000 pages of SQLite's automatic checkpoint.
 */
import { existsSync, readFileSync } from 'node:fs';

const WAL_HEADER = 32;
const FRAME_HEADER = 24;

/** Commit frames in `<db>-wal` now (0 when there is no WAL yet). */
export function walCommits(dbPath: string): number {
  const path = `${dbPath}-wal`;
  if (!existsSync(path)) return 0;
  const wal = readFileSync(path);
  if (wal.length < WAL_HEADER) return 0;
  const pageSize = wal.readUInt32BE(8);
  const salt1 = wal.readUInt32BE(16);
  const salt2 = wal.readUInt32BE(20);
  let commits = 0;
  for (let at = WAL_HEADER; at + FRAME_HEADER + pageSize <= wal.length; at += FRAME_HEADER + pageSize) {
    if (wal.readUInt32BE(at + 8) !== salt1 || wal.readUInt32BE(at + 12) !== salt2) break;
    if (wal.readUInt32BE(at + 4) !== 0) commits++;
  }
  return commits;
}
