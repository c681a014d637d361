/**
 * The rule frames (contract 18): list every rule, and the owners' changes of theirs — add, update (edit,
 * disable), remove — answered with the rule made (as `rules` lists it) or a `reply` saying why not
 * (`BadMessage`, `NotFound` for a config rule's id or none). What a change does (the store, the audit
 * entry, the `config` notification, every node's rule book) is the desk's (app/owner-rules.ts).
 */
import type { RulePatch, RulesDesk } from './context.js';
import { type ActionDeps, type Handlers, reply } from './frame-deps.js';
import type { Owner } from './registry.js';

function desk(d: ActionDeps, owner: Owner, reqId: string): RulesDesk | undefined {
  const rules = d.ctx.rules;
  if (rules === undefined)
    reply(d, owner, reqId, { ok: false, code: 'NotFound', message: 'this daemon keeps no owners’ rules' });
  return rules;
}

export const ruleFrames: Handlers<'rules' | 'rule_add' | 'rule_update' | 'rule_remove'> = {
  async rules(d, owner, f) {
    const rules = desk(d, owner, f.req_id);
    if (rules === undefined) return;
    d.out.send(owner, { type: 'rules', req_id: f.req_id, rules: await rules.list() });
  },
  async rule_add(d, owner, f) {
    const rules = desk(d, owner, f.req_id);
    if (rules === undefined) return;
    const r = await rules.add(f.rule, f.position, owner.by);
    if (r.ok) d.out.send(owner, { type: 'rule_add', req_id: f.req_id, rule: r.rule });
    else reply(d, owner, f.req_id, r);
  },
  async rule_update(d, owner, f) {
    const rules = desk(d, owner, f.req_id);
    if (rules === undefined) return;
    const { type: _t, req_id: _r, id, ...patch } = f;
    const r = await rules.update(id, patch as RulePatch, owner.by);
    if (r.ok) d.out.send(owner, { type: 'rule_update', req_id: f.req_id, rule: r.rule });
    else reply(d, owner, f.req_id, r);
  },
  async rule_remove(d, owner, f) {
    const rules = desk(d, owner, f.req_id);
    if (rules === undefined) return;
    const r = await rules.remove(f.id, owner.by);
    if (r.ok) d.out.send(owner, { type: 'rule_remove', req_id: f.req_id, id: f.id });
    else reply(d, owner, f.req_id, r);
  },
};
