/**
 * The frames that read what the store holds (contracts.md 5, 14): `history` (with its search), `audit` (a
 * command's audit entries, or the JSONL export) and `args` (a command's whole arguments, past the View's
 * 16 KiB preview). Nothing here changes state.
 */
import { HISTORY_DEFAULT } from '../owner-protocol/index.js';
import { argsAnswer } from './args-frame.js';
import { auditAnswer, searchOf } from './audit-frame.js';
import type { Handlers } from './frame-deps.js';

export const readFrames: Handlers<'history' | 'audit' | 'args'> = {
  async history(d, owner, f) {
    const broker = d.ctx.broker;
    const filter = searchOf(f);
    d.out.sendViews(
      owner,
      `{"type":"history","req_id":${JSON.stringify(f.req_id)},"commands":[`,
      filter === undefined
        ? await broker.history(f.limit ?? HISTORY_DEFAULT, f.before)
        : await broker.search(filter, f.limit ?? HISTORY_DEFAULT, f.before),
      ']}',
    );
  },
  async audit(d, owner, f) {
    d.out.send(owner, await auditAnswer(d.ctx.broker, f));
  },
  async args(d, owner, f) {
    // An addition to contract 5: a View's arguments past 16 KiB, whole, when the owner opens them.
    d.out.sendText(owner, argsAnswer(d.ctx.broker, f));
  },
};
