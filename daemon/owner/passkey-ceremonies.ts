/**
 * The passkey ceremonies of the owner edge (contract 13.3): the owners' passkeys (the store's port), the
 * approval challenges handed out (120 s, once), the sign-in challenges of the login page, and each socket's
 * open "add a passkey" ceremony. Memory only besides the store: a restart can refuse a ceremony, never
 * allow one.
 */
import type { Logger } from '../base/index.js';
import type { PasskeyStore } from '../core/index.js';
import {
  APPROVAL_CHALLENGE_TTL_MS,
  ApprovalChallenges,
  type PendingRegistration,
  type RelyingPartyAnswer,
  relyingPartyOf,
  SignIns,
} from '../passkeys/index.js';
import type { Owner } from './registry.js';

const CHALLENGE_TTL_ENV = 'OGF_BROKER_PASSKEY_CHALLENGE_TTL_MS';

/**
 * How long an approval challenge lasts: 120 s (contract 13.3), or `OGF_BROKER_PASSKEY_CHALLENGE_TTL_MS`
 * (1000..120000) — it can only shorten it; for tests that watch a challenge expire without waiting 2 min.
 */
export function challengeTtlMs(log: Logger, env: NodeJS.ProcessEnv): number {
  const raw = env[CHALLENGE_TTL_ENV];
  if (raw === undefined || raw === '') return APPROVAL_CHALLENGE_TTL_MS;
  const n = Number(raw);
  if (Number.isInteger(n) && n >= 1000 && n <= APPROVAL_CHALLENGE_TTL_MS) return n;
  log.log('warn', 'passkey_challenge_ttl_ignored', {
    reason: `${CHALLENGE_TTL_ENV} must be an integer from 1000 to ${APPROVAL_CHALLENGE_TTL_MS}`,
  });
  return APPROVAL_CHALLENGE_TTL_MS;
}

export class PasskeyCeremonies {
  readonly store: PasskeyStore;
  readonly approvals: ApprovalChallenges;
  readonly signIns: SignIns;
  /** The "add a passkey" ceremony each socket has open. */
  readonly registrations = new WeakMap<Owner, PendingRegistration>();
  readonly #publicUrl: string | null;
  readonly #port: () => number;

  constructor(store: PasskeyStore, publicUrl: string | null, port: () => number, ttlMs: number) {
    this.store = store;
    this.approvals = new ApprovalChallenges(ttlMs);
    this.signIns = new SignIns(store);
    this.#publicUrl = publicUrl;
    this.#port = port;
  }

  get publicUrl(): string | null {
    return this.#publicUrl;
  }

  get port(): number {
    return this.#port();
  }

  /** The relying party of a page at `origin` (or why it cannot use passkeys). */
  relyingParty(origin: string | undefined): RelyingPartyAnswer {
    return relyingPartyOf(origin, this.#publicUrl, this.#port());
  }
}
