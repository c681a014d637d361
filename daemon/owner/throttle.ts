/**
 * Slows down guessing of the owner token (issue 4): after each failed login from an address, that
 * address must wait an exponentially growing time (1 s, 2 s, 4 s, ... capped at 60 s) before it may try
 * again. A success clears the record. Refusing early (429) rather than holding the answer back keeps no
 * connection open for an attacker and tells a legitimate owner exactly how long to wait.
 */
const BASE_MS = 1000;
const MAX_MS = 60_000;
/** Bounded: the oldest address record is dropped first. */
const MAX_ADDRESSES = 1024;

export class LoginThrottle {
  readonly #records = new Map<string, { fails: number; until: number }>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** Milliseconds this address must still wait before its next attempt (0 = may try now). */
  waitMs(address: string): number {
    const r = this.#records.get(address);
    if (r === undefined) return 0;
    return Math.max(0, r.until - this.#now());
  }

  /** Records a failed attempt and returns the delay now imposed. */
  fail(address: string): number {
    const prev = this.#records.get(address);
    const fails = (prev?.fails ?? 0) + 1;
    const delay = Math.min(MAX_MS, BASE_MS * 2 ** Math.min(fails - 1, 16));
    this.#records.delete(address);
    if (this.#records.size >= MAX_ADDRESSES) {
      const oldest = this.#records.keys().next().value;
      if (oldest !== undefined) this.#records.delete(oldest);
    }
    this.#records.set(address, { fails, until: this.#now() + delay });
    return delay;
  }

  /** A successful login forgets the address's failures. */
  succeed(address: string): void {
    this.#records.delete(address);
  }
}
