/**
 * Grants (contracts.md section 8): the owner's narrow, timed "yes to this again". Pure data and pure
 * functions — no clock, no I/O, never throws — so matching, use counts and expiry are unit-tested with a
 * fake clock and the broker applies what they return in the same transaction as the submit (architecture.md:
 * "grants.match(request, liveGrants) decides; the broker applies it").
 *
 * ```
 *  created ──▶ live ──use (uses_left 1 → 0)──▶ spent
 *               │ ──clock passes expires_at──▶ expired
 *               │ ──owner revokes (owner-made only)──▶ revoked
 * ```
 */
import type { Grant } from '../../../common/grant.js';

export type { Grant, GrantState } from '../../../common/grant.js';

/** What a grant is asked to match: a new command's name, client and arguments. */
export interface GrantRequest {
  command: string;
  client: string;
  args: Record<string, unknown>;
  /**
   * Contract 16 (v4): the node the command belongs to, on a shared database; undefined on a store of its
   * own (every command is this daemon's, so a grant's node never narrows it: as before v4).
   */
  node?: string;
}

/** The node value that makes a grant apply to every node's commands (contract 16 v4). */
export const ALL_NODES = '*';

/** Contract 8's bounds for owner-made grants. */
export const GRANT_TTL_MIN_S = 60;
export const GRANT_TTL_MAX_S = 2_592_000;
export const GRANT_USES_MAX = 10_000;

/**
 * JSON equality (contract 8): same keys and values, key order ignored; arrays in order. Both sides are
 * parsed JSON (no undefined, functions or cycles), so this is total.
 */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((v, i) => jsonEqual(v, bb[i]));
  }
  const ak = Object.keys(a);
  const bo = b as Record<string, unknown>;
  if (ak.length !== Object.keys(bo).length) return false;
  return ak.every((k) => Object.hasOwn(bo, k) && jsonEqual((a as Record<string, unknown>)[k], bo[k]));
}

/** JSON with object keys sorted at every level: the same text for JSON-equal values. */
export function sortedKeysJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(sortedKeysJson).join(',')}]`;
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${sortedKeysJson(obj[k])}`).join(',')}}`;
}

/** True when the grant still approves: live, and (when it has one) before its expiry. */
export function isLive(grant: Grant, nowMs: number): boolean {
  if (grant.state !== 'live') return false;
  return grant.expires_at === undefined || nowMs < Date.parse(grant.expires_at);
}

/**
 * True when a live grant approves this request: same command, its client (or `*`), its node (or `*`; when the
 * request names one), its args (or any), and
 * for a grant with `when` (contract 11) `whenTrue(grant)` — the expression, evaluated by the caller (the
 * grant book holds them compiled). Without `whenTrue`, a `when` grant matches nothing.
 */
export function matches(
  grant: Grant,
  req: GrantRequest,
  nowMs: number,
  whenTrue?: (grant: Grant) => boolean,
): boolean {
  if (!isLive(grant, nowMs)) return false;
  if (grant.command !== req.command) return false;
  if (grant.client !== '*' && grant.client !== req.client) return false;
  // Contract 16 (v4): alpha's grant for `say` must not approve beta's `say`, another program.
  if (req.node !== undefined && grant.node !== ALL_NODES && grant.node !== req.node) return false;
  if (grant.when !== undefined) return whenTrue?.(grant) === true;
  return grant.args === undefined || jsonEqual(grant.args, req.args);
}

/** The oldest live grant matching the request (contract 8), given grants oldest first. */
export function pick(
  grants: Iterable<Grant>,
  req: GrantRequest,
  nowMs: number,
  whenTrue?: (grant: Grant) => boolean,
): Grant | undefined {
  for (const g of grants) if (matches(g, req, nowMs, whenTrue)) return g;
  return undefined;
}

/** The grant after one approval it gave: one use fewer, `spent` at 0 (a grant without a count is unchanged). */
export function use(grant: Grant, at: string): Grant {
  if (grant.uses_left === undefined) return grant;
  const uses_left = grant.uses_left - 1;
  return uses_left > 0 ? { ...grant, uses_left } : { ...grant, uses_left: 0, state: 'spent', ended_at: at };
}

/** The grant ended: `expired` by the clock, `revoked` by an owner (or a config entry that went away). */
export function end(grant: Grant, state: 'expired' | 'revoked', at: string): Grant {
  return { ...grant, state, ended_at: at };
}

/** What the broker knows of a command name: undefined = no such command (contract 8: `NotGrantable`). */
export type CommandPolicy = (command: string) => { approvals: number } | undefined;

/** A config grant entry (contract 8: `"grants":[{"command","client"?,"args"?,"note"?}]`, client default `*`). */
export interface ConfigGrant {
  command: string;
  client: string;
  args?: Record<string, unknown>;
  note?: string;
}
