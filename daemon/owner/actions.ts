/**
 * What an owner's frames do (contracts.md 5, 8, 9): each text frame is parsed (protocol.ts) and mapped onto
 * the broker — `approve` / `deny` / `reconcile` / `grant` / `revoke` — with a `reply`, or answered with
 * data (`grants`, `history`, `args`). A bad frame gets a `BadMessage` reply and the socket stays open.
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
 *             broker.approve/deny/reconcile/grant/revoke ─▶ (upserts to all) ─▶ reply
 *             broker.history / grants / args ─▶ history / grants / args
 * ```
 */

import type { ReplyCode } from '../../common/owner-messages.js';
import type { ActionResult, GrantResult, GrantSpec } from '../core/index.js';
import { KINDS } from '../kinds/index.js';
import { grantMatcher, POLICY_TEST_DEFAULT, policyTest, ruleMatcher } from '../rules/index.js';
import { argsAnswer } from './args-frame.js';
import { auditAnswer, searchOf } from './audit-frame.js';
import type { FanOut } from './fanout.js';
import { approvalEvidence, approveChallenge, type PasskeyAnswer, passkeyFrame } from './passkey-actions.js';
import type { PasskeyCeremonies } from './passkey-ceremonies.js';
import { type ClientFrame, HISTORY_DEFAULT, parseClientFrame } from './protocol.js';
import type { Owner, OwnerRegistry } from './registry.js';
import type { OwnerContext } from './setup.js';

/** `grant list --all`: the newest this many grants in any state. */
const GRANTS_ALL_MAX = 1000;

/** What acting on frames needs: the broker and tokens (ctx), the owners, and the way back to them. */
export interface ActionDeps {
  ctx: OwnerContext;
  owners: OwnerRegistry;
  out: FanOut;
  /** Contract 13.3: passkeys, approval challenges, ceremonies. */
  passkeys: PasskeyCeremonies;
}

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

