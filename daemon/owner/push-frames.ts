/**
 * The Web Push frames (contract 13.2): the signed-in owner's devices — add this one, remove one, list them.
 * Without Web Push (OwnerContext.push absent) each is answered NotFound.
 */
import type { OwnerPush } from './context.js';
import { type ActionDeps, type Handlers, reply } from './frame-deps.js';
import type { Owner } from './registry.js';

/** Web Push, or false after answering NotFound. */
function pushOf(d: ActionDeps, owner: Owner, reqId: string): OwnerPush | false {
  if (d.ctx.push !== undefined) return d.ctx.push;
  reply(d, owner, reqId, { ok: false, code: 'NotFound', message: 'Web Push is not available here' });
  return false;
}

export const pushFrames: Handlers<'push_subscribe' | 'push_unsubscribe' | 'push_list'> = {
  async push_list(d, owner, f) {
    const push = pushOf(d, owner, f.req_id);
    if (push) d.out.send(owner, { type: 'push_devices', req_id: f.req_id, devices: push.list(owner.by) });
  },
  async push_subscribe(d, owner, f) {
    const push = pushOf(d, owner, f.req_id);
    if (!push) return;
    await push.subscribe(owner.by, f.subscription, owner.userAgent);
    reply(d, owner, f.req_id, { ok: true });
  },
  async push_unsubscribe(d, owner, f) {
    const push = pushOf(d, owner, f.req_id);
    if (!push) return;
    const gone = await push.unsubscribe(owner.by, f.endpoint);
    reply(
      d,
      owner,
      f.req_id,
      gone ? { ok: true } : { ok: false, code: 'NotFound', message: 'no device of yours has this endpoint' },
    );
  },
};
