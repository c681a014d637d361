/**
 * The owner frames of contract 13.3: `passkey_begin` / `passkey_finish` (add a passkey), `passkey_list`,
 * `passkey_remove`, `approve_challenge`, and the check of the `assertion` an `approve` carries.
 *
 * Who may change an owner's passkeys: a session signed in with one of them — or, while the owner has none,
 * any of their sessions (the first passkey). A token session (or a Bearer socket) cannot add or remove a
 * passkey of an owner who has one: what can read `owner.token` must not enrol its own authenticator and then
 * sign approvals with it (docs/security.md). `token owner --rotate` is the recovery: it removes them.
 */

import type { ServerMessage } from '../../common/owner-messages.js';
import { iso } from '../base/index.js';
import type { ActionResult, PasskeyEvidence } from '../core/index.js';
import type { EdgeContext } from '../http/index.js';
import type { ApproveChallengeFrame, ApproveFrame, PasskeyFrame } from '../owner-protocol/index.js';
import { beginRegistration, checkApproval, finishRegistration, webauthn } from '../passkeys/index.js';
import type { OwnerCredential } from '../tokens/index.js';
import type { PasskeyCeremonies } from './passkey-ceremonies.js';
import type { Owner } from './registry.js';

/** What a passkey frame is answered with: a message of its own, or a reply. */
export type PasskeyAnswer =
  | { send: ServerMessage }
  | {
      reply:
        | ActionResult
        | { ok: true }
        | {
            ok: false;
            code: 'PasskeyRequired' | 'NotFound' | 'AlreadyDecided' | 'VersionConflict';
            message: string;
          };
    };

export interface PasskeyDeps {
  ctx: EdgeContext;
  desk: PasskeyCeremonies;
}

function refuse(message: string): PasskeyAnswer {
  return { reply: { ok: false, code: 'PasskeyRequired', message } };
}

/** May this socket add or remove its owner's passkeys? (see the module comment) */
async function mayChange(d: PasskeyDeps, owner: Owner): Promise<string | undefined> {
  if (owner.viaPasskey) return undefined;
  const mine = await d.desk.store.list(owner.by);
  if (mine.length === 0) return undefined;
  return 'you have a passkey: sign in with it (Sign in with a passkey on the login page) to add or remove passkeys; a token login cannot';
}

export async function passkeyFrame(d: PasskeyDeps, owner: Owner, f: PasskeyFrame): Promise<PasskeyAnswer> {
  const { desk } = d;
  switch (f.type) {
    case 'passkey_list': {
      const passkeys = (await desk.store.list(owner.by)).map((p) => ({
        credential_id: p.credential_id,
        rp_id: p.rp_id,
        created_at: p.created_at,
        ...(p.last_used_at === undefined ? {} : { last_used_at: p.last_used_at }),
      }));
      return { send: { type: 'passkey_list', req_id: f.req_id, passkeys } };
    }
    case 'passkey_begin': {
      const rp = desk.relyingParty(owner.origin);
      if (!rp.ok) return refuse(rp.why);
      const no = await mayChange(d, owner);
      if (no !== undefined) return refuse(no);
      const begun = await beginRegistration(desk.store, owner.by, rp.rp, Date.now());
      desk.registrations.set(owner, begun.pending);
      return { send: { type: 'passkey_begin', req_id: f.req_id, options: begun.options } };
    }
    case 'passkey_finish': {
      const pending = desk.registrations.get(owner);
      desk.registrations.delete(owner);
      const no = await mayChange(d, owner);
      if (no !== undefined) return refuse(no);
      const at = iso(Date.now());
      const done = await finishRegistration(pending, owner.by, f.response, Date.now(), at);
      if (!done.ok) return refuse(done.why);
      if ((await desk.store.get(done.passkey.credential_id)) !== undefined)
        return refuse('that passkey is already added');
      await desk.store.add(done.passkey, {
        at,
        actor: { kind: 'owner', name: owner.by },
        action: 'passkey_added',
        // Contract 13.3 (v4): the public key too — the record, not the table, says which keys may sign.
        detail: {
          owner: owner.by,
          credential_id: done.passkey.credential_id,
          public_key: done.passkey.public_key,
          rp_id: done.passkey.rp_id,
        },
      });
      d.ctx.log.log('info', 'passkey_added', { owner: owner.by, rp_id: done.passkey.rp_id });
      return { reply: { ok: true } };
    }
    case 'passkey_remove': {
      const no = await mayChange(d, owner);
      if (no !== undefined) return refuse(no);
      const removed = await desk.store.remove(owner.by, f.credential_id, {
        at: iso(Date.now()),
        actor: { kind: 'owner', name: owner.by },
        action: 'passkey_removed',
        detail: { owner: owner.by, credential_id: f.credential_id },
      });
      if (!removed)
        return { reply: { ok: false, code: 'NotFound', message: `you have no passkey ${f.credential_id}` } };
      d.ctx.log.log('info', 'passkey_removed', { owner: owner.by });
      return { reply: { ok: true } };
    }
  }
}

