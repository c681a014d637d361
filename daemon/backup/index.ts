/**
 * Backups of a data dir (contract 17): the archive format, which files it holds, and the consistent copy
 * of broker.db.
 */
export { extractArchive, type Manifest, readManifest, writeArchive } from './archive.js';
export { backupFiles, DATABASE_FILE } from './members.js';
export { copySqlite } from './sqlite-copy.js';
