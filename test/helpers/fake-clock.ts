/** A fake clock for unit tests: time moves only when the test says so (architecture rule 6). */
import type { Clock } from '../../daemon/base/clock.js';

export class FakeClock implements Clock {
  #now: number;
  #timers: Array<{ at: number; fn: () => void; id: number }> = [];
  #seq = 0;

  constructor(start = Date.parse('2026-11-30T10:00:00.000Z')) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  setTimeout(fn: () => void, ms: number): { cancel(): void } {
    const id = ++this.#seq;
    this.#timers.push({ at: this.#now + Math.max(0, ms), fn, id });
    return { cancel: () => (this.#timers = this.#timers.filter((t) => t.id !== id)) };
  }

  /** Moves time forward, firing due timers in time order. */
  advance(ms: number): void {
    const end = this.#now + ms;
    for (;;) {
      const due = this.#timers.filter((t) => t.at <= end).sort((a, b) => a.at - b.at || a.id - b.id)[0];
      if (!due) break;
      this.#timers = this.#timers.filter((t) => t.id !== due.id);
      this.#now = Math.max(this.#now, due.at);
      due.fn();
    }
    this.#now = end;
  }

  get pending(): number {
    return this.#timers.length;
  }
}
