/**
 * What an owner's frames do (contracts.md 5, 8, 9): each text frame is parsed (owner-protocol/) and handed
 * to its type's handler — one table, HANDLERS, joined from one file per group of frames (decisions, grants,
 * reads, passkeys, push, the daemon's own) — which maps it onto the broker with a `reply`, or answers with
 * data. A bad frame gets a `BadMessage` reply and the socket stays open. The table is typed so that a frame
 * type without its handler does not compile.
 *
 * Every decision is recorded under the owner's name (`decided_by`, the audit actor; contract 9), and every
 * frame is checked against the store first, so nothing a socket sends is acted on after its token was
 * replaced (a rotation in another process may not have been polled yet).
 *
 * ```
 *  message ─▶ token current? ─no─▶ close 1008
 *                │ yes
 *             parse ─bad─▶ reply BadMessage (socket stays open)
 *                │ ok
 *             HANDLERS[type] ─▶ broker.approve/deny/reconcile/grant/revoke ─▶ (upserts to all) ─▶ reply
 *                            ─▶ broker.history / grants / args … ─▶ history / grants / args …
 * ```
 */

import type { ClientFrame, ClientType } from '../owner-protocol/index.js';
import { parseClientFrame } from '../owner-protocol/index.js';
import { daemonFrames } from './daemon-frames.js';
import { decisionFrames } from './decision-frames.js';
import { type ActionDeps, type Handlers, reply } from './frame-deps.js';
import { grantFrames } from './grant-frames.js';
import { passkeyFrames } from './passkey-frames.js';
import { pushFrames } from './push-frames.js';
import { readFrames } from './read-frames.js';
import type { Owner } from './registry.js';
import { ruleFrames } from './rule-frames.js';

export type { ActionDeps };

/** Every frame type's handler; a type without one is a compile error here. */
const HANDLERS: Handlers<ClientType> = {
  ...decisionFrames,
  ...grantFrames,
  ...readFrames,
  ...passkeyFrames,
  ...pushFrames,
  ...daemonFrames,
  ...ruleFrames,
};

/** Acts on one frame from `owner`. A broker failure closes that owner's socket (1011) and is logged. */
export function onOwnerFrame(d: ActionDeps, owner: Owner, data: Buffer, isBinary: boolean): void {
  // Re-checked on every frame: a rotation in another process may not have been polled yet.
  if (!d.ctx.tokens.isCurrent(owner.cred)) {
    d.owners.revoke(owner);
    return;
  }
  if (isBinary) {
    reply(d, owner, null, {
      ok: false,
      code: 'BadMessage',
      message: 'frames must be JSON text, got a binary frame',
    });
    return;
  }
  const parsed = parseClientFrame(data.toString('utf8'));
  if (!parsed.ok) {
    reply(d, owner, parsed.req_id, { ok: false, code: 'BadMessage', message: parsed.message });
    return;
  }
  act(d, owner, parsed.frame).catch((e: unknown) => {
    // A broker failure (e.g. the disk) is not the owner's mistake: say so and let the tab resync.
    d.ctx.log.log('error', 'owner_action_failed', {
      type: parsed.frame.type,
      error: (e as Error).message,
    });
    owner.ws.close(1011, 'internal error; reconnect to resync');
  });
}

/** Replies after the broker's commit, so the acting owner hears the upsert before its reply. */
function act(d: ActionDeps, owner: Owner, f: ClientFrame): Promise<void> {
  return (HANDLERS[f.type] as (d: ActionDeps, owner: Owner, f: ClientFrame) => Promise<void>)(d, owner, f);
}
