/**
 * The passkey frames (contract 13.3): `approve_challenge` (a challenge over exactly what approving a version
 * means) and adding, listing and removing the owner's passkeys. What each does, and who may, is in
 * passkey-actions.ts; here each is answered with its own message or a reply.
 */
import type { PasskeyFrame } from '../owner-protocol/index.js';
import { type ActionDeps, type Handlers, reply } from './frame-deps.js';
import { approveChallenge, type PasskeyAnswer, passkeyFrame } from './passkey-actions.js';
import type { Owner } from './registry.js';

/** A passkey frame's answer: its own message, or a reply. */
function answer(d: ActionDeps, owner: Owner, reqId: string, a: PasskeyAnswer): void {
  if ('send' in a) d.out.send(owner, a.send);
  else reply(d, owner, reqId, a.reply);
}

type PasskeyType = 'passkey_begin' | 'passkey_finish' | 'passkey_list' | 'passkey_remove';

/** Adding, listing and removing passkeys: one ceremony (passkey-actions.ts `passkeyFrame`). */
async function ceremony(d: ActionDeps, owner: Owner, f: PasskeyFrame): Promise<void> {
  answer(d, owner, f.req_id, await passkeyFrame({ ctx: d.ctx, desk: d.passkeys }, owner, f));
}

export const passkeyFrames: Handlers<'approve_challenge' | PasskeyType> = {
  async approve_challenge(d, owner, f) {
    answer(d, owner, f.req_id, await approveChallenge({ ctx: d.ctx, desk: d.passkeys }, owner, f));
  },
  passkey_begin: ceremony,
  passkey_finish: ceremony,
  passkey_list: ceremony,
  passkey_remove: ceremony,
};