function reply(
  d: ActionDeps,
  owner: Owner,
  reqId: string | null,
  r: ActionResult | GrantResult | { ok: true } | { ok: false; code: ReplyCode; message: string },
) {
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

/** A passkey frame's answer: its own message, or a reply. */
function answer(d: ActionDeps, owner: Owner, reqId: string, a: PasskeyAnswer): void {
  if ('send' in a) d.out.send(owner, a.send);
  else reply(d, owner, reqId, a.reply);
}

/** Contract 13.2: the signed-in owner's Web Push devices — add this one, remove one, list them. */
async function pushFrame(
  d: ActionDeps,
  owner: Owner,
  f: Extract<ClientFrame, { type: 'push_subscribe' | 'push_unsubscribe' | 'push_list' }>,
): Promise<void> {
  const push = d.ctx.push;
  if (push === undefined) {
    reply(d, owner, f.req_id, { ok: false, code: 'NotFound', message: 'Web Push is not available here' });
    return;
  }
  if (f.type === 'push_list') {
    d.out.send(owner, { type: 'push_devices', req_id: f.req_id, devices: push.list(owner.by) });
    return;
  }
  if (f.type === 'push_subscribe') {
    await push.subscribe(owner.by, f.subscription, owner.userAgent);
    reply(d, owner, f.req_id, { ok: true });
    return;
  }
  const gone = await push.unsubscribe(owner.by, f.endpoint);
  reply(
    d,
    owner,
    f.req_id,
    gone ? { ok: true } : { ok: false, code: 'NotFound', message: 'no device of yours has this endpoint' },
  );
}

/** Replies after the broker's commit, so the acting owner hears the upsert before its reply. */
async function act(d: ActionDeps, owner: Owner, f: ClientFrame): Promise<void> {
  const broker = d.ctx.broker;
  switch (f.type) {
    case 'approve': {
      // Contract 13.3: an assertion is checked here (the edge); the broker refuses a passkey-required
      // command without verified evidence (PasskeyRequired), after the contract 5/9 checks.
      const evidence = await approvalEvidence({ ctx: d.ctx, desk: d.passkeys }, owner.cred, f);
      reply(d, owner, f.req_id, await broker.approve(f.id, f.version, owner.by, f.grant, evidence));
      return;
    }
    case 'approve_challenge':
      answer(d, owner, f.req_id, await approveChallenge({ ctx: d.ctx, desk: d.passkeys }, owner, f));
      return;
    case 'passkey_begin':
    case 'passkey_finish':
    case 'passkey_list':
    case 'passkey_remove':
      answer(d, owner, f.req_id, await passkeyFrame({ ctx: d.ctx, desk: d.passkeys }, owner, f));
      return;
    case 'grant': {
      const spec: GrantSpec = { command: f.command, client: f.client, ttl_s: f.ttl_s };
      if (f.args !== undefined) spec.args = f.args;
      if (f.when !== undefined) spec.when = f.when;
      if (f.uses !== undefined) spec.uses = f.uses;
      if (f.note !== undefined) spec.note = f.note;
      // Contract 16 (v4): absent, the broker names this node (the one the owner is connected to).
      if (f.node !== undefined) spec.node = f.node;
      reply(d, owner, f.req_id, await broker.grant(spec, owner.by));
      return;
    }
    case 'revoke':
      reply(d, owner, f.req_id, await broker.revoke(f.grant_id, owner.by));
      return;
    case 'grants':
      d.out.send(owner, {
        type: 'grants',
        req_id: f.req_id,
        grants: f.all === true ? await broker.recentGrants(GRANTS_ALL_MAX) : broker.liveGrants(),
      });
      return;
    case 'deny':
      reply(d, owner, f.req_id, await broker.deny(f.id, f.version, owner.by, f.note));
      return;
    case 'reconcile':
      reply(d, owner, f.req_id, await broker.reconcile(f.id, f.outcome, owner.by, f.note));
      return;
    case 'args':
      // An addition to contract 5: a View's arguments past 16 KiB, whole, when the owner opens them.
      d.out.sendText(owner, argsAnswer(broker, f));
      return;
    case 'push_subscribe':
    case 'push_unsubscribe':
    case 'push_list':
      await pushFrame(d, owner, f);
      return;
    case 'policy_test': {
      // Contract 11: against the newest `limit` commands, read in pages through the broker's history; for a
      // grant (v4), the newest of its command only, so a flood of other requests cannot push them out.
      const matches = f.rule !== undefined ? ruleMatcher(f.rule.when, KINDS) : grantMatcher(f.grant!, KINDS);
      const command = f.rule !== undefined ? undefined : f.grant!.command;
      const answer = await policyTest(
        (limit, before) =>
          command === undefined ? broker.history(limit, before) : broker.search({ command }, limit, before),
        f.limit ?? POLICY_TEST_DEFAULT,
        matches,
      );
      d.out.send(owner, { type: 'policy_test', req_id: f.req_id, ...answer });
      return;
    }
    case 'history': {
      const filter = searchOf(f);
      d.out.sendViews(
        owner,
        `{"type":"history","req_id":${JSON.stringify(f.req_id)},"commands":[`,
        filter === undefined
          ? await broker.history(f.limit ?? HISTORY_DEFAULT, f.before)
          : await broker.search(filter, f.limit ?? HISTORY_DEFAULT, f.before),
        ']}',
      );
      return;
    }
    case 'audit':
      d.out.send(owner, await auditAnswer(broker, f));
      return;
    case 'doctor':
    case 'notify_test':
      await diagnoseFrame(d, owner, f);
      return;
    case 'reload': {
      const reload = d.ctx.reload;
      if (reload === undefined) {
        reply(d, owner, f.req_id, { ok: false, code: 'NotFound', message: 'this daemon cannot reload' });
        return;
      }
      d.out.send(owner, { type: 'reload', req_id: f.req_id, pid: process.pid, ...(await reload()) });
      return;
    }
  }
}

/** Contract 17: the terminal's `doctor` and `notify test`, answered with the running daemon's own view. */
async function diagnoseFrame(
  d: ActionDeps,
  owner: Owner,
  f: Extract<ClientFrame, { type: 'doctor' | 'notify_test' }>,
): Promise<void> {
  const diagnose = d.ctx.diagnose;
  if (diagnose === undefined) {
    reply(d, owner, f.req_id, { ok: false, code: 'NotFound', message: 'this daemon answers no diagnosis' });
    return;
  }
  if (f.type === 'doctor') {
    d.out.send(owner, {
      type: 'doctor',
      req_id: f.req_id,
      pid: process.pid,
      config_sha256: diagnose.configSha256,
      checks: await diagnose.doctor(),
    });
    return;
  }
  const results = await diagnose.notifyTest(f.channel);
  if (typeof results === 'string') {
    reply(d, owner, f.req_id, { ok: false, code: 'BadMessage', message: results });
    return;
  }
  d.out.send(owner, { type: 'notify_test', req_id: f.req_id, pid: process.pid, results });
}
