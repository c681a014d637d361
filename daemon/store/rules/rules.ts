/**
 * The storage rules both stores keep, written once (issue 37 item 3): broker.db (store/sqlite/) and the
 * shared PostgreSQL (store/postgres/) differ only in their SQL. Which states are final and which active,
 * how much of the history one answer may parse, how often the store signs a checkpoint by itself, the
 * audit entries a token change or a passkey recovery writes, and what the history search means — as a
 * dialect-neutral list of terms each store renders into its own SQL (sqlite/search.ts, postgres/search.ts).
 */
import type { Actor, AuditEntry, HistorySearch, State } from '../../core/index.js';
// The passkey ledger's own file, not core/index.ts: `audit verify` loads this through broker.db's reader.
import { PASSKEY_KEY_EVENTS } from '../../core/model/passkey-ledger.js';

/** The final states (core/model/lifecycle.ts isFinal): `recentFinal` and the mirror's window read these. */
export const FINAL_STATES: readonly State[] = ['succeeded', 'denied', 'failed', 'unknown'];

/**
 * The non-final states: `active()` and the PENDING counts (contract 1.3). A query naming them (`state IN
 * (…)`) reads `commands_state_seq` for each instead of scanning the whole history (bench row 5: it once
 * said `NOT IN` the final states, which no index answers; docs/performance.md).
 */
export const ACTIVE_STATES: readonly State[] = ['awaiting_review', 'approved', 'running'];

/** A list of names as an SQL IN list, the same text in both dialects: `('a','b')`. */
export function inList(names: readonly string[]): string {
  return `(${names.map((n) => `'${n}'`).join(',')})`;
}

/**
 * Stored records (characters of JSON) one `history` or search answer may parse: a few hundred ms of the
 * event loop at most, against ~3 s for 500 records of a megabyte each (issue 19 finding 3). Only owners ask
 * for history (the AI's tasks/list has its own 2 MiB page), and a record holding 1 MiB of output twice is
 * ~6 MiB stored, so a tighter bound left an owner's history of 10 short of three such commands
 * (attack-output).
 */
export const HISTORY_MAX_CHARS = 64 * 1024 * 1024;

/** Contract 14: the store signs a checkpoint with every 1,000th entry, in that entry's transaction. */
export const CHECKPOINT_EVERY = 1000;

/** Audit entries one `audits.since` answer holds unless asked for fewer. */
export const AUDIT_PAGE = 1000;

/** The actions that add or remove passkeys (contract 13.3 (v4)): the partial index `audit_passkeys`. */
export const PASSKEY_ACTIONS: readonly string[] = PASSKEY_KEY_EVENTS;

/**
 * Contract 13.3 (v4): the audit rows that add or remove passkeys, chained ones only (`entry`, the bytes the
 * chain hashed; a row not yet chained is in no record a checkpoint pins) — its IN list the partial index
 * `audit_passkeys`'s (both schemas).
 */
export const RECORDED_PASSKEYS_WHERE = `action IN ${inList(PASSKEY_ACTIONS)} AND hash IS NOT NULL`;

/**
 * Contract 18 (v4): the audit rows with which a rule decided a request — its approval or denial at submit,
 * whose actor is `rule:<id>` — the condition of the partial index `audit_rule_decided` (both schemas), so
 * counting them reads that index only. The count is the record's, so every node of a shared database
 * counts the same.
 */
export const RULE_DECIDED_WHERE = "actor_kind = 'daemon' AND actor LIKE 'rule:%'";

/** How many requests each rule decided, by rule id (`id`, `n`), in either dialect. */
export const RULE_DECIDED_SQL = `SELECT substr(actor, 6) AS id, count(*) AS n FROM audit WHERE ${RULE_DECIDED_WHERE} GROUP BY actor`;

/** The two tables of names and token hashes. */
export type TokenTable = 'owners' | 'mcp_clients';

/**
 * The audit entry of a token change, for a name that is new (`created`) and one that existed (`rotated`):
 * `mcp_token_set` (`rotated` said) for a client; `owner_created` or `owner_token_rotated` for an owner.
 */
export function tokenSetEntries(
  table: TokenTable,
  name: string,
  at: string,
  actor: Actor,
  detail: Record<string, unknown> = {},
): { created: AuditEntry; rotated: AuditEntry } {
  if (table === 'mcp_clients') {
    return {
      created: { at, actor, action: 'mcp_token_set', detail: { client: name, rotated: false } },
      rotated: { at, actor, action: 'mcp_token_set', detail: { client: name, rotated: true } },
    };
  }
  return {
    created: { at, actor, action: 'owner_created', detail: { owner: name, ...detail } },
    rotated: { at, actor, action: 'owner_token_rotated', detail: { owner: name, ...detail } },
  };
}

/** The audit entry of contract 13.3's recovery: every passkey of `owner` removed (`token owner --rotate`). */
export function passkeysForgotten(owner: string, at: string, actor: Actor): AuditEntry {
  return { at, actor, action: 'passkeys_removed', detail: { owner, why: 'token rotated' } };
}

/**
 * Which audit entries an export holds (`audit export`, contract 14): a time range — the seqs from the first
 * entry at or after `since` to the last at or before `until`, contiguous, so the export's links verify even
 * where a clock step put two entries' times out of order — or some commands' entries.
 */
export interface AuditRange {
  since?: string;
  until?: string;
  commandIds?: readonly string[];
}

/** A column the history search compares exactly; `node` is the node that received the command. */
export type SearchField = 'state' | 'client' | 'node' | 'command';

/**
 * One narrowing of the history search (contract 14), in no dialect: a substring in any case of the
 * command's searchable text (command, client, arguments, justification, decider, notes), a column equal to
 * a value, or the creation time at or after / at or before an ISO-8601 time.
 */
export type SearchTerm =
  | { kind: 'text'; text: string }
  | { kind: 'equals'; field: SearchField; value: string }
  | { kind: 'since' | 'until'; value: string };

/**
 * The terms of a search, in one order for both stores: every field given narrows; a text that is only
 * white space narrows nothing.
 */
export function searchTerms(filter: HistorySearch): SearchTerm[] {
  const terms: SearchTerm[] = [];
  const text = filter.text?.trim();
  if (text !== undefined && text !== '') terms.push({ kind: 'text', text });
  if (filter.state !== undefined) terms.push({ kind: 'equals', field: 'state', value: filter.state });
  if (filter.client !== undefined) terms.push({ kind: 'equals', field: 'client', value: filter.client });
  if (filter.since !== undefined) terms.push({ kind: 'since', value: filter.since });
  if (filter.until !== undefined) terms.push({ kind: 'until', value: filter.until });
  if (filter.node !== undefined) terms.push({ kind: 'equals', field: 'node', value: filter.node });
  // Contract 11 (v4): the command name, through each schema's commands_command_seq.
  if (filter.command !== undefined) terms.push({ kind: 'equals', field: 'command', value: filter.command });
  return terms;
}
