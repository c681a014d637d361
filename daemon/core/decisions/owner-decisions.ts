/**
 * The checks before an owner's decision, as pure functions (architecture.md example 2, like intake.ts for
 * a submit): each returns the refusal the owner gets, in the contract's order, or undefined when the broker
 * may go ahead and apply the change. No I/O, never throws; the broker answers a refusal once the pending
 * batch committed (so it reflects this turn's changes) and applies everything else.
 *
 *   approve / deny   NotFound → AlreadyDecided → AlreadyApproved → VersionConflict   (contracts 5, 9)
 *   approve          … → PasskeyRequired (contract 13.3: a passkey-required command, or a bad assertion)
 *   approve + grant  NotGrantable (a kind never granted, quorum commands, unknown names) first (contracts 5 v2, 8)
 *   revoke           NotFound → NotRevocable (config grants) → already ended: ok    (contract 8)
 */

import type { BrokerErrorCode } from '../../base/index.js';
import type { Command, Event, Grant, KindPolicies } from '../model/index.js';
import type { ApproveGrant, GrantResult, GrantSpec, PasskeyEvidence } from '../ports/index.js';

/** A refused owner action: nothing changed. */
export interface Refusal {
  ok: false;
  code: BrokerErrorCode;
  message: string;
}

/** Contracts 5 and 9: why the owner `by` may not apply `event` to command `id` at `version`, or undefined. */
export function decisionRefusal(
  c: Command | undefined,
  id: string,
  version: number,
  event: Event,
  by: string,
): Refusal | undefined {
  if (!c) return { ok: false, code: 'NotFound', message: `no command ${id}` };
  // Contract 5: AlreadyDecided is checked first, then the version.
  if (c.phase.state !== 'awaiting_review') {
    const state = c.phase.state;
    return {
      ok: false,
      code: 'AlreadyDecided',
      message: `command ${id} was already decided: it is ${state}`,
    };
  }
  // Contract 9: a repeat approval by the same owner is AlreadyApproved, checked before the version.
  if (event.type === 'approve' && c.approvals?.some((a) => a.by === by)) {
    const left = c.approvals_needed! - c.approvals.length;
    return {
      ok: false,
      code: 'AlreadyApproved',
      message: `you (${by}) already approved command ${id}; it waits for ${left} more owner approval${left === 1 ? '' : 's'}`,
    };
  }
  if (version !== c.version) {
    const at = c.version;
    return {
      ok: false,
      code: 'VersionConflict',
      message: `command ${id} is at version ${at}, not ${version}; look at it again before deciding`,
    };
  }
  return undefined;
}

/**
 * Contract 13.3: why an approval of `c` with this passkey evidence is refused (`PasskeyRequired`), or
 * undefined. Evidence that failed is refused whatever the command; a passkey-required command needs
 * verified evidence. Checked after `decisionRefusal` (AlreadyDecided and the version come first).
 */
export function passkeyRefusal(
  c: Command | undefined,
  evidence: PasskeyEvidence | undefined,
): Refusal | undefined {
  if (evidence?.ok === false) return { ok: false, code: 'PasskeyRequired', message: evidence.why };
  if (c?.passkey_required === true && evidence === undefined) {
    return {
      ok: false,
      code: 'PasskeyRequired',
      message: `${c.command} needs your passkey for each approval: approve it in the panel (the terminal and the owner token cannot)`,
    };
  }
  return undefined;
}

/**
 * Why this command cannot be granted (contract 8), or undefined: its kind's answer first (core/model/kind-policy.ts:
 * a kind never granted), then quorum, then `refusal`, the grant book's rule for a command name (grant-book.ts:
 * a kind's fixed name, quorum commands, unknown names).
 */
export function grantRefusal(
  c: Command,
  kinds: KindPolicies,
  refusal: (command: string) => string | undefined,
): string | undefined {
  const never = kinds.of(c.tool).grantRefusal;
  if (never !== undefined) return never;
  if (c.approvals_needed !== undefined) {
    return `${c.command} needs ${c.approvals_needed} owners to approve each call, so it cannot be granted`;
  }
  return refusal(c.command);
}

/** Contract 5 (v2): the grant an approve-with-grant makes, for the command's `command` and `client`. */
export function grantSpecOf(c: Command | undefined, grant: ApproveGrant): GrantSpec {
  const spec: GrantSpec = { command: c?.command ?? '', client: c?.client ?? '', ttl_s: grant.ttl_s };
  if (grant.when !== undefined) spec.when = grant.when;
  else if (grant.same_args === true && c !== undefined) spec.args = c.args;
  if (grant.uses !== undefined) spec.uses = grant.uses;
  if (grant.note !== undefined) spec.note = grant.note;
  // Contract 16 (v4): the node of the card it was made from, unless the owner named another (or `*`).
  const node = grant.node ?? c?.node;
  if (node !== undefined) spec.node = node;
  return spec;
}

/**
 * Contract 8: the answer to a revoke that changes nothing — an unknown grant, a config grant (NotRevocable),
 * or one already ended (ok, as it is) — or undefined when `g` is live and is to be ended now.
 */
export function revokeAnswer(g: Grant | undefined, id: string): GrantResult | undefined {
  if (g === undefined) return { ok: false, code: 'NotFound', message: `no grant ${id}` };
  if (g.source === 'config') {
    return {
      ok: false,
      code: 'NotRevocable',
      message: `grant ${id} comes from the config file; remove its entry from "grants" there and restart`,
    };
  }
  if (g.state !== 'live') return { ok: true, grant: g };
  return undefined;
}
