/**
 * The SQLite store (issue 20 item 2): the default implementation of core/ports/store.ts, and the only folder that
 * imports better-sqlite3. `Store` opens broker.db for the daemon (and the `token` command); `countOwners`
 * and `countsByState` read it without writing (doctor, status).
 */
export {
  type AuditChainReader,
  countOwners,
  countsByState,
  newestCommands,
  openAuditChain,
  readAuditChain,
  type StoredChain,
} from './readonly.js';
export { PAGE_CACHE_KIB } from './schema.js';
export { CHANGE_POLL_MS, Store } from './store.js';
