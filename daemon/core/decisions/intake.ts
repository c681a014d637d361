/**
 * What the broker does with a submitted request, decided as a pure function (architecture.md example 2,
 * like the MCP SDK's inboundClassification.ts: a tagged result, no I/O, never throws). The broker hands in
 * what it knows — the command already made under this request_id, the working view's active commands and
 * PENDING counts, its caps, the live grants and the command policy — and applies what comes back:
 *
 * ```
 *  request ─▶ request_id already used? ── same request ─────────▶ existing (the same command again)
 *                  │                    └─ different request ──▶ refused RequestIdReused
 *                  ▼ no
 *             identical twin PENDING? ─────────────────────────▶ existing (contracts 3.1, 7)
 *                  ▼ no
 *             over a PENDING cap? ─────────────────────────────▶ refused TooManyPending (contract 1.3)
 *                  ▼ no
 *             the owner's rules, first true decides (contract 11):
 *               deny ──────────────────────────────────────────▶ create, denied PolicyDenied (rule:<id>)
 *               allow (one owner, grantable kind, no failed deny) ▶ create, approved (rule:<id>)
 *               ask / allow that counts as ask ─▶ approvals_needed = max(own, rule's); grants only
 *               none ─▶ create: quorum (contract 9), else a grant (8) or a policy approval (7)
 *             a deny rule that failed: nothing approves, the owners decide (fail closed)
 * ```
 *
 * The order is the contract's: a repeat is not a new command, so it is answered before the caps count.
 */
import { iso } from '../../base/index.js';
import type { Command, CommandPolicy, Grant, KindPolicies, KindPolicy } from '../model/index.js';
import { argsAsPruned, sha256Digest } from '../model/index.js';
import type { RuleSubject, RuleVerdict, SubmitRequest } from '../ports/index.js';

/** What intake reads of the broker's state at the moment of the request. */
export interface IntakeInput {
  /** The command this client already made under the request's request_id (pending batch or store). */
  sameRequestId: Command | undefined;
  /** The working view's non-final commands, in creation order (command-views.ts). */
  active: Iterable<Command>;
  /** PENDING commands of the request's client, committed or not. */
  pendingOfClient: number;
  /** PENDING commands of all clients together, committed or not. */
  pending: number;
  /** Contract 1.3 (v2): `max_pending_per_client`. */
  maxPendingPerClient: number;
  /** Contract 1.3 (v2): `max_pending`. */
  maxPending: number;
  /** The working view's live grants (grant-book.ts): the oldest that matches approves. */
  grants: { match(req: RuleSubject): Grant | undefined };
  /** What the broker knows of a command name (contract 9: its `approvals`). */
  policy: CommandPolicy;
  /** What each kind of tool means (core/model/kind-policy.ts): its twin rule, quorum, grants, compared fields. */
  kinds: KindPolicies;
  /** Contract 11: the owner's rules on this request (asked only for a new command, after the caps). */
  rules: (req: SubmitRequest) => RuleVerdict;
  /** Contract 13.3: whether approving this command name needs a passkey assertion (`require_passkey`). */
  passkey: (command: string) => boolean;
}

/** The decision on one request. */
export type Intake =
  /** A repeat (same request_id and request, or a PENDING twin): answer with that command. */
  | { kind: 'existing'; command: Command }
  | { kind: 'refused'; code: 'RequestIdReused'; message: string }
  /** `cap` names the cap that refused, for the broker's one log line per cap. */
  | {
      kind: 'refused';
      code: 'TooManyPending';
      message: string;
      cap: 'max_pending_per_client' | 'max_pending';
    }
  /**
   * A new command. `approvalsNeeded` when more than one owner must approve (contract 9); else `approvedBy`
   * when it is approved at submit: `grant:<id>` with the `grant` whose use it takes, or a policy's name.
   */
  | { kind: 'create'; approvalsNeeded?: number; approvedBy?: string; grant?: Grant; passkey?: true }
  /** Contract 11: a `deny` rule decided; created and denied (PolicyDenied) in one transaction. */
  | { kind: 'deny'; deniedBy: string; note?: string };

/** True when `r` asks for exactly what `c` is (a pruned `c` compares by its arguments' hashes). */
export function sameRequest(kinds: KindPolicies, c: Command, r: SubmitRequest): boolean {
  return (
    c.tool === r.tool &&
    c.command === r.command &&
    // A pruned command's large arguments are markers with their hash (retention-rule.ts): compare those.
    JSON.stringify(c.args) === JSON.stringify(argsAsPruned(r.args, c, sha256Digest)) &&
    (c.justification ?? null) === (r.justification ?? null) &&
    kinds.sameFields(c, r)
  );
}

