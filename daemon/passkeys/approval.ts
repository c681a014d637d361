/**
 * Checking the passkey assertion an owner sends with `approve` (contract 13.3), before the broker sees the
 * approval: the challenge it signed must be one this daemon issued to this owner for exactly this command
 * version (approval-book.ts: 120 s, once), the credential one of this owner's passkeys that the audit chain
 * vouches for (recorded.ts, contract 13.3 (v4)), and the signature
 * valid with user verification (@simplewebauthn/server). What passes becomes the record kept in the
 * approval's audit entry (kept.ts), which `verifyKeptAssertion` checks again offline.
 */
import type { verifyAuthenticationResponse } from '@simplewebauthn/server';
import type { PasskeyEvidence, PasskeyStore } from '../core/index.js';
import type { ApprovalChallenges } from './approval-book.js';
import { type ApprovalSubject, canonicalApproval } from './challenge.js';
import { type Assertion, assertionSchema, type KeptAssertion } from './kept.js';
import { unrecorded } from './recorded.js';
import { originsOf } from './rp.js';
import { credentialOf } from './sign-in.js';
import { webauthn } from './webauthn.js';

export interface ApprovalCheck {
  book: ApprovalChallenges;
  store: PasskeyStore;
  publicUrl: string | null;
  port: number;
  /** Told of a key the table holds but the audit record never added (someone wrote it there): logged. */
  onUnrecorded?: (owner: string, credentialId: string, why: string) => void;
}

/** The challenge a WebAuthn answer signed (its clientDataJSON's `challenge`), or undefined. */
function signedChallenge(a: Assertion): string | undefined {
  try {
    const data = JSON.parse(Buffer.from(a.response.clientDataJSON, 'base64url').toString('utf8')) as {
      challenge?: unknown;
    };
    return typeof data.challenge === 'string' ? data.challenge : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Evidence for the broker: verified (with the record to keep) or refused (why). `subject` is the command
 * as it is now, at the version the owner's frame names.
 */
export async function checkApproval(
  d: ApprovalCheck,
  owner: string,
  subject: ApprovalSubject,
  assertion: unknown,
  at: string,
): Promise<PasskeyEvidence> {
  const shape = assertionSchema.safeParse(assertion);
  if (!shape.success) return refused(`assertion is not a WebAuthn answer: ${shape.error.issues[0]?.message}`);
  const a = shape.data;
  const challenge = signedChallenge(a);
  if (challenge === undefined) return refused('the assertion carries no challenge');
  const taken = d.book.take(challenge);
  if (!taken.ok) return refused(taken.why);
  const issued = taken.issued;
  if (issued.owner !== owner) return refused('that challenge was issued to another owner');
  if (issued.canonical !== canonicalApproval(subject)) {
    return refused(
      `the passkey signed an approval of ${issued.subject.id} at version ${issued.subject.version}, not of ${subject.id} at version ${subject.version}`,
    );
  }
  const stored = await d.store.get(a.id);
  if (stored === undefined || stored.owner !== owner) return refused('that passkey is not one of yours');
  const off = await unrecorded(d.store, stored);
  if (off !== undefined) {
    d.onUnrecorded?.(owner, stored.credential_id, off);
    return refused(`that passkey is not in the audit record: ${off}`);
  }
  const origins = originsOf(stored.rp_id, d.publicUrl, d.port);
  try {
    const r = await (await webauthn()).verifyAuthenticationResponse({
      response: a as unknown as Parameters<typeof verifyAuthenticationResponse>[0]['response'],
      expectedChallenge: issued.challenge,
      expectedOrigin: origins,
      expectedRPID: stored.rp_id,
      credential: credentialOf(stored),
      requireUserVerification: true,
    });
    if (!r.verified) return refused('the passkey’s signature does not verify');
    await d.store.used(stored.credential_id, r.authenticationInfo.newCounter, at);
  } catch (e) {
    return refused(`the passkey’s answer was refused: ${(e as Error).message}`);
  }
  const kept: KeptAssertion = {
    credential_id: stored.credential_id,
    public_key: stored.public_key,
    rp_id: stored.rp_id,
    origins,
    challenge_input: { canonical: issued.canonical, nonce: Buffer.from(issued.nonce).toString('base64url') },
    response: a,
  };
  return { ok: true, kept: kept as unknown as Record<string, unknown> };
}

function refused(why: string): PasskeyEvidence {
  return { ok: false, why };
}
