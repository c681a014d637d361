/**
 * The digest (contract 13.1): when more than 5 commands start waiting within 10 s, the 6th and later of that
 * window go as one digest at its end, saying how many it covers ("7 more requests from local"). A window
 * opens at the first waiting command after the last one closed; a flood of 500 requests is five messages
 * and one digest per 10 s, not 500 messages.
 */
import type { Clock } from '../base/index.js';

export const DIGEST_WINDOW_MS = 10_000;
/** Waiting commands told one by one in each window; the rest go in its digest. */
export const DIGEST_AFTER = 5;

/** What one digest covers: how many commands per client, and their ids (each command once). */
export interface Held {
  byClient: Map<string, number>;
  ids: string[];
}

interface Window {
  start: number;
  count: number;
  held: Held;
  timer?: { cancel(): void };
}

export class Digest {
  readonly #clock: Clock;
  readonly #flush: (held: Readonly<Held>) => void;
  #window: Window | undefined;
  readonly #timers = new Set<{ cancel(): void }>();

  /** `flush(held)`: send one digest covering these requests. */
  constructor(clock: Clock, flush: (held: Readonly<Held>) => void) {
    this.#clock = clock;
    this.#flush = flush;
  }

  /**
   * The command `id` of `client` started waiting: true to tell it now, false when the window's digest covers
   * it. The notifier admits each command once per start of waiting (contract 13.1 (v4)), so the count is exact.
   */
  admit(client: string, id: string): boolean {
    const now = this.#clock.now();
    let w = this.#window;
    if (w === undefined || now - w.start >= DIGEST_WINDOW_MS) {
      w = { start: now, count: 0, held: { byClient: new Map(), ids: [] } };
      this.#window = w;
    }
    w.count++;
    if (w.count <= DIGEST_AFTER) return true;
    w.held.byClient.set(client, (w.held.byClient.get(client) ?? 0) + 1);
    w.held.ids.push(id);
    if (w.timer === undefined) {
      const win = w;
      const timer = this.#clock.setTimeout(
        () => {
          this.#timers.delete(timer);
          this.#flush(win.held);
        },
        w.start + DIGEST_WINDOW_MS - now,
      );
      w.timer = timer;
      this.#timers.add(timer);
    }
    return false;
  }

  close(): void {
    for (const t of this.#timers) t.cancel();
    this.#timers.clear();
  }
}
