/**
 * The login gate (contracts.md 5, v2): "Login attempts are processed at most 4 at a time and a wrong token
 * is answered after 1 s; a correct token is never locked out."
 *
 * One global semaphore of 4 slots — global, not per address: behind a tunnel or reverse proxy every
 * attempt comes from 127.0.0.1, and v0.1's per-address back-off then locked the real owner out with the
 * attacker. An attempt checks its token only once it holds a slot; a wrong one keeps the slot for 1 s
 * before its 401, so guesses are checked at most 4 per second however many arrive in parallel. A correct
 * one gives the slot back at once and is answered at once. Nothing is remembered between attempts: no
 * failure, however many, makes a later correct token wait or fail.
 *
 * Attempts that find every slot taken wait in FIFO order, at most `maxWaiting` of them (bounded memory);
 * past that an attempt is answered "busy" at once, unchecked, so its token is not a guess. An attempt whose
 * connection closes while it waits leaves the queue unchecked.
 *
 * ```
 *  attempt ─▶ slot free? ─yes─▶ check ─right─▶ release ─▶ accepted
 *                │ no              └──wrong─▶ hold 1 s ─▶ release ─▶ refused
 *       queue full? ─yes─▶ busy                   (release hands the slot to the oldest waiter)
 *                │ no
 *             wait (FIFO) ─▶ slot ─▶ check …   (connection closed while waiting ─▶ gone)
 * ```
 *
 * Under a sustained flood the owner's correct attempt still waits its turn behind the attempts queued
 * before it: before its check it is indistinguishable from a guess, and checking it first would give an
 * attacker's guesses the same shortcut.
 */
export const LOGIN_SLOTS = 4;
export const WRONG_HOLD_MS = 1000;
/**
 * 256 waiting attempts drain in 64 s; each holds one small request (the body is at most 4 KiB). The daemon
 * lowers it to fit its connection limits (owner/edge.ts: at most half the connections kept for the owner).
 */
export const MAX_WAITING = 256;

export type AttemptOutcome = 'accepted' | 'refused' | 'busy' | 'gone';

export interface LoginThrottleOptions {
  slots?: number;
  holdMs?: number;
  maxWaiting?: number;
  /** Resolves after `ms` (the wrong attempt's hold); injected so unit tests decide when a hold ends. */
  sleep?: (ms: number) => Promise<void>;
}

const realSleep = (ms: number) =>
  new Promise<void>((resolve) => {
    setTimeout(resolve, ms);
  });

export class LoginThrottle {
  readonly #slots: number;
  readonly #holdMs: number;
  readonly #maxWaiting: number;
  readonly #sleep: (ms: number) => Promise<void>;
  #active = 0;
  readonly #waiting: Array<(admitted: boolean) => void> = [];

  constructor(opts: LoginThrottleOptions = {}) {
    this.#slots = opts.slots ?? LOGIN_SLOTS;
    this.#holdMs = opts.holdMs ?? WRONG_HOLD_MS;
    this.#maxWaiting = opts.maxWaiting ?? MAX_WAITING;
    this.#sleep = opts.sleep ?? realSleep;
  }

  /**
   * Runs one login attempt: `check` (the token comparison) is called once the attempt holds a slot and
   * returns whether the token is right. `gone` aborts when the client hung up.
   */
  async attempt(check: () => boolean | Promise<boolean>, gone?: AbortSignal): Promise<AttemptOutcome> {
    if (gone?.aborted) return 'gone';
    if (this.#active < this.#slots && this.#waiting.length === 0) this.#active++;
    else {
      if (this.#waiting.length >= this.#maxWaiting) return 'busy';
      if (!(await this.#wait(gone))) return 'gone';
    }
    // This attempt holds a slot now; every path below gives it back exactly once.
    try {
      if (gone?.aborted) return 'gone';
      if (await check()) return 'accepted';
      await this.#sleep(this.#holdMs);
      return 'refused';
    } finally {
      this.#release();
    }
  }

  /** Seconds a "busy" attempt should wait before trying again: until the queue has drained. */
  retryAfterS(): number {
    const ahead = this.#active + this.#waiting.length;
    return Math.max(1, Math.ceil(((ahead / this.#slots) * this.#holdMs) / 1000));
  }

  /** Attempts holding a slot, and attempts waiting for one (tests, logs). */
  get load(): { active: number; waiting: number } {
    return { active: this.#active, waiting: this.#waiting.length };
  }

  /** Queues for a slot; resolves true once one is handed over, false when `gone` aborts first. */
  #wait(gone: AbortSignal | undefined): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      const onGone = () => {
        const i = this.#waiting.indexOf(admit);
        if (i >= 0) this.#waiting.splice(i, 1);
        resolve(false);
      };
      const admit = (admitted: boolean) => {
        gone?.removeEventListener('abort', onGone);
        resolve(admitted);
      };
      this.#waiting.push(admit);
      gone?.addEventListener('abort', onGone, { once: true });
    });
  }

  /** Hands the slot to the oldest waiter, or frees it. */
  #release(): void {
    const next = this.#waiting.shift();
    if (next) next(true);
    else this.#active--;
  }
}
