/**
 * Rows as both stores keep them (store/sqlite/, store/postgres/: the same tables and meaning), and how a row
 * becomes the core's record. One definition, so the two stores cannot drift apart on what a row means.
 */
export { type AuditRow, toAudit, toChain } from './audit.js';
export type { StoredHistoryRow } from './history.js';
export { type ConnectionRow, toConnection } from './oauth.js';
export { type PasskeyRow, recordedOf, toPasskey } from './passkeys.js';