/** Contract 13.3: a challenge over exactly what approving `f.id` at `f.version` means (120 s, once). */
export async function approveChallenge(
  d: PasskeyDeps,
  owner: Owner,
  f: ApproveChallengeFrame,
): Promise<PasskeyAnswer> {
  const c = d.ctx.broker.get(f.id);
  if (c === undefined) return { reply: { ok: false, code: 'NotFound', message: `no command ${f.id}` } };
  if (c.phase.state !== 'awaiting_review')
    return {
      reply: {
        ok: false,
        code: 'AlreadyDecided',
        message: `command ${f.id} was already decided: it is ${c.phase.state}`,
      },
    };
  if (c.version !== f.version)
    return {
      reply: {
        ok: false,
        code: 'VersionConflict',
        message: `command ${f.id} is at version ${c.version}, not ${f.version}; look at it again before deciding`,
      },
    };
  const rp = d.desk.relyingParty(owner.origin);
  if (!rp.ok) return refuse(rp.why);
  const mine = (await d.desk.store.list(owner.by)).filter((p) => p.rp_id === rp.rp.rp_id);
  if (mine.length === 0)
    return refuse(`you have no passkey for ${rp.rp.rp_id} yet: add one under Passkeys, then approve`);
  const issued = d.desk.approvals.issue(owner.by, {
    id: c.id,
    version: c.version,
    command: c.command,
    client: c.client,
    args: c.args,
  });
  const options = await (await webauthn()).generateAuthenticationOptions({
    rpID: rp.rp.rp_id,
    challenge: new Uint8Array(Buffer.from(issued.challenge, 'base64url')),
    allowCredentials: mine.map((p) =>
      p.transports ? { id: p.credential_id, transports: p.transports } : { id: p.credential_id },
    ),
    userVerification: 'required',
    timeout: Math.max(0, issued.expires - Date.now()),
  });
  return {
    send: {
      type: 'approve_challenge',
      req_id: f.req_id,
      id: c.id,
      version: c.version,
      challenge: issued.challenge,
      options: options as unknown as Record<string, unknown>,
    },
  };
}

/**
 * The passkey evidence of an `approve` frame: none without an assertion (the broker then refuses a
 * passkey-required command), else the assertion checked against the command as it is at the frame's
 * version. A command that is gone, decided or at another version is left to the broker's own refusal.
 */
export async function approvalEvidence(
  d: PasskeyDeps,
  cred: OwnerCredential,
  f: ApproveFrame,
): Promise<PasskeyEvidence | undefined> {
  if (f.assertion === undefined) return undefined;
  const c = d.ctx.broker.get(f.id);
  if (c === undefined || c.phase.state !== 'awaiting_review' || c.version !== f.version) return undefined;
  return checkApproval(
    {
      book: d.desk.approvals,
      store: d.desk.store,
      publicUrl: d.desk.publicUrl,
      port: d.desk.port,
      // Contract 13.3 (v4): a key in the table the record never added was written there by other means.
      onUnrecorded: (owner, credential_id, why) =>
        d.ctx.log.log('warn', 'passkey_unrecorded', { owner, credential_id, why }),
    },
    cred.name,
    { id: c.id, version: c.version, command: c.command, client: c.client, args: c.args },
    f.assertion,
    iso(Date.now()),
  );
}
