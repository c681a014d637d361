/**
 * When a command's `waiting` message goes out (contract 13.1 (v4)): exactly once per command and channel each
 * time it starts awaiting review — when its preview is ready or failed, or 2 s after it started waiting,
 * whichever is first; at once for a command that gets no preview. Before, every change at version 1 was a
 * `waiting` event, and a preview's two amends keep version 1: three quick requests gave 5 messages and a
 * digest that said "4 more" where 1 more waited (issue 36 item 1).
 *
 * ```
 *  awaiting_review, v1 ─▶ gets a preview? ─no─▶ tell ─▶ told (until it leaves awaiting review)
 *                                   └─yes─▶ held ─▶ preview ready/failed ─▶ tell
 *                                                └─ 2 s ───────────────────▶ tell (with what it has then)
 *  leaves awaiting review ─▶ forgotten (a held one is dropped: it no longer waits)
 * ```
 *
 * A quorum approval keeps a command waiting at a later version: that is no new start. A daemon restarted
 * while commands wait hears no change of them, so it tells nothing again.
 */
import type { Clock } from '../base/index.js';
import type { Command } from '../core/index.js';

/** Contract 13.1 (v4): how long a waiting message waits for its command's preview. */
export const PREVIEW_WAIT_MS = 2_000;

interface Held {
  latest: Command;
  timer: { cancel(): void };
}

export class WaitingNotices {
  readonly #clock: Clock;
  readonly #awaitsPreview: (c: Command) => boolean;
  readonly #tell: (c: Command) => void;
  readonly #held = new Map<string, Held>();
  readonly #told = new Set<string>();

  /** `awaitsPreview(c)`: whether a preview will be made for `c`; `tell(c)`: send its waiting message now. */
  constructor(clock: Clock, awaitsPreview: (c: Command) => boolean, tell: (c: Command) => void) {
    this.#clock = clock;
    this.#awaitsPreview = awaitsPreview;
    this.#tell = tell;
  }

  /** A committed change of a command that awaits review. */
  waiting(c: Command): void {
    if (this.#told.has(c.id)) return;
    const held = this.#held.get(c.id);
    if (held === undefined) {
      // Contract 20: a command back from a changed file starts waiting again (at a later version).
      if (c.version !== 1 && c.rebound_at === undefined) return;
      if (!this.#awaitsPreview(c) || settled(c)) {
        this.#send(c);
        return;
      }
      const timer = this.#clock.setTimeout(() => {
        const h = this.#held.get(c.id);
        if (h !== undefined) this.#send(h.latest);
      }, PREVIEW_WAIT_MS);
      this.#held.set(c.id, { latest: c, timer });
      return;
    }
    held.latest = c;
    if (settled(c)) this.#send(c);
  }

  /** A committed change of a command that no longer awaits review. */
  left(id: string): void {
    this.#held.get(id)?.timer.cancel();
    this.#held.delete(id);
    this.#told.delete(id);
  }

  close(): void {
    for (const h of this.#held.values()) h.timer.cancel();
    this.#held.clear();
    this.#told.clear();
  }

  #send(c: Command): void {
    this.#held.get(c.id)?.timer.cancel();
    this.#held.delete(c.id);
    this.#told.add(c.id);
    this.#tell(c);
  }
}

/** A preview that has said what it will say: ready or failed. */
function settled(c: Command): boolean {
  return c.preview !== undefined && c.preview.status !== 'pending';
}
