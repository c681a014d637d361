/**
 * The PostgreSQL store (contract 16, issue 27): the store ports on a shared PostgreSQL, selected by
 * OGF_BROKER_DATABASE_URL (or config `database_url_from_env`) in the composition root; the embedded SQLite
 * (store/sqlite/) stays the default. The only folder that imports `pg`.
 */

export {
  NoAuditChain,
  type NodeKey,
  type PgChainMeta,
  readPgAuditChain,
  readPgHistory,
  walkPgAuditChain,
} from './audit-read.js';
export { isUnreachable } from './errors.js';
export type { PgHistory } from './history-read.js';
export { MIRROR_WINDOW } from './mirror.js';
export type { LiveNode, NodeRecord } from './nodes.js';
export { type DatabaseLook, lookAt, newestPgCommands } from './readonly.js';
export { SCHEMA_VERSION } from './schema.js';
export { searchQuery } from './search.js';
export { type PostgresOptions, PostgresStore } from './store.js';
