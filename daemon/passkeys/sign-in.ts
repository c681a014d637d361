/**
 * "Sign in with a passkey" (contract 13.3): request options without `allowCredentials` (a discoverable
 * credential names its owner), user verification required; the answer is verified against the stored
 * credential, whose owner is who signs in. Challenges are issued to anyone who opens the login page, so
 * they are bounded in number and time (120 s) and good once.
 */
import type { verifyAuthenticationResponse } from '@simplewebauthn/server';
import type { PasskeyStore, StoredPasskey } from '../core/index.js';
import { unrecorded } from './recorded.js';
import { CEREMONY_TTL_MS } from './registration.js';
import type { RelyingParty } from './rp.js';
import { webauthn } from './webauthn.js';

/** At most this many sign-in challenges wait at once; past it the oldest is dropped. */
const MAX_OPEN = 256;

export type SignInVerdict = { ok: true; owner: string } | { ok: false; why: string };

export class SignIns {
  readonly #open = new Map<string, number>();
  readonly #store: PasskeyStore;
  readonly #now: () => number;

  constructor(store: PasskeyStore, now: () => number = Date.now) {
    this.#store = store;
    this.#now = now;
  }

  /** Request options for a sign-in on `rp`. */
  async options(rp: RelyingParty): Promise<Record<string, unknown>> {
    const now = this.#now();
    for (const [c, exp] of this.#open) if (exp <= now) this.#open.delete(c);
    if (this.#open.size >= MAX_OPEN) {
      const oldest = this.#open.keys().next().value;
      if (oldest !== undefined) this.#open.delete(oldest);
    }
    const options = await (await webauthn()).generateAuthenticationOptions({
      rpID: rp.rp_id,
      userVerification: 'required',
      timeout: CEREMONY_TTL_MS,
    });
    this.#open.set(options.challenge, now + CEREMONY_TTL_MS);
    return options as unknown as Record<string, unknown>;
  }

  /** Verifies a sign-in answer made on `rp`; whose passkey it was, or why not. */
  async verify(response: { id: string }, rp: RelyingParty, at: string): Promise<SignInVerdict> {
    const stored: StoredPasskey | undefined = await this.#store.get(response.id);
    if (stored === undefined || stored.rp_id !== rp.rp_id)
      return { ok: false, why: 'that passkey is no owner’s here' };
    // Contract 13.3 (v4): a key the record never added signs nobody in (it would then enrol one of its own).
    const off = await unrecorded(this.#store, stored);
    if (off !== undefined) return { ok: false, why: `that passkey is not in the audit record: ${off}` };
    try {
      const r = await (await webauthn()).verifyAuthenticationResponse({
        response: response as unknown as Parameters<typeof verifyAuthenticationResponse>[0]['response'],
        // Once: the challenge is taken out as it is checked, whatever the outcome.
        expectedChallenge: (c: string) => {
          const exp = this.#open.get(c);
          this.#open.delete(c);
          return exp !== undefined && exp > this.#now();
        },
        expectedOrigin: rp.origin,
        expectedRPID: stored.rp_id,
        credential: credentialOf(stored),
        requireUserVerification: true,
      });
      if (!r.verified) return { ok: false, why: 'the passkey’s answer does not verify' };
      await this.#store.used(stored.credential_id, r.authenticationInfo.newCounter, at);
      return { ok: true, owner: stored.owner };
    } catch (e) {
      return { ok: false, why: `the passkey’s answer was refused: ${(e as Error).message}` };
    }
  }
}

/** The stored passkey as @simplewebauthn/server takes it. */
export function credentialOf(p: StoredPasskey) {
  return {
    id: p.credential_id,
    publicKey: new Uint8Array(Buffer.from(p.public_key, 'base64url')),
    counter: p.counter,
    ...(p.transports ? { transports: p.transports } : {}),
  };
}
