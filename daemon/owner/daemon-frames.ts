/**
 * The frames that ask the running daemon about itself (contract 17): the terminal's `doctor`, `notify test`
 * and `reload`, answered with this daemon's own environment, channels and config. A daemon built without
 * them (OwnerContext.diagnose or .reload absent) answers NotFound.
 */
import { type Handlers, reply } from './frame-deps.js';

export const daemonFrames: Handlers<'doctor' | 'notify_test' | 'reload'> = {
  async doctor(d, owner, f) {
    const diagnose = d.ctx.diagnose;
    if (diagnose === undefined) {
      reply(d, owner, f.req_id, { ok: false, code: 'NotFound', message: 'this daemon answers no diagnosis' });
      return;
    }
    d.out.send(owner, {
      type: 'doctor',
      req_id: f.req_id,
      pid: process.pid,
      config_sha256: diagnose.configSha256,
      checks: await diagnose.doctor(),
    });
  },
  async notify_test(d, owner, f) {
    const diagnose = d.ctx.diagnose;
    if (diagnose === undefined) {
      reply(d, owner, f.req_id, { ok: false, code: 'NotFound', message: 'this daemon answers no diagnosis' });
      return;
    }
    const results = await diagnose.notifyTest(f.channel);
    if (typeof results === 'string') {
      reply(d, owner, f.req_id, { ok: false, code: 'BadMessage', message: results });
      return;
    }
    d.out.send(owner, { type: 'notify_test', req_id: f.req_id, pid: process.pid, results });
  },
  async reload(d, owner, f) {
    const reload = d.ctx.reload;
    if (reload === undefined) {
      reply(d, owner, f.req_id, { ok: false, code: 'NotFound', message: 'this daemon cannot reload' });
      return;
    }
    d.out.send(owner, { type: 'reload', req_id: f.req_id, pid: process.pid, ...(await reload()) });
  },
};
