/**
 * What every owner frame handler shares (frames.ts dispatches to them): the deps a handler acts with, the
 * shape of a group's handler table, and `reply`, the answer to an action. Its own file so the handler
 * groups and the table that joins them import it without importing each other.
 */
import type { ReplyCode } from '../../common/owner-messages.js';
import type { ActionResult, GrantResult } from '../core/index.js';
import type { ClientType, FrameOf } from '../owner-protocol/index.js';
import type { OwnerContext } from './context.js';
import type { FanOut } from './fanout.js';
import type { PasskeyCeremonies } from './passkey-ceremonies.js';
import type { Owner, OwnerRegistry } from './registry.js';

/** What acting on frames needs: the broker and tokens (ctx), the owners, and the way back to them. */
export interface ActionDeps {
  ctx: OwnerContext;
  owners: OwnerRegistry;
  out: FanOut;
  /** Contract 13.3: passkeys, approval challenges, ceremonies. */
  passkeys: PasskeyCeremonies;
}

/** One handler per frame type of a group; frames.ts joins the groups, and the compiler checks none is missing. */
export type Handlers<T extends ClientType> = {
  [K in T]: (d: ActionDeps, owner: Owner, f: FrameOf<K>) => Promise<void>;
};

/** Sends the `reply` of an action: ok (with the grant made, if any), or the code and message of a refusal. */
export function reply(
  d: ActionDeps,
  owner: Owner,
  reqId: string | null,
  r: ActionResult | GrantResult | { ok: true } | { ok: false; code: ReplyCode; message: string },
): void {
  if (r.ok) {
    const grant = 'grant' in r ? r.grant : undefined;
    d.out.send(owner, { type: 'reply', req_id: reqId, ok: true, ...(grant ? { grant } : {}) });
  } else
    d.out.send(owner, {
      type: 'reply',
      req_id: reqId,
      ok: false,
      error: { code: r.code as ReplyCode, message: r.message },
    });
}
