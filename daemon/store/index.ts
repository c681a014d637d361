/**
 * The store (contract 9, 16): which one a daemon or the `token` command opens — the embedded SQLite
 * (store/sqlite/) or the shared PostgreSQL (store/postgres/, loaded only when configured).
 */
export { type DaemonStore, lookAtStore, openStore, type StoreLook } from './open.js';
export type { LiveNode } from './postgres/index.js';
export { type RecordReads, recordOf, recordOfDataDir } from './read.js';
export {
  type DatabaseStatus,
  readDatabaseStatus,
  removeDatabaseStatus,
  writeDatabaseStatus,
} from './status-file.js';
export {
  databaseUrlOf,
  readStoreMark,
  removeStoreMark,
  type StoreChoice,
  type StoreMark,
  storeMarkPath,
  storeOf,
  writeStoreMark,
} from './where.js';
