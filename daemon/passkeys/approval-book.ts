/**
 * Approval challenges handed out and not yet used (contract 13.3): each is valid for 120 s, once, for the
 * owner it was issued to and the command version it names. Memory only: a daemon restart forgets them,
 * which can only refuse an approval (ask again), never allow one.
 *
 * ```
 *  approve_challenge ─▶ issue(owner, subject) ─▶ {challenge, nonce, canonical}   (kept ≤ ttl)
 *  approve + assertion ─▶ take(challenge) ─▶ the entry, removed at once (used, or refused: either way spent)
 * ```
 */
import { randomBytes } from 'node:crypto';
import { type ApprovalSubject, approvalChallenge, canonicalApproval, NONCE_BYTES } from './challenge.js';

/** Contract 13.3: an approval challenge is valid this long. */
export const APPROVAL_CHALLENGE_TTL_MS = 120_000;
/** At most this many unused challenges are kept; past it the oldest goes (a tab asking in a loop). */
const MAX_OPEN = 1000;

/** One issued challenge: whose, for what, and the bytes that make it. */
export interface IssuedChallenge {
  owner: string;
  subject: ApprovalSubject;
  canonical: string;
  nonce: Uint8Array;
  challenge: string;
  expires: number;
}

export class ApprovalChallenges {
  readonly #open = new Map<string, IssuedChallenge>();
  readonly #ttlMs: number;
  readonly #now: () => number;

  constructor(ttlMs = APPROVAL_CHALLENGE_TTL_MS, now: () => number = Date.now) {
    this.#ttlMs = ttlMs;
    this.#now = now;
  }

  /** A fresh challenge for `owner` approving `subject`. */
  issue(owner: string, subject: ApprovalSubject): IssuedChallenge {
    this.#sweep();
    if (this.#open.size >= MAX_OPEN) {
      const oldest = this.#open.keys().next().value;
      if (oldest !== undefined) this.#open.delete(oldest);
    }
    const canonical = canonicalApproval(subject);
    const nonce = new Uint8Array(randomBytes(NONCE_BYTES));
    const challenge = approvalChallenge(canonical, nonce);
    const issued: IssuedChallenge = {
      owner,
      subject,
      canonical,
      nonce,
      challenge,
      expires: this.#now() + this.#ttlMs,
    };
    this.#open.set(challenge, issued);
    return issued;
  }

  /**
   * Takes the challenge out (once: a second take finds nothing), or says why it cannot be used: never
   * issued (or already used), or past its time.
   */
  take(challenge: string): { ok: true; issued: IssuedChallenge } | { ok: false; why: string } {
    const issued = this.#open.get(challenge);
    this.#open.delete(challenge);
    if (issued === undefined) {
      return {
        ok: false,
        why: 'the passkey signed a challenge that is unknown or already used (each is good for one approval): ask for a new one',
      };
    }
    if (issued.expires <= this.#now()) {
      return {
        ok: false,
        why: `the passkey signed a challenge older than ${Math.round(this.#ttlMs / 1000)} s: ask for a new one`,
      };
    }
    return { ok: true, issued };
  }

  #sweep(): void {
    const now = this.#now();
    for (const [k, v] of this.#open) if (v.expires <= now) this.#open.delete(k);
  }
}
