/**
 * The owner's decisions on a command (contracts.md 5, 9): `approve` (with a grant to allow again, and a
 * passkey's assertion: contract 13.3), `deny`, and `reconcile` of an unknown outcome. Each is recorded under
 * the owner's name and answered with a `reply` after the broker's commit, so the acting owner hears the
 * upsert first.
 */
import { type Handlers, reply } from './frame-deps.js';
import { approvalEvidence } from './passkey-actions.js';

export const decisionFrames: Handlers<'approve' | 'deny' | 'reconcile' | 'revert'> = {
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
  /**
   * Contract 20: the owner's revert is a command of their own (client `owner:<name>`, `revert_of`), and
   * sending this frame is its approval — one of its quorum's, or none when it needs the owner's passkey
   * (then the owner approves it with the passkey, as any such command).
   */
  async revert(d, owner, f) {
    const plan = d.ctx.revert
      ? await d.ctx.revert(d.ctx.broker.get(f.id))
      : { ok: false as const, code: 'NotRevertible' as const, message: 'NotRevertible: no kind reverts' };
    if (!plan.ok) return reply(d, owner, f.req_id, plan);
    const submitted = await d.ctx.broker.submit({ ...plan.request, client: `owner:${owner.by}` });
    if (!submitted.ok)
      return reply(d, owner, f.req_id, { ok: false, code: 'BadMessage', message: submitted.message });
    const c = submitted.command;
    if (c.phase.state === 'awaiting_review' && c.passkey_required !== true) {
      const r = await d.ctx.broker.approve(c.id, c.version, owner.by);
      if (!r.ok && r.code !== 'AlreadyApproved') return reply(d, owner, f.req_id, r);
    }
    d.out.send(owner, { type: 'revert', req_id: f.req_id, id: c.id });
  },
};
