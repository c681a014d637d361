/**
 * A passkey-signed approval as the audit record keeps it (contract 13.3, 14), and its offline check:
 * everything a verifier needs is in the record — no daemon, no store, no clock.
 *
 * ```
 *  kept = { credential_id, public_key (base64url COSE), rp_id, origins,
 *           challenge_input: { canonical, nonce (base64url, 16 bytes) }, response (AuthenticationResponseJSON) }
 *
 *  challenge = base64url(SHA-256(UTF-8(canonical) || nonce))            (challenge.ts)
 *  verifyAuthenticationResponse(response, challenge, origins, rp_id, public_key, requireUserVerification)
 *  canonical parses to {id, version, command, client, args, action: "approve"} naming what the entry approved
 * ```
 */
import type { verifyAuthenticationResponse } from '@simplewebauthn/server';
import { z } from 'zod';
import { approvalChallenge, canonicalApproval, NONCE_BYTES } from './challenge.js';
import { webauthn } from './webauthn.js';

const b64url = z.string().regex(/^[A-Za-z0-9_-]+$/, 'must be base64url');

/** What startAuthentication() returns (AuthenticationResponseJSON), checked for shape only. */
export const assertionSchema = z.looseObject({
  id: b64url.max(1024),
  rawId: b64url.max(1024),
  type: z.literal('public-key'),
  response: z.looseObject({
    clientDataJSON: b64url.max(8192),
    authenticatorData: b64url.max(8192),
    signature: b64url.max(2048),
    userHandle: b64url.max(1024).optional(),
  }),
  clientExtensionResults: z.record(z.string(), z.unknown()),
  authenticatorAttachment: z.string().max(64).optional(),
});
export type Assertion = z.infer<typeof assertionSchema>;

export const keptSchema = z.strictObject({
  credential_id: b64url,
  public_key: b64url,
  rp_id: z.string().min(1),
  origins: z.array(z.string()).min(1),
  challenge_input: z.strictObject({ canonical: z.string(), nonce: b64url }),
  response: assertionSchema,
});
/** The verified assertion kept in the approval's audit entry, under `detail.passkey`. */
export type KeptAssertion = z.infer<typeof keptSchema>;

/** What the entry says was approved: each field given is compared with the signed canonical JSON. */
export interface KeptExpectation {
  id?: string;
  /** The version approved (the audit entry's own `version` is one more: the approval's new version). */
  version?: number;
  command?: string;
  client?: string;
  args?: Record<string, unknown>;
}

export type KeptVerdict = { ok: true } | { ok: false; why: string };

const subjectSchema = z.strictObject({
  id: z.string(),
  version: z.number().int(),
  command: z.string(),
  client: z.string(),
  args: z.record(z.string(), z.unknown()),
  action: z.literal('approve'),
});

/**
 * Checks a kept passkey assertion without the daemon: the challenge recomputed from `canonical` and the
 * nonce, the signature by `public_key` over it (with user verification, for `rp_id` from one of `origins`),
 * and that `canonical` is itself canonical and names what `expect` says the entry approved. Never throws.
 */
export async function verifyKeptAssertion(kept: unknown, expect: KeptExpectation = {}): Promise<KeptVerdict> {
  const parsed = keptSchema.safeParse(kept);
  if (!parsed.success) return { ok: false, why: `not a kept assertion: ${parsed.error.issues[0]?.message}` };
  const k = parsed.data;
  const nonce = Buffer.from(k.challenge_input.nonce, 'base64url');
  if (nonce.length !== NONCE_BYTES) return { ok: false, why: `the nonce is not ${NONCE_BYTES} bytes` };
  let subject: z.infer<typeof subjectSchema>;
  try {
    subject = subjectSchema.parse(JSON.parse(k.challenge_input.canonical));
  } catch {
    return { ok: false, why: 'canonical is not the JSON of an approval' };
  }
  if (canonicalApproval(subject) !== k.challenge_input.canonical)
    return { ok: false, why: 'canonical is not in RFC 8785 canonical form' };
  const mismatch = differs(subject, expect);
  if (mismatch !== undefined) return { ok: false, why: `canonical names another ${mismatch} than the entry` };
  if (k.response.id !== k.credential_id)
    return { ok: false, why: 'the response is from another credential than credential_id' };
  try {
    const r = await (await webauthn()).verifyAuthenticationResponse({
      // The library's own type; the schema above checked its shape.
      response: k.response as unknown as Parameters<typeof verifyAuthenticationResponse>[0]['response'],
      expectedChallenge: approvalChallenge(k.challenge_input.canonical, nonce),
      expectedOrigin: k.origins,
      expectedRPID: k.rp_id,
      credential: {
        id: k.credential_id,
        publicKey: new Uint8Array(Buffer.from(k.public_key, 'base64url')),
        // Counters are the daemon's replay check at the time; offline, each signature stands alone.
        counter: 0,
      },
      requireUserVerification: true,
    });
    return r.verified ? { ok: true } : { ok: false, why: 'the signature does not verify' };
  } catch (e) {
    return { ok: false, why: (e as Error).message };
  }
}

/** The first field of `expect` the signed subject disagrees with, or undefined. */
function differs(subject: z.infer<typeof subjectSchema>, expect: KeptExpectation): string | undefined {
  if (expect.id !== undefined && subject.id !== expect.id) return 'command id';
  if (expect.version !== undefined && subject.version !== expect.version) return 'version';
  if (expect.command !== undefined && subject.command !== expect.command) return 'command';
  if (expect.client !== undefined && subject.client !== expect.client) return 'client';
  if (expect.args !== undefined) {
    const a = canonicalApproval({ ...subject, args: expect.args });
    if (a !== canonicalApproval(subject)) return 'args';
  }
  return undefined;
}

/**
 * The check `audit verify` makes of one approval entry (contract 14): its `detail.passkey` verified against
 * the entry's own command id, the version it approved (the entry's `version` - 1) and its command name —
 * and, when the caller knows them (the submit entry), the arguments.
 */
export function verifyKeptInEntry(
  entry: { command_id?: string; version?: number; detail?: Record<string, unknown> },
  args?: Record<string, unknown>,
): Promise<KeptVerdict> {
  const expect: KeptExpectation = {};
  if (entry.command_id !== undefined) expect.id = entry.command_id;
  if (entry.version !== undefined) expect.version = entry.version - 1;
  if (typeof entry.detail?.command === 'string') expect.command = entry.detail.command;
  if (args !== undefined) expect.args = args;
  return verifyKeptAssertion(entry.detail?.passkey, expect);
}
