/**
 * The owner's grant actions (contracts.md 5 v2 and 8): approve-with-grant, grant, revoke. The checks are
 * owner-decisions.ts's pure functions and the memory is grant-book.ts's; this file is the plumbing between them
 * and the broker's group commit. A grant change is taken into the working view at once (the next request of
 * the same turn matches it, or no longer does), written in the turn's batch, and heard of only after that
 * commit (grant-book.ts `committed`). `grant` and `revoke` are BrokerApi's, written here once: the broker
 * hands them out as they are, through the fleet's retry (issue 37 item 4).
 */
import { type Clock, iso } from '../../base/index.js';
import type { Also } from '../decisions/index.js';
import { grantRefusal, grantSpecOf, revokeAnswer } from '../decisions/index.js';
import type { Command, KindPolicies } from '../model/index.js';
import { end } from '../model/index.js';
import type { ActionResult, ApproveGrant, BrokerApi, GrantResult, GrantSpec } from '../ports/index.js';
import type { GrantBook } from './grant-book.js';

export interface GrantActionsDeps {
  grants: GrantBook;
  kinds: KindPolicies;
  clock: Clock;
  /** An answer given once the pending batch committed (the broker's `#settled`). */
  settled<T>(answer: () => T): Promise<T>;
}

/** The grant actions of BrokerApi, written here once (the broker runs them through the fleet's retry). */
export type GrantActionName = 'grant' | 'revoke';

export class GrantActions implements Pick<BrokerApi, GrantActionName> {
  readonly #deps: GrantActionsDeps;

  constructor(deps: GrantActionsDeps) {
    this.#deps = deps;
  }

  /**
   * Contract 5 (v2): approve and create the grant in one transaction; a command that cannot be granted is
   * NotGrantable and nothing is approved. The approval that creates a grant takes none of its uses.
   * `c` is the command as the working view has it; `decide` is the broker's owner decision, carrying the
   * grant's change with the approval's.
   */
  approveWithGrant(
    c: Command | undefined,
    id: string,
    grant: ApproveGrant,
    by: string,
    decide: (also: Also) => Promise<ActionResult>,
  ): Promise<ActionResult> {
    const { grants, kinds } = this.#deps;
    const refused = c === undefined ? undefined : grantRefusal(c, kinds, (name) => grants.refusal(name));
    if (c !== undefined && refused !== undefined && c.phase.state === 'awaiting_review') {
      return this.#deps.settled(() => ({ ok: false, code: 'NotGrantable', message: refused }));
    }
    const made = grants.create(grantSpecOf(c, grant), by);
    const r = decide({
      apply: () => grants.take(made),
      write: grants.writer(made, 'grant_created', { kind: 'owner', name: by }, { command_id: id }),
      after: () => grants.committed(made),
    });
    return r.then((done) => (done.ok ? { ok: true, command: done.command, grant: made } : done));
  }

  /** Contract 8: an owner grant, unless its command can never be granted (NotGrantable). */
  grant(spec: GrantSpec, by: string): Promise<GrantResult> {
    const { grants } = this.#deps;
    const refused = grants.refusal(spec.command);
    if (refused !== undefined)
      return this.#deps.settled(() => ({ ok: false, code: 'NotGrantable', message: refused }));
    const made = grants.create(spec, by);
    return grants
      .change(made, 'grant_created', { kind: 'owner', name: by })
      .then(() => ({ ok: true, grant: made }));
  }

  /** Contract 8: ends a grant at once; an ended one is ok, a config grant NotRevocable, none NotFound. */
  revoke(id: string, by: string): Promise<GrantResult> {
    const { grants } = this.#deps;
    const g = grants.get(id);
    const answer = revokeAnswer(g, id);
    if (answer !== undefined) return this.#deps.settled(() => answer);
    // No grant is an answer (NotFound): g is there.
    const ended = end(g!, 'revoked', iso(this.#deps.clock.now()));
    return grants
      .change(ended, 'grant_revoked', { kind: 'owner', name: by })
      .then(() => ({ ok: true, grant: ended }));
  }
}
