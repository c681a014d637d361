/**
 * Review deadlines (contract 2: `expire`, reason ReviewExpired): one timer per command awaiting review,
 * armed when it is committed (or at start, from its stored `review_expires_at`, so a restart keeps the
 * original deadline), cancelled once the command leaves `awaiting_review`. When it fires, the broker's
 * `expire` applies the event — unless the command was decided meanwhile or the broker is closing.
 *
 * A store that refuses the write (read-only, disk full) rolls the batch back; the rollback re-arms the
 * command a second later (`rearm`), so an expiry is never lost. Its own file (issue 20 item 3): the broker
 * says which command and when, this file owns the timers.
 */

import type { Logger } from '../../base/index.js';
import { type Clock, iso } from '../../base/index.js';
import type { Command } from '../model/index.js';

export interface ExpiryDeps {
  clock: Clock;
  log: Logger;
  /** The command as the working view has it now, if still not final. */
  active(id: string): Command | undefined;
  /** Applies the `expire` event at `at`; rejects when its batch failed. */
  expire(current: Command, at: string): Promise<unknown>;
}

export class Expiry {
  readonly #deps: ExpiryDeps;
  readonly #timers = new Map<string, { cancel(): void }>();
  #closing = false;

  constructor(deps: ExpiryDeps) {
    this.#deps = deps;
  }

  /** Arms (or re-arms) `c`'s timer for its `review_expires_at`. */
  arm(c: Command): void {
    if (this.#closing) return;
    this.#timers.get(c.id)?.cancel();
    const ms = Date.parse(c.review_expires_at) - this.#deps.clock.now();
    const timer = this.#deps.clock.setTimeout(() => {
      this.#timers.delete(c.id);
      const current = this.#deps.active(c.id);
      if (!current || this.#closing || current.phase.state !== 'awaiting_review') return;
      // The store refused the write (read-only, disk full): the rollback arms a retry shortly rather than
      // lose the expiry.
      this.#deps
        .expire(current, iso(this.#deps.clock.now()))
        .catch((e: unknown) =>
          this.#deps.log.log('error', 'commit_failed', { id: c.id, error: (e as Error).message }),
        );
    }, ms);
    this.#timers.set(c.id, timer);
  }

  /** `c` left `awaiting_review` (its change committed): its deadline no longer applies. */
  cancel(id: string): void {
    this.#timers.get(id)?.cancel();
    this.#timers.delete(id);
  }

  /**
   * After a rollback: every command awaiting review without a timer (its expiry fired while the failed
   * batch changed it) is armed again a second later, from its then current state.
   */
  rearm(active: Iterable<Command>): void {
    for (const c of active) {
      if (c.phase.state === 'awaiting_review' && !this.#timers.has(c.id)) this.#retry(c);
    }
  }

  /** Shutdown: no timer fires any more, none is armed. */
  close(): void {
    this.#closing = true;
    for (const t of this.#timers.values()) t.cancel();
    this.#timers.clear();
  }

  #retry(c: Command): void {
    if (this.#closing) return;
    this.#timers.get(c.id)?.cancel();
    this.#timers.set(
      c.id,
      this.#deps.clock.setTimeout(() => {
        this.#timers.delete(c.id);
        const current = this.#deps.active(c.id);
        if (current && !this.#closing) this.arm(current);
      }, 1000),
    );
  }
}
