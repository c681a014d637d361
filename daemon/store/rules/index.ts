/**
 * The storage rules both stores keep, written once (rules.ts): each store (store/sqlite/, store/postgres/)
 * holds only its SQL.
 */
export {
  ACTIVE_STATES,
  AUDIT_PAGE,
  type AuditRange,
  CHECKPOINT_EVERY,
  FINAL_STATES,
  HISTORY_MAX_CHARS,
  inList,
  PASSKEY_ACTIONS,
  passkeysForgotten,
  RECORDED_PASSKEYS_WHERE,
  RULE_DECIDED_SQL,
  RULE_DECIDED_WHERE,
  type SearchField,
  type SearchTerm,
  searchTerms,
  type TokenTable,
  tokenSetEntries,
} from './rules.js';
