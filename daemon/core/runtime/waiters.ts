/**
 * The broker's `wait()` callers (BrokerApi.wait): each waits for one command and is released when that
 * command turns final (the broker calls `release` from the change's commit, so a waiter never sees a change
 * before it is stored: architecture.md example 3), at its own deadline, when its caller aborts (the MCP
 * client cancelled or went away: the wait ends, the command stays), or at shutdown (`releaseAll`).
 *
 * Whoever is released reads the command then (`read`), not when it started waiting, so it gets the final
 * state when there is one. Its own file so the broker only says when (issue 20 item 3).
 */
import type { Clock } from '../../base/index.js';

export class Waiters {
  readonly #clock: Clock;
  /** `wait()` callers by command id, released when it turns final (or on their deadline). */
  readonly #waiters = new Map<string, Set<() => void>>();
  /** Contract 17: the daemon is stopping; a wait asked now answers at once with the current state. */
  #stopped = false;

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /**
   * Resolves with `read()` once `id` is released, after `seconds`, or when `signal` aborts — whichever comes
   * first. The timer and the abort listener are removed on the way out, so nothing outlives the wait.
   */
  wait<T>(id: string, seconds: number, signal: AbortSignal | undefined, read: () => T): Promise<T> {
    if (this.#stopped) return Promise.resolve().then(read);
    return new Promise((resolve) => {
      const finish = () => {
        timer.cancel();
        signal?.removeEventListener('abort', finish);
        const set = this.#waiters.get(id);
        set?.delete(finish);
        if (set?.size === 0) this.#waiters.delete(id);
        resolve(read());
      };
      const set = this.#waiters.get(id) ?? new Set();
      set.add(finish);
      this.#waiters.set(id, set);
      const timer = this.#clock.setTimeout(finish, seconds * 1000);
      signal?.addEventListener('abort', finish, { once: true });
    });
  }

  /** Releases every waiter of `id` (its command just committed a final state). */
  release(id: string): void {
    for (const f of [...(this.#waiters.get(id) ?? [])]) f();
  }

  /** Releases every waiter with its command's current state (shutdown). */
  releaseAll(): void {
    for (const set of [...this.#waiters.values()]) for (const f of [...set]) f();
  }

  /**
   * A clean stop (contract 17): every waiter is answered now with its command's current state (`PENDING`
   * and its `pending_id`, or the final one), and any later wait answers at once, so no call is left hanging
   * when its stream closes. Twice is harmless.
   */
  stop(): void {
    this.#stopped = true;
    this.releaseAll();
  }
}
