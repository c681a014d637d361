/**
 * Passkeys (contracts.md 13.3): owners' WebAuthn credentials (@simplewebauthn/server; no hand-written
 * WebAuthn or CBOR) — adding one, signing in with one, and passkey-signed approvals whose challenge is
 * derived from exactly what is approved (challenge.ts), checked when sent (approval.ts) and again offline
 * from the audit record (kept.ts: `verifyKeptAssertion`, which `audit verify` calls).
 */

export { type ApprovalCheck, checkApproval } from './approval.js';
export { APPROVAL_CHALLENGE_TTL_MS, ApprovalChallenges, type IssuedChallenge } from './approval-book.js';
export { type ApprovalSubject, approvalChallenge, canonicalApproval, NONCE_BYTES } from './challenge.js';
export {
  type KeptAssertion,
  type KeptExpectation,
  type KeptVerdict,
  verifyKeptAssertion,
  verifyKeptInEntry,
} from './kept.js';
export {
  beginRegistration,
  CEREMONY_TTL_MS,
  finishRegistration,
  type PendingRegistration,
} from './registration.js';
export { originsOf, type RelyingParty, type RelyingPartyAnswer, relyingPartyOf } from './rp.js';
export { SignIns, type SignInVerdict } from './sign-in.js';
export { webauthn } from './webauthn.js';
