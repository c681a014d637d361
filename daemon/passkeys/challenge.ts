/**
 * The challenge of a passkey-signed approval (contract 13.3), defined once and used by the daemon when it
 * issues one and by `verifyKeptAssertion` when it checks a kept one offline:
 *
 * ```
 *  canonical = RFC 8785 canonical JSON of {"id","version","command","client","args","action":"approve"}
 *  challenge = base64url( SHA-256( UTF-8 bytes of canonical  ||  the 16 nonce bytes ) )   (no padding)
 * ```
 *
 * The canonical form is core's canonicalJson (`canonicalize`, RFC 8785: sorted keys, ECMAScript number text,
 * no spaces), so the same approval gives the same bytes in any language. The nonce makes each challenge fresh: two
 * approvals of the same thing are two different signatures, and a kept one cannot be issued again.
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from '../core/index.js';

/** Exactly what an owner approves: the command at one version, with its arguments. */
export interface ApprovalSubject {
  id: string;
  version: number;
  command: string;
  client: string;
  args: Record<string, unknown>;
}

/** Bytes of fresh randomness in each approval challenge. */
export const NONCE_BYTES = 16;

/** The RFC 8785 canonical JSON of what is approved, `action` included. */
export function canonicalApproval(s: ApprovalSubject): string {
  // core's canonicalJson: RFC 8785, with a lone surrogate (an AI's argument may hold one) as U+FFFD.
  return canonicalJson({
    id: s.id,
    version: s.version,
    command: s.command,
    client: s.client,
    args: s.args,
    action: 'approve',
  });
}

/** base64url(SHA-256(UTF-8(canonical) || nonce)): the WebAuthn challenge of one approval. */
export function approvalChallenge(canonical: string, nonce: Uint8Array): string {
  return createHash('sha256').update(canonical, 'utf8').update(nonce).digest('base64url');
}