/** Decides what becomes of `req` (see the diagram above). Pure; never throws. */
export function intake(req: SubmitRequest, input: IntakeInput): Intake {
  if (req.request_id !== undefined) {
    const existing = input.sameRequestId;
    if (existing) {
      if (sameRequest(input.kinds, existing, req)) return { kind: 'existing', command: existing };
      return {
        kind: 'refused',
        code: 'RequestIdReused',
        message: `request_id ${req.request_id} was already used by this client for different arguments (pending_id ${existing.id}); use a new request_id`,
      };
    }
  }
  const kind = input.kinds.of(req.tool);
  if (kind.twinRule) {
    // The twin rule (contracts 3.1, 7; the kind says whether it has it): an identical request still PENDING
    // is returned instead of queued again (a model that resends must not make the owner approve twice).
    for (const c of input.active) {
      if (c.tool === req.tool && c.client === req.client && sameRequest(input.kinds, c, req)) {
        return { kind: 'existing', command: c };
      }
    }
  }
  // Contract 1.3/3.2 (v2): after the request_id and twin rules (a repeat is not a new command), and in
  // the same synchronous step as the broker's insert, so no interleaving of requests (a JSON-RPC batch,
  // parallel POSTs, many sessions) can pass a cap.
  const refused = overCap(input);
  if (refused !== undefined) return refused;
  // Contract 11: after validation, the request_id/twin rules (and the caps: nothing is queued past them),
  // the owner's rules in order; the first true one decides.
  const verdict = input.rules(req);
  if (verdict.kind === 'deny') {
    const denied: Intake = { kind: 'deny', deniedBy: `rule:${verdict.rule}` };
    return verdict.note === undefined ? denied : { ...denied, note: verdict.note };
  }
  // Contract 9: fixed at submit from the config of the day, so a later config change never alters what a
  // waiting command needs. Contract 11: an `ask` rule raises it (never lowers it) where quorum applies.
  const own = input.policy(req.command)?.approvals ?? 1;
  const asked = verdict.kind === 'ask' && kind.quorum ? (verdict.approvals ?? 1) : 1;
  const needed = Math.max(own, asked);
  // Contract 13.3: a passkey-required command is approved by owners' hands only — no grant, no policy,
  // no rule (a grant made before the config asked for passkeys still matches nothing here).
  const passkey = input.passkey(req.command) ? ({ passkey: true } as const) : {};
  if (needed > 1 && kind.quorum) {
    return { kind: 'create', approvalsNeeded: needed, ...passkey };
  }
  if ('passkey' in passkey) return { kind: 'create', passkey: true };
  // Contract 11: a deny rule that failed for this request: no allow rule, grant or policy approves it.
  if (verdict.failClosed) return { kind: 'create' };
  // Contract 11 / rule 1 (v3): an `allow` rule approves at submit like a grant — never a kind that cannot
  // be granted (a cue opens the owner's window) nor a command needing several owners (returned above);
  // for those it counts as `ask`.
  if (verdict.kind === 'allow' && kind.grantRefusal === undefined) {
    return { kind: 'create', approvedBy: `rule:${verdict.rule}` };
  }
  // Contract 8: after validation and the request_id/twin rules, the oldest live grant that matches approves
  // the command in the transaction that creates it and takes its use. A policy approval (contract 7
  // trust_read_only_hint) is made the same way. Owners see only the approved version.
  // Rule 1 (v2): a command needing several owners is approved by them only — no grant, no policy.
  // A request the policy approves anyway takes no grant's use (unless a rule asks: then no policy applies).
  const policyApplies = verdict.kind === 'none' && req.approved_by !== undefined;
  const grant = policyApplies ? undefined : grantFor(req, kind, input.grants);
  if (grant !== undefined) return { kind: 'create', approvedBy: `grant:${grant.id}`, grant };
  // Contract 11: `ask` (or an allow counting as ask) waits for the owners: grants may approve, policies not.
  if (verdict.kind !== 'none') return { kind: 'create' };
  return req.approved_by === undefined ? { kind: 'create' } : { kind: 'create', approvedBy: req.approved_by };
}

/** The TooManyPending refusal when the client may not queue one more command now, else undefined. */
function overCap(input: IntakeInput): Intake | undefined {
  const mine = input.pendingOfClient;
  if (mine >= input.maxPendingPerClient) {
    return {
      kind: 'refused',
      code: 'TooManyPending',
      cap: 'max_pending_per_client',
      message: `max_pending_per_client is ${input.maxPendingPerClient} and this client already has ${mine} PENDING commands, so nothing was queued; wait for your pending commands to be decided (await_command_result) before queueing more`,
    };
  }
  if (input.pending >= input.maxPending) {
    return {
      kind: 'refused',
      code: 'TooManyPending',
      cap: 'max_pending',
      message: `max_pending is ${input.maxPending} and all clients together already have ${input.pending} PENDING commands, so nothing was queued; wait for pending commands (yours: ${mine}) to be decided (await_command_result) before queueing more`,
    };
  }
  return undefined;
}

/** The grant that approves this request at submit, if any: never one of a kind that cannot be granted (contract 8). */
function grantFor(req: SubmitRequest, kind: KindPolicy, grants: IntakeInput['grants']): Grant | undefined {
  if (kind.grantRefusal !== undefined) return undefined;
  return grants.match(req);
}

/**
 * The new command `intake` said to create, as submitted (version 1, awaiting review until `reviewMs`
 * from `now`), with the fields its kind stores (`kinds`). Pure: the broker hands in the id and the time.
 */
export function commandOf(
  req: SubmitRequest,
  id: string,
  now: number,
  reviewMs: number,
  approvalsNeeded: number | undefined,
  kinds: KindPolicies,
  passkey = false,
  node?: string,
): Command {
  const command: Command = {
    id,
    version: 1,
    tool: req.tool,
    command: req.command,
    args: req.args,
    display: req.display,
    client: req.client,
    created_at: iso(now),
    review_expires_at: iso(now + reviewMs),
    phase: { state: 'awaiting_review' },
    ...kinds.fields(req),
  };
  if (node !== undefined) command.node = node;
  if (req.justification !== undefined) command.justification = req.justification;
  if (req.request_id !== undefined) command.request_id = req.request_id;
  if (req.task !== undefined) command.task = req.task;
  // Contract 20: an owner's revert names what it takes back, and comes with its preview (the diff back),
  // made from the read that checked the file — so the launch-time check binds it. Only the owner edge sets them.
  if (req.revert_of !== undefined) command.revert_of = req.revert_of;
  if (req.preview !== undefined) command.preview = req.preview;
  if (approvalsNeeded !== undefined) {
    command.approvals_needed = approvalsNeeded;
    command.approvals = [];
  }
  if (passkey) command.passkey_required = true;
  return command;
}
