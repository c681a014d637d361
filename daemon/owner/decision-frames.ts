/**
 * The owner's decisions on a command (contracts.md 5, 9): `approve` (with a grant to allow again, and a
 * passkey's assertion: contract 13.3), `deny`, and `reconcile` of an unknown outcome. Each is recorded under
 * the owner's name and answered with a `reply` after the broker's commit, so the acting owner hears the
 * upsert first.
 */
import { type Handlers, reply } from './frame-deps.js';
import { approvalEvidence } from './passkey-actions.js';

export const decisionFrames: Handlers<'approve' | 'deny' | 'reconcile'> = {
  async approve(d, owner, f) {
    // Contract 13.3: an assertion is checked here (the edge); the broker refuses a passkey-required
    // command without verified evidence (PasskeyRequired), after the contract 5/9 checks.
    const evidence = await approvalEvidence({ ctx: d.ctx, desk: d.passkeys }, owner.cred, f);
    reply(d, owner, f.req_id, await d.ctx.broker.approve(f.id, f.version, owner.by, f.grant, evidence));
  },
  async deny(d, owner, f) {
    reply(d, owner, f.req_id, await d.ctx.broker.deny(f.id, f.version, owner.by, f.note));
  },
  async reconcile(d, owner, f) {
    reply(d, owner, f.req_id, await d.ctx.broker.reconcile(f.id, f.outcome, owner.by, f.note));
  },
};
