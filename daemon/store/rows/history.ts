/**
 * A command row's fields the history check compares (contract 14 (v4), audit/history-check.ts), as either
 * store's read-only reader hands them (store/sqlite/readonly.ts, store/postgres/history-read.ts):
 * `[seq, id, state, body id, phase.state, phase.reason, phase.decided_by, command, args JSON, display JSON]`
 * (nulls where the body has none or is not JSON). One shape, so the readers and the check cannot drift apart.
 */
export type StoredHistoryRow = [
  number,
  string,
  unknown,
  unknown,
  unknown,
  unknown,
  unknown,
  unknown,
  string | null,
  string | null,
];
