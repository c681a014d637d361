/**
 * The owner's decisions on a command (contracts.md 5, 9): `approve` (with a grant to allow again, and a
 * passkey's assertion: contract 13.3), `deny`, and `reconcile` of an unknown outcome. Each is recorded under
 * the owner's name and answered with a `reply` after the broker's commit, so the acting owner hears the
 * upsert first.
 */
import type { RevertPlan } from './context.js';
import { type ActionDeps, type Handlers, reply } from './frame-deps.js';
import { approvalEvidence } from './passkey-actions.js';

/** Contract 20: the revert of command `id` as the file is now (read through the preview connection). */
function planned(d: ActionDeps, id: string): Promise<RevertPlan> {
  return d.ctx.revert
    ? d.ctx.revert(d.ctx.broker.get(id))
    : Promise.resolve({ ok: false, code: 'NotRevertible', message: 'NotRevertible: no kind reverts' });
}

export const decisionFrames: Handlers<'approve' | 'deny' | 'reconcile' | 'revert' | 'revert_check'> = {
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
    const plan = await planned(d, f.id);
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
  /**
   * Contract 20, "checked by reading it": what a revert would write now — the diff back, from a read of the
   * file — or why there is none. The card offers the confirm only on this answer; nothing is queued.
   */
  async revert_check(d, owner, f) {
    const plan = await planned(d, f.id);
    if (!plan.ok) return reply(d, owner, f.req_id, plan);
    const preview = plan.request.preview;
    if (preview === undefined)
      return reply(d, owner, f.req_id, {
        ok: false,
        code: 'NotRevertible',
        message: 'NotRevertible: no diff back',
      });
    d.out.send(owner, { type: 'revert_check', req_id: f.req_id, id: f.id, preview });
  },
};
