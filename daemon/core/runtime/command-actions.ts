/**
 * What each action on a command means as a lifecycle event (contracts.md 2, 5, 9; lifecycle.md): the
 * owner's approve and deny (checked by owner-decisions.ts first), the client's cancel, the owner's reconcile of an
 * `unknown` outcome, and the retention pass's prune. Each reads the command as the working view has it (so a
 * change queued this turn counts), builds its event and actor, and hands it to the broker's `apply`, which
 * transitions, queues it on the group commit and answers after the commit. An answer that changes nothing
 * (a refusal, an unchanged command) is still given only once the pending batch committed (`settled`).
 *
 * The signatures are BrokerApi's, written here once: the broker hands these methods out as they are, each
 * through the fleet's retry (issue 37 item 4); it keeps the one `apply`. grant-actions.ts is the grants' half.
 */
import { type Clock, iso } from '../../base/index.js';
import type { Also } from '../decisions/index.js';
import { decisionRefusal, passkeyRefusal, type Refusal } from '../decisions/index.js';
import type { Actor, Command, Event } from '../model/index.js';
import { sha256Digest } from '../model/index.js';
import type { ActionResult, Amendment, ApproveGrant, BrokerApi, PasskeyEvidence } from '../ports/index.js';
import type { GrantActions } from './grant-actions.js';

export interface CommandActionsDeps {
  clock: Clock;
  grantActions: GrantActions;
  /** The command as the working view has it: changed by this turn or not (else the store's). */
  current(id: string): Command | undefined;
  /** The command as last committed (the broker's `get`). */
  get(id: string): Command | undefined;
  /** An answer given once the pending batch committed (the broker's `#settled`). */
  settled<T>(answer: () => T): Promise<T>;
  /** The broker's one change path: transition, working view, group commit, then the announcement. */
  apply(c: Command, event: Event, actor: Actor, also?: Also): Promise<ActionResult>;
}

const DAEMON: Actor = { kind: 'daemon', name: 'daemon' };

/** The command actions of BrokerApi, written here once (the broker runs them through the fleet's retry). */
export type CommandActionName = 'approve' | 'deny' | 'cancel' | 'reconcile' | 'amend';

export class CommandActions implements Pick<BrokerApi, CommandActionName> {
  readonly #deps: CommandActionsDeps;

  constructor(deps: CommandActionsDeps) {
    this.#deps = deps;
  }

  approve(
    id: string,
    version: number,
    by: string,
    grant?: ApproveGrant,
    passkey?: PasskeyEvidence,
    via?: string,
  ): Promise<ActionResult> {
    const event: Event = { type: 'approve', at: this.#now(), by };
    if (passkey?.ok === true) event.passkey = passkey.kept;
    if (via !== undefined) event.via = via;
    const refused = passkeyRefusal(this.#deps.current(id), passkey);
    // Contract 9: an approval short of the quorum is recorded and the command keeps waiting; the one that
    // makes it `approved` launches it (the broker's apply). With a grant, both commit together
    // (grant-actions.ts).
    if (grant === undefined) return this.#decide(id, version, event, by, undefined, refused);
    const decide = (also: Also) => this.#decide(id, version, event, by, also, refused);
    return this.#deps.grantActions.approveWithGrant(this.#deps.current(id), id, grant, by, decide);
  }

  deny(id: string, version: number, by: string, note?: string, via?: string): Promise<ActionResult> {
    const event: Event = { type: 'deny', at: this.#now(), by };
    if (note !== undefined) event.note = note;
    if (via !== undefined) event.via = via;
    return this.#decide(id, version, event, by);
  }

  /** Caller cancel while awaiting review; otherwise the command unchanged (ok). */
  cancel(id: string, by: string): Promise<ActionResult> {
    const { current, settled, get, apply } = this.#deps;
    const c = current(id);
    if (!c) return settled(() => ({ ok: false, code: 'NotFound', message: `no command ${id}` }));
    if (c.phase.state !== 'awaiting_review') {
      return settled(() => ({ ok: true, command: get(id) ?? c }));
    }
    return apply(c, { type: 'cancel', at: this.#now(), by }, { kind: 'client', name: by });
  }

  reconcile(
    id: string,
    outcome: 'delivered' | 'not_delivered',
    by: string,
    note?: string,
  ): Promise<ActionResult> {
    const c = this.#deps.current(id);
    if (!c) return this.#deps.settled(() => ({ ok: false, code: 'NotFound', message: `no command ${id}` }));
    const event: Event = { type: 'reconcile', at: this.#now(), by, outcome };
    if (note !== undefined) event.note = note;
    return this.#deps.apply(c, event, { kind: 'owner', name: by });
  }

  /**
   * The retention rule (retention-rule.ts) applied to one final command, as a change of its own: version + 1,
   * an appended `prune` audit entry naming what went, an upsert to owners. `NothingToPrune` is a refusal.
   */
  prune(id: string): Promise<{ ok: boolean }> {
    const c = this.#deps.current(id);
    if (!c) return Promise.resolve({ ok: false });
    return this.#deps.apply(c, { type: 'prune', at: this.#now(), digest: sha256Digest }, DAEMON);
  }

  /**
   * Kind fields the daemon learnt while the command awaits review (contract 12: its preview), as an
   * `amend`: the same version, an audit entry `action`, an upsert to owners; `AlreadyDecided` once decided.
   */
  amend(id: string, { fields, action, detail }: Amendment): Promise<ActionResult> {
    const c = this.#deps.current(id);
    if (!c) return this.#deps.settled(() => ({ ok: false, code: 'NotFound', message: `no command ${id}` }));
    return this.#deps.apply(c, { type: 'amend', at: this.#now(), fields, action, detail }, DAEMON);
  }

  /**
   * An owner's decision: the checks of contracts 5 and 9 (owner-decisions.ts), then `after` (contract 13.3: a
   * missing or bad passkey), then the change.
   */
  #decide(
    id: string,
    version: number,
    event: Event,
    by: string,
    also?: Also,
    after?: Refusal,
  ): Promise<ActionResult> {
    const c = this.#deps.current(id);
    const refused = decisionRefusal(c, id, version, event, by) ?? after;
    if (refused !== undefined) return this.#deps.settled(() => refused);
    // No command is a refusal (NotFound): c is there.
    return this.#deps.apply(c!, event, { kind: 'owner', name: by }, also);
  }

  #now(): string {
    return iso(this.#deps.clock.now());
  }
}
