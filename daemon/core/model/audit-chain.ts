/**
 * The hash chain of the audit record (contract 14): every entry is
 * `{"seq","at","actor","event","command_id"?,"data","prev","hash"}`, `seq` from 1 without gaps, `prev` the
 * previous entry's `hash` (64 zeros for the first), `hash` the lower-case hex SHA-256 of the RFC 8785
 * canonical JSON of the entry without `hash`. Canonical JSON is the `canonicalize` package's: never
 * `JSON.stringify` of an object whose key order we hope for.
 *
 * The store appends what the broker and the edges hand it (store.ts AuditEntry: an internal action and
 * actor); `chainEntry` maps those to the contract's events and actors, here and only here, so an entry is
 * the same whether it was appended now or chained at the first start of this version (older rows).
 *
 * | internal action | event | actor |
 * |---|---|---|
 * | submit | submit | `client:<name>` |
 * | approve | approve | an owner, `grant:<id>`, `rule:<id>`, `policy:read_only` |
 * | deny, expire, cancel | deny (`data.reason` says which) | an owner, `daemon`, `client:<name>` |
 * | start | launch | `daemon` |
 * | finish, abort | outcome | `daemon` |
 * | restart | deny (a cue awaiting review) or outcome | `daemon` |
 * | reconcile, prune | reconcile, prune | an owner, `daemon` |
 * | rebind (contract 20: the file changed before launch; back to awaiting review) | preview_changed | `daemon` |
 * | grant_created, grant_used | the same | an owner, `daemon` |
 * | grant_revoked, grant_expired | grant_ended | an owner, `daemon` |
 * | owner_created / owner_token_rotated / mcp_token_set | token_created / token_rotated | an owner, `daemon` |
 * | owner_login, owner_logout, owner_login_refused | the same | an owner; `anonymous` when refused |
 * | cue_refused (a cue with the feature off; older rows keep the kind's own name) | cue_refused | `client:<name>` |
 * | anything else (preview_started, preview_made, passkey_*, passkeys_removed, push_*, oauth_client_*, config_loaded, rule_added, rule_updated, rule_removed) | itself | as given |
 */
import { hash } from 'node:crypto';
import canonicalize from 'canonicalize';
import type { AuditEntryView } from '../../../common/owner-messages.js';
import type { Actor } from './lifecycle.js';

/**
 * What an audit entry records, as the daemon names it; audit-chain.ts maps each to the contract's event
 * (contract 14). A feature that records something new adds its action here (and a row to that table when
 * its event name differs): `preview_made` (section 12), `passkey_added` / `passkey_removed` (13.3),
 * `oauth_client_connected` / `oauth_client_disconnected` (15) are ready for the issues that make them.
 */
export type AuditAction =
  | 'submit'
  | 'approve'
  | 'deny'
  | 'expire'
  | 'cancel'
  | 'start'
  | 'finish'
  | 'abort'
  | 'restart'
  | 'reconcile'
  | 'prune'
  /** Contract 20: the file changed between the approved preview and the launch; back to the owners. */
  | 'rebind'
  | 'grant_created'
  | 'grant_used'
  | 'grant_revoked'
  | 'grant_expired'
  | 'owner_created'
  | 'owner_token_rotated'
  | 'mcp_token_set'
  | 'owner_login'
  | 'owner_logout'
  | 'owner_login_refused'
  | 'cue_refused'
  | 'preview_started'
  | 'preview_made'
  | 'passkey_added'
  | 'passkey_removed'
  | 'passkeys_removed'
  | 'push_subscribed'
  | 'push_unsubscribed'
  | 'push_expired'
  | 'oauth_client_connected'
  | 'oauth_client_disconnected'
  | 'config_loaded'
  // Contract 18 (v4): the owners' rules, made, changed (disabled, edited) and removed.
  | 'rule_added'
  | 'rule_updated'
  | 'rule_removed';

/**
 * One audit log entry as written (append-only: contract 9): the store chains it (contract 14,
 * audit-chain.ts) in the transaction that writes it. Never a token, a cookie, a session UUID or a header
 * value in `detail`.
 */
export interface AuditEntry {
  at: string;
  actor: Actor;
  action: AuditAction;
  command_id?: string;
  version?: number;
  detail?: Record<string, unknown>;
}

/** `prev` of the first entry. */
export const GENESIS_HASH = '0'.repeat(64);

/** One entry of the chain, as stored, exported and verified (contract 14): the shape owners are sent. */
export type ChainEntry = AuditEntryView;

/** An entry before its hash: what the hash is computed over. */
export type UnsealedEntry = Omit<ChainEntry, 'hash'>;

/** A signed checkpoint (contract 14): `signature` is base64 Ed25519 over the canonical `{seq, hash, at}`. */
export interface Checkpoint {
  seq: number;
  hash: string;
  at: string;
  signature: string;
}

