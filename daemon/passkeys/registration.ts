/**
 * Adding a passkey (contract 13.3): `passkey_begin` gives WebAuthn creation options for the signed-in
 * owner — a discoverable credential (resident key) with user verification required, none of the owner's
 * passkeys again — and `passkey_finish` verifies the browser's answer with @simplewebauthn/server and
 * stores the credential's public data. The challenge lives with the one socket that asked, 120 s, once.
 */
import type { verifyRegistrationResponse } from '@simplewebauthn/server';
import type { PasskeyStore, StoredPasskey } from '../core/index.js';
import type { RelyingParty } from './rp.js';
import { webauthn } from './webauthn.js';

/** How long a registration (or login) ceremony may take. */
export const CEREMONY_TTL_MS = 120_000;
const RP_NAME = 'ogf-broker';

/** A ceremony started on one socket: its challenge and relying party. */
export interface PendingRegistration {
  challenge: string;
  rp: RelyingParty;
  expires: number;
}

/** The creation options for `owner` and the ceremony to finish them with. */
export async function beginRegistration(
  store: PasskeyStore,
  owner: string,
  rp: RelyingParty,
  now: number,
): Promise<{ options: Record<string, unknown>; pending: PendingRegistration }> {
  const existing = await store.list(owner);
  const options = await (await webauthn()).generateRegistrationOptions({
    rpName: RP_NAME,
    rpID: rp.rp_id,
    userName: owner,
    userDisplayName: `${owner} (ogf-broker owner)`,
    // The owner's name as the user handle: stable, so the authenticator keeps one passkey per owner and
    // relying party; a sign-in names its owner by the credential it used, not by this.
    userID: new TextEncoder().encode(owner),
    attestationType: 'none',
    excludeCredentials: existing
      .filter((p) => p.rp_id === rp.rp_id)
      .map((p) =>
        p.transports ? { id: p.credential_id, transports: p.transports } : { id: p.credential_id },
      ),
    authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
    timeout: CEREMONY_TTL_MS,
  });
  return {
    options: options as unknown as Record<string, unknown>,
    pending: { challenge: options.challenge, rp, expires: now + CEREMONY_TTL_MS },
  };
}

/** Verifies a registration answer; the new passkey (not yet stored), or why not. */
export async function finishRegistration(
  pending: PendingRegistration | undefined,
  owner: string,
  response: unknown,
  now: number,
  at: string,
): Promise<{ ok: true; passkey: StoredPasskey } | { ok: false; why: string }> {
  if (pending === undefined || pending.expires <= now) {
    return {
      ok: false,
      why: 'no passkey ceremony is open on this tab (or it took over 2 minutes): start again',
    };
  }
  try {
    const r = await (await webauthn()).verifyRegistrationResponse({
      response: response as Parameters<typeof verifyRegistrationResponse>[0]['response'],
      expectedChallenge: pending.challenge,
      expectedOrigin: pending.rp.origin,
      expectedRPID: pending.rp.rp_id,
      requireUserVerification: true,
    });
    if (!r.verified) return { ok: false, why: 'the authenticator’s answer does not verify' };
    const c = r.registrationInfo.credential;
    const passkey: StoredPasskey = {
      credential_id: c.id,
      owner,
      public_key: Buffer.from(c.publicKey).toString('base64url'),
      rp_id: pending.rp.rp_id,
      counter: c.counter,
      created_at: at,
    };
    if (c.transports !== undefined) passkey.transports = [...c.transports];
    return { ok: true, passkey };
  } catch (e) {
    return { ok: false, why: `the authenticator’s answer was refused: ${(e as Error).message}` };
  }
}
