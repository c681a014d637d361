/**
 * The grant frames (contracts.md 8, 11): make a grant, revoke one, list them (`grants`, with ended ones for
 * `grant list --all`), and `policy_test`, a rule or grant tried against the newest commands, judged through
 * the kinds the edge was handed (OwnerContext.kinds).
 */
import type { GrantSpec } from '../core/index.js';
import { grantMatcher, POLICY_TEST_DEFAULT, policyTest, ruleMatcher } from '../rules/index.js';
import { type Handlers, reply } from './frame-deps.js';

/** `grant list --all`: the newest this many grants in any state. */
const GRANTS_ALL_MAX = 1000;

export const grantFrames: Handlers<'grant' | 'revoke' | 'grants' | 'policy_test'> = {
  async grant(d, owner, f) {
    const spec: GrantSpec = { command: f.command, client: f.client, ttl_s: f.ttl_s };
    if (f.args !== undefined) spec.args = f.args;
    if (f.when !== undefined) spec.when = f.when;
    if (f.uses !== undefined) spec.uses = f.uses;
    if (f.note !== undefined) spec.note = f.note;
    // Contract 16 (v4): absent, the broker names this node (the one the owner is connected to).
    if (f.node !== undefined) spec.node = f.node;
    reply(d, owner, f.req_id, await d.ctx.broker.grant(spec, owner.by));
  },
  async revoke(d, owner, f) {
    reply(d, owner, f.req_id, await d.ctx.broker.revoke(f.grant_id, owner.by));
  },
  async grants(d, owner, f) {
    const broker = d.ctx.broker;
    d.out.send(owner, {
      type: 'grants',
      req_id: f.req_id,
      grants: f.all === true ? await broker.recentGrants(GRANTS_ALL_MAX) : broker.liveGrants(),
    });
  },
  async policy_test(d, owner, f) {
    // Contract 11: against the newest `limit` commands, read in pages through the broker's history; for a
    // grant (v4), the newest of its command only, so a flood of other requests cannot push them out.
    const broker = d.ctx.broker;
    const kinds = d.ctx.kinds;
    const matches = f.rule !== undefined ? ruleMatcher(f.rule.when, kinds) : grantMatcher(f.grant!, kinds);
    const command = f.rule !== undefined ? undefined : f.grant!.command;
    const answer = await policyTest(
      (limit, before) =>
        command === undefined ? broker.history(limit, before) : broker.search({ command }, limit, before),
      f.limit ?? POLICY_TEST_DEFAULT,
      matches,
    );
    d.out.send(owner, { type: 'policy_test', req_id: f.req_id, ...answer });
  },
};