/**
 * `value` with every string (keys included) well-formed: each lone surrogate becomes U+FFFD. RFC 8785
 * (I-JSON) has no form for a lone surrogate and `canonicalize` throws on one; JSON from an AI may carry
 * one (`"\ud800"`). The stored record keeps the value as it came; only what is hashed and signed is
 * well-formed, the same way at write and at verify.
 */
/** A high surrogate with no low one after it, or a low one with no high one before it (code units). */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

function wellFormedText(text: string): string {
  return text.replace(LONE_SURROGATE, '\uFFFD');
}

function wellFormed(value: unknown): unknown {
  if (typeof value === 'string') return wellFormedText(value);
  if (Array.isArray(value)) return value.map(wellFormed);
  if (
    value !== null &&
    typeof value === 'object' &&
    typeof (value as { toJSON?: unknown }).toJSON !== 'function'
  ) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[wellFormedText(k)] = wellFormed(v);
    return out;
  }
  return value;
}

/**
 * Whether `wellFormed(value)` would read as `value` to `canonicalize`: every string and key well-formed (in C:
 * `isWellFormed`), and no own `__proto__` key (the copy drops one, by setting its prototype). Nearly every
 * entry is so, and is then canonicalized as it is, without a copy of the whole entry and a regular expression
 * run over each of its strings: a submit's entry in ~8.5–12 µs instead of ~11–18 (every append, bench row 4).
 */
function wellFormedAlready(value: unknown): boolean {
  if (typeof value === 'string') return value.isWellFormed();
  if (Array.isArray(value)) return value.every(wellFormedAlready);
  if (
    value === null ||
    typeof value !== 'object' ||
    typeof (value as { toJSON?: unknown }).toJSON === 'function'
  )
    return true;
  for (const k of Object.keys(value)) {
    if (k === '__proto__' || !k.isWellFormed() || !wellFormedAlready((value as Record<string, unknown>)[k]))
      return false;
  }
  return true;
}

/**
 * RFC 8785 canonical JSON of `value` (throws on what JSON cannot hold: undefined, a function); lone
 * surrogates are hashed as U+FFFD (`wellFormed`).
 */
export function canonicalJson(value: unknown): string {
  const text = canonicalize(wellFormedAlready(value) ? value : wellFormed(value));
  if (text === undefined) throw new Error('canonical JSON: the value has no JSON form');
  return text;
}

/**
 * Lower-case hex SHA-256 of a text's UTF-8 bytes. `crypto.hash` (Node ≥ 20.12; engines asks 20.19) is the
 * one-shot form: no Hash object per call, about half the cost of `createHash` on an entry's few hundred bytes.
 */
export function sha256Hex(text: string): string {
  return hash('sha256', text, 'hex');
}

/** The canonical text of an entry without its hash, and that hash. */
export function sealEntry(entry: UnsealedEntry): { text: string; hash: string } {
  const text = canonicalJson(entry);
  return { text, hash: sha256Hex(text) };
}

/** The bytes a checkpoint's signature covers. */
export function checkpointPayload(cp: { seq: number; hash: string; at: string }): string {
  return canonicalJson({ seq: cp.seq, hash: cp.hash, at: cp.at });
}

const EVENTS: Readonly<Record<string, string>> = {
  expire: 'deny',
  cancel: 'deny',
  start: 'launch',
  rebind: 'preview_changed',
  finish: 'outcome',
  abort: 'outcome',
  grant_revoked: 'grant_ended',
  grant_expired: 'grant_ended',
  owner_created: 'token_created',
  owner_token_rotated: 'token_rotated',
};

function eventOf(action: string, data: Record<string, unknown>): string {
  if (action === 'restart') return data.state === 'denied' ? 'deny' : 'outcome';
  if (action === 'mcp_token_set') {
    // Older rows did not say whether the client's token existed before.
    if (data.rotated === undefined) return 'token_set';
    return data.rotated === true ? 'token_rotated' : 'token_created';
  }
  return EVENTS[action] ?? action;
}

function actorOf(actor: Actor, action: string): string {
  if (action === 'owner_login_refused') return 'anonymous';
  return actor.kind === 'client' ? `client:${actor.name}` : actor.name;
}

/** The contract's entry for an internal one, at `seq` after `prev` (see the table above). */
export function chainEntry(e: AuditEntry, seq: number, prev: string): UnsealedEntry {
  const data: Record<string, unknown> = { ...(e.detail ?? {}) };
  let commandId = e.command_id;
  // A grant's use or creation names the command it approved: the command's own entries show it.
  if (commandId === undefined && typeof data.command_id === 'string') {
    commandId = data.command_id;
    delete data.command_id;
  }
  if (e.version !== undefined) data.version = e.version;
  const out: UnsealedEntry = {
    seq,
    at: e.at,
    actor: actorOf(e.actor, e.action),
    event: eventOf(e.action, data),
    data,
    prev,
  };
  if (commandId !== undefined) out.command_id = commandId;
  return out;
}
